"""Trains tengen-vision's stone classifier and writes it as ONNX.

The network sees one intersection's rectified, colour-corrected patch (3 x 16 x 16: each
channel over the local wood's, less one; see crates/vision/src/read/) and says empty,
black, white or occluded. Data:

- synthetic patches drawn here (`synth`), in the corrected space directly: wood grain,
  grid lines (edges, corners, star points), stones with shading, glare and the shift of
  their top in a slanted view, neighbouring stones at the patch's rim, hands and sleeves over
  the point, residual colour casts, blur and noise;
- with `--rendered`, patches of the project's renderer (src/render/: 180 random scenes, a
  third with hands), and always real patches from the Gomrade stills, written by
  `cargo run -p tengen-vision --example export_patches -- DATA_DIR --rendered 180`
  (the 12-frame testing sequence is left out, so it stays a held-out test), augmented with
  flips, quarter turns, small gains and noise.

Usage (CPU; a few minutes on two cores):
    pip install torch onnx numpy
    python crates/vision/train/train.py DATA_DIR crates/vision/model/stones.onnx [--rendered]
"""

import math
import sys

import numpy as np
import torch
import torch.nn as nn

SEED = 2311
P = 16            # patch side, pixels
SPAN = 1.6        # cells across a patch
PX = P / SPAN     # pixels per cell
RENDERED = "--rendered" in sys.argv  # add the renderer's patches
N_SYNTH = 48000
EPOCHS = 8
BATCH = 256
EMPTY, BLACK, WHITE, OCCLUDED = 0, 1, 2, 3


def grids():
    c = (np.arange(P) + 0.5 - P / 2) / PX  # cell units, 0 at the intersection
    return np.meshgrid(c, c)  # x (columns), y (rows)


XX, YY = grids()


def blur(img, sigma):
    if sigma < 0.2:
        return img
    r = int(math.ceil(2.5 * sigma))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    out = np.empty_like(img)
    for ch in range(img.shape[0]):
        a = np.pad(img[ch], r, mode="edge")
        a = np.apply_along_axis(lambda v: np.convolve(v, k, mode="valid"), 1, a)
        a = np.apply_along_axis(lambda v: np.convolve(v, k, mode="valid"), 0, a)
        out[ch] = a
    return out


def stone(rng, img, cx, cy, colour, slant):
    """Draws a stone based at (cx, cy) cells whose top shows shifted by `slant` cells."""
    rad = rng.uniform(0.43, 0.5)
    sx, sy = slant
    # The visible body is the union of the base and the shifted top.
    d_top = np.hypot(XX - cx - sx, YY - cy - sy)
    d_base = np.hypot(XX - cx, YY - cy)
    body = np.minimum(d_top, d_base) <= rad
    # Light comes from one side: shading across the top face.
    la = rng.uniform(0, 2 * math.pi)
    shade = ((XX - cx - sx) * math.cos(la) + (YY - cy - sy) * math.sin(la)) / rad
    if colour == BLACK:
        level = rng.uniform(-0.97, -0.7)
        tint = rng.uniform(-0.05, 0.05, 3)
        vals = level + tint[:, None, None] + 0.08 * shade[None]
        glare_amp = rng.uniform(0.3, 1.2) if rng.random() < 0.35 else 0.0
    else:
        level = rng.uniform(0.2, 1.1)
        # Over yellow or brown wood, white gains most in blue and least in red.
        tint = (np.array([-0.05, 0.08, 0.3]) + rng.uniform(-0.15, 0.15, 3)) * (0.3 + level)
        vals = level + tint[:, None, None] + 0.25 * shade[None] * (0.3 + level)
        glare_amp = rng.uniform(0.3, 1.0) if rng.random() < 0.35 else 0.0
    if glare_amp > 0:
        gx, gy = rng.uniform(-0.25, 0.25, 2)
        gr = rng.uniform(0.05, 0.2)
        g = np.exp(-((XX - cx - sx - gx) ** 2 + (YY - cy - sy - gy) ** 2) / (2 * gr * gr))
        vals = vals + glare_amp * g[None]
    # The side wall between base and top is a little darker than the top.
    wall = body & (d_top > rad * 0.97)
    vals = np.where(wall[None], vals - 0.15 * (1 + level), vals)
    # A soft shadow on the wood beside the stone.
    sh = rng.uniform(0.0, 0.25)
    if sh > 0:
        ox, oy = rng.uniform(-0.12, 0.12, 2)
        d_sh = np.hypot(XX - cx - ox, YY - cy - oy)
        ring = (d_sh <= rad * 1.12) & ~body
        img[:, ring] = (img[:, ring] + 1) * (1 - sh) - 1
    img[:, body] = vals[:, body]
    return body


def synth(rng):
    """One synthetic patch and its class."""
    img = np.zeros((3, P, P), np.float32)
    # Wood: grain along a random direction, slow brightness change.
    ang = rng.uniform(0, math.pi)
    u = XX * math.cos(ang) + YY * math.sin(ang)
    grain = rng.uniform(0, 0.1) * np.sin(u * rng.uniform(3, 25) + rng.uniform(0, 6.3))
    grain += rng.uniform(0, 0.05) * np.sin(u * rng.uniform(20, 60) + rng.uniform(0, 6.3))
    img += grain[None]
    img += (rng.uniform(-0.1, 0.1) * XX + rng.uniform(-0.1, 0.1) * YY)[None]
    # Grid lines through the point (rectification leaves a little rotation and offset).
    rot = rng.normal(0, 0.04)
    off = rng.normal(0, 0.04, 2)
    lx = (XX - off[0]) * math.cos(rot) + (YY - off[1]) * math.sin(rot)
    ly = -(XX - off[0]) * math.sin(rot) + (YY - off[1]) * math.cos(rot)
    width = rng.uniform(0.03, 0.1)
    dark = rng.uniform(0.15, 0.6)
    # Edge and corner points: a line stops at the point and the board ends beyond it.
    edge = rng.random()
    h_ext = [-1, 1]
    v_ext = [-1, 1]
    if edge < 0.3:
        side = rng.integers(4)
        (h_ext if side < 2 else v_ext)[side % 2] = 0
        if edge < 0.1:
            side2 = rng.integers(2)
            (v_ext if side < 2 else h_ext)[side2] = 0
    hl = (np.abs(ly) < width) & (lx >= (h_ext[0] * 9)) & (lx <= h_ext[1] * 9)
    vl = (np.abs(lx) < width) & (ly >= (v_ext[0] * 9)) & (ly <= v_ext[1] * 9)
    line = (hl | vl).astype(np.float32)
    if rng.random() < 0.08:  # a star point
        line = np.maximum(line, (np.hypot(lx, ly) < rng.uniform(0.08, 0.14)).astype(np.float32))
    img = (img + 1) * (1 - dark * line[None]) - 1
    # Off the board beyond an edge: the table, or the board's margin.
    if h_ext[0] == 0 or h_ext[1] == 0 or v_ext[0] == 0 or v_ext[1] == 0:
        margin = rng.uniform(0.5, 1.0)
        out = np.zeros_like(XX, bool)
        if h_ext[0] == 0:
            out |= lx < -margin
        if h_ext[1] == 0:
            out |= lx > margin
        if v_ext[0] == 0:
            out |= ly < -margin
        if v_ext[1] == 0:
            out |= ly > margin
        table = rng.uniform(-0.9, 1.0, 3)
        img[:, out] = table[:, None]
    # The slant of this view: where stone tops move (0.4 cell at 45 degrees, more when lower).
    sl_len = rng.uniform(0, 0.6)
    sl_ang = rng.uniform(0, 2 * math.pi)
    slant = (sl_len * math.cos(sl_ang), sl_len * math.sin(sl_ang))
    # The reader centres patches half-way up a stone as it estimates the camera (height.rs):
    # the base sits about half the slant behind the centre, give or take the estimate's error.
    back = rng.uniform(0.25, 0.75) if rng.random() < 0.85 else 0.0
    base = (-slant[0] * back, -slant[1] * back)
    # Neighbouring stones at the patch's rim.
    for dx, dy in [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1), (-1, 1), (1, -1)]:
        if rng.random() < 0.3:
            stone(rng, img, dx + base[0] + rng.normal(0, 0.05), dy + base[1] + rng.normal(0, 0.05),
                  BLACK if rng.random() < 0.5 else WHITE, slant)
    r = rng.random()
    label = EMPTY if r < 0.4 else BLACK if r < 0.62 else WHITE if r < 0.84 else OCCLUDED
    if label in (BLACK, WHITE):
        stone(rng, img, base[0] + rng.normal(0, 0.06), base[1] + rng.normal(0, 0.06), label, slant)
    if label == OCCLUDED or rng.random() < 0.1:
        # A hand, finger or sleeve: a smooth blob with an edge at a random angle; it covers
        # the point when occluded, and only the rim otherwise.
        colour = rng.uniform(-0.8, 1.2, 3)
        if rng.random() < 0.6:  # skin under the board's light
            skin = rng.uniform(-0.3, 0.8)
            colour = np.array([skin + rng.uniform(0.05, 0.3), skin, skin - rng.uniform(0.0, 0.3)])
        ea = rng.uniform(0, 2 * math.pi)
        dist = XX * math.cos(ea) + YY * math.sin(ea)
        if label == OCCLUDED:
            edge_at = rng.uniform(0.25, 1.5)
        else:
            edge_at = -rng.uniform(0.55, 0.8)
        cover = dist < edge_at
        tex = rng.uniform(0, 0.15) * np.sin(XX * rng.uniform(2, 9) + YY * rng.uniform(2, 9))
        shading = colour[:, None, None] + tex[None] + rng.uniform(-0.3, 0.3) * dist[None]
        img = np.where(cover[None], shading, img)
    # Residual cast and level left by the correction; blur; noise.
    gain = rng.uniform(0.85, 1.15) * rng.uniform(0.93, 1.07, 3)
    img = (img + 1) * gain[:, None, None] - 1
    img = blur(img, rng.uniform(0, 1.3) * PX / 15)  # up to 1.3 px at 15 px a cell
    img = img + rng.normal(0, rng.uniform(0.005, 0.06), img.shape)
    return np.clip(img, -1, 3).astype(np.float32), label


def augment_real(rng, x):
    """A real patch flipped, turned, shifted by a pixel, with a small gain and noise."""
    k = rng.integers(4)
    x = np.rot90(x, k, axes=(1, 2))
    if rng.random() < 0.5:
        x = x[:, :, ::-1]
    dx, dy = rng.integers(-1, 2, 2)
    x = np.roll(x, (dy, dx), axis=(1, 2))
    gain = rng.uniform(0.9, 1.1) * rng.uniform(0.95, 1.05, 3)
    x = (x + 1) * gain[:, None, None] - 1
    x = x + rng.normal(0, rng.uniform(0, 0.03), x.shape)
    return np.clip(x, -1, 3).astype(np.float32)


class Net(nn.Module):
    """About 14,000 weights; 0.11 M multiply-adds per patch (strided convolutions instead of
    full-resolution ones and pools: the reader's budget is 15 ms for 361 points)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 12, 4, stride=2, padding=1), nn.ReLU(),   # 8x8
            nn.Conv2d(12, 24, 3, stride=2, padding=1), nn.ReLU(),  # 4x4
            nn.Conv2d(24, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),                                       # 2x2
            nn.Flatten(),
            nn.Linear(32 * 4, 32), nn.ReLU(),
            nn.Linear(32, 4),
        )

    def forward(self, x):
        return self.body(x)


def main():
    data_dir, out_path = [a for a in sys.argv[1:] if not a.startswith("--")][:2]
    rng = np.random.default_rng(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    xs, ys = [], []
    for _ in range(N_SYNTH):
        x, y = synth(rng)
        xs.append(x)
        ys.append(y)
    real_x = np.fromfile(f"{data_dir}/real_patches.f32", dtype="<f4").reshape(-1, 3, P, P)
    real_y = np.fromfile(f"{data_dir}/real_labels.u8", dtype=np.uint8).astype(np.int64)
    # Patches of the project's renderer (export_patches --rendered), used as they are.
    ren_y = []
    if RENDERED:
        ren_x = np.fromfile(f"{data_dir}/rendered_patches.f32", dtype="<f4").reshape(-1, 3, P, P)
        ren_y = np.fromfile(f"{data_dir}/rendered_labels.u8", dtype=np.uint8).astype(np.int64)
        # Not their occluded points: the renderer's hands are skin over skin-coloured wood, so
        # after the wood correction half of them look like bare wood in the middle of the
        # patch (centre within the spread of empty points), and learning "wood-like may be a
        # hand" turns real empty points unseen. The drawn hands above cover that class.
        keep = ren_y != OCCLUDED
        ren_x, ren_y = ren_x[keep], ren_y[keep]
        xs.extend(ren_x)
        ys.extend(int(y) for y in ren_y)
    # Real stones are few; every real stone is used eight times, every empty point twice.
    for x, y in zip(real_x, real_y):
        for _ in range(8 if y != EMPTY else 2):
            xs.append(augment_real(rng, x))
            ys.append(int(y))
    X = torch.from_numpy(np.stack(xs))
    Y = torch.from_numpy(np.array(ys, np.int64))
    print(f"{len(Y)} patches ({N_SYNTH} drawn here, {len(ren_y)} rendered, "
          f"{len(real_y)} real before augmentation)")
    perm = torch.from_numpy(rng.permutation(len(Y)))
    X, Y = X[perm], Y[perm]
    n_val = len(Y) // 20
    Xv, Yv, Xt, Yt = X[:n_val], Y[:n_val], X[n_val:], Y[n_val:]
    net = Net()
    print(sum(p.numel() for p in net.parameters()), "weights")
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = EPOCHS * math.ceil(len(Yt) / BATCH)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    lossf = nn.CrossEntropyLoss()
    for epoch in range(EPOCHS):
        net.train()
        order = torch.randperm(len(Yt))
        total = 0.0
        for i in range(0, len(Yt), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            loss = lossf(net(Xt[idx]), Yt[idx])
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        net.eval()
        with torch.no_grad():
            acc = (net(Xv).argmax(1) == Yv).float().mean().item()
        print(f"epoch {epoch}: loss {total / len(Yt):.4f}, validation accuracy {acc:.4f}")
    net.eval()
    dummy = torch.zeros(1, 3, P, P)
    torch.onnx.export(net, dummy, out_path, input_names=["patches"], output_names=["logits"],
                      dynamic_axes={"patches": {0: "n"}, "logits": {0: "n"}}, opset_version=13,
                      dynamo=False)
    print("written", out_path)


if __name__ == "__main__":
    main()
