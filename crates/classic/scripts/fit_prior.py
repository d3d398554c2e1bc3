#!/usr/bin/env python3
"""Fits the move prior's weights (crates/classic/src/prior.rs) to a network's policy.

Input: JSON lines, one position each, with
  "size", "game" (positions of one game stay on one side of the split),
  "net": the network's policy, row-major from the top-left (kata-raw-nn order),
  "feat": {vertex: [feature numbers]} for every legal move, as the `prior_features`
          example prints them.
The model is a softmax over the legal moves of the sum of the moves' feature weights,
fitted by Adam to the network's policy (cross-entropy, L2 penalty); shapes seen fewer
than --min-count times keep weight 0. Prints held-out cross-entropy and top-1 agreement,
and writes the Rust weight table.

Usage: fit_prior.py DATA.jsonl OUT.rs [--name CONST] [--without FEATURE] [--epochs N]
         [--l2 X] [--min-count N]
The shipped tables: `prior_weights.rs` (all features, for the quick judgement:
`--epochs 300`) and `prior_weights_bare.rs` (no analysis notes, for the evaluator that
skips the analysis: `--name WEIGHTS_BARE --without 65581 --epochs 200`).
"""
import argparse, json, math, zlib
import numpy as np

SHAPES = 1 << 16
COLS = 'ABCDEFGHJKLMNOPQRST'


def index_of(v, size):
    return (size - int(v[1:])) * size + COLS.index(v[0])


def load(path, min_count):
    pos = [json.loads(l) for l in open(path)]
    counts = {}
    for p in pos:
        for f in p['feat'].values():
            for i in f:
                counts[i] = counts.get(i, 0) + 1
    kept = sorted(i for i, c in counts.items() if c >= min_count or i >= SHAPES)
    col = {i: k + 1 for k, i in enumerate(kept)}  # column 0: unused padding
    return pos, kept, col


def arrays(pos, col, kmax=16):
    idx, tgt, seg = [], [], [0]
    for p in pos:
        size = p['size']
        moves = list(p['feat'].items())
        t = np.array([max(p['net'][index_of(v, size)], 0.0) for v, _ in moves])
        if t.sum() <= 0:
            continue
        t /= t.sum()
        for (_, f), tv in zip(moves, t):
            row = [col.get(i, 0) for i in f][:kmax]
            idx.append(row + [0] * (kmax - len(row)))
        tgt.extend(t)
        seg.append(seg[-1] + len(moves))
    return np.array(idx, dtype=np.int64), np.array(tgt), np.array(seg)


def forward(w, idx, seg):
    logit = w[idx].sum(1)
    starts = seg[:-1]
    mx = np.maximum.reduceat(logit, starts)
    e = np.exp(logit - np.repeat(mx, np.diff(seg)))
    z = np.add.reduceat(e, starts)
    p = e / np.repeat(z, np.diff(seg))
    return p


def evaluate(w, idx, tgt, seg):
    p = forward(w, idx, seg)
    ce = -(tgt * np.log(np.maximum(p, 1e-9))).sum() / (len(seg) - 1)
    top = 0
    for a, b in zip(seg[:-1], seg[1:]):
        top += np.argmax(p[a:b]) == np.argmax(tgt[a:b])
    return ce, top / (len(seg) - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('data')
    ap.add_argument('out')
    ap.add_argument('--epochs', type=int, default=400)
    ap.add_argument('--l2', type=float, default=1e-4)
    ap.add_argument('--min-count', type=int, default=8)
    ap.add_argument('--lr', type=float, default=0.05)
    ap.add_argument('--name', default='WEIGHTS', help='name of the Rust constant')
    ap.add_argument('--without', type=int, nargs='*', default=[],
                    help='feature numbers (and everything above the first) to leave out')
    a = ap.parse_args()
    pos, kept, col = load(a.data, a.min_count)
    if a.without:
        cut = min(a.without)
        kept = [i for i in kept if i < cut]
        col = {i: k + 1 for k, i in enumerate(kept)}
    held = [p for p in pos if zlib.crc32(p['game'].encode()) % 5 == 0]
    train = [p for p in pos if zlib.crc32(p['game'].encode()) % 5 != 0]
    ti, tt, ts = arrays(train, col)
    vi, vt, vs = arrays(held, col)
    n = len(kept) + 1
    w = np.zeros(n)
    m = np.zeros(n); v = np.zeros(n)
    npos = len(ts) - 1
    print(f'positions: {npos} to fit, {len(vs) - 1} held out; features {len(kept)} '
          f'({sum(1 for i in kept if i < SHAPES)} shapes)')
    ce0, top0 = evaluate(w, vi, vt, vs)
    print(f'uniform: held-out cross-entropy {ce0:.3f}, top-1 {top0:.3f}')
    for ep in range(a.epochs):
        p = forward(w, ti, ts)
        g_move = (p - tt) / npos
        g = np.bincount(ti.ravel(), weights=np.repeat(g_move, ti.shape[1]), minlength=n)
        g += 2 * a.l2 * w
        g[0] = 0
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        mh = m / (1 - 0.9 ** (ep + 1)); vh = v / (1 - 0.999 ** (ep + 1))
        w -= a.lr * mh / (np.sqrt(vh) + 1e-8)
        if ep % 100 == 99 or ep == a.epochs - 1:
            ce, top = evaluate(w, vi, vt, vs)
            tce, ttop = evaluate(w, ti, tt, ts)
            print(f'epoch {ep + 1}: fitted {tce:.3f} / {ttop:.3f}, held-out cross-entropy {ce:.3f}, top-1 {top:.3f}')
    with open(a.out, 'w') as f:
        f.write('//! Weights of the move prior\'s features, fitted by `scripts/fit_prior.py` (generated).\n')
        f.write('// Fitted numbers, not approximations of constants.\n')
        f.write('#![allow(clippy::approx_constant)]\n\n')
        f.write('/// (feature number, weight) pairs; see [`crate::prior`] for the numbering.\n')
        f.write('#[rustfmt::skip]\n')
        f.write(f'pub const {a.name}: &[(u32, f32)] = &[\n')
        for i in kept:
            x = w[col[i]]
            if abs(x) >= 1e-3:
                f.write(f'    ({i}, {x:.3f}),\n')
        f.write('];\n')


if __name__ == '__main__':
    main()
