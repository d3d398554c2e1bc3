#!/usr/bin/env python3
"""Makes seeded random-weight KataGo networks of every architecture family with KataGo's own
PyTorch model code and exporter (its `python/`, MIT), for Tengen's golden and benchmark tests.

    python3 tests/katago/make_test_nets.py --katago-python DIR --out DIR [--full] [NAME ...]

DIR is KataGo's `python/` folder (v1.17.2). Needs PyTorch (the CPU wheel will do) and numpy.
Each net is built from a `modelconfigs.py` architecture, initialised as KataGo initialises it,
then every weight is perturbed with a seeded Gaussian scaled by its fan-in (fixup
initialisation zeroes the last layer of each block, which would leave a net that ignores its
trunk) and normalisation statistics are drawn too; the exporter then writes the `.bin`, which
is gzipped. The same seed gives the same file.

The small nets (`SMALL`) are committed under crates/nn/tests/nets with their KataGo outputs;
the full-size ones (`FULL`, with `--full`) are for benchmarks only and stay out of the
repository.
"""

import argparse
import copy
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

# name -> (KataGo base config, changes, seed). Channel counts are small so the files stay small
# while every layer kind of the family is present.
# The heads of the small nets.
HEADS = {
    "p1_num_channels": 16, "g1_num_channels": 16, "v1_num_channels": 16,
    "sbv2_num_channels": 24, "num_scorebeliefs": 4, "v2_size": 32,
}

SMALL = {
    # Plain residual net with a global-pooling block (as g170's, in today's format).
    "t-b3c32-v15": ("b4c32", {"block_kind": [["rconv1", "regular"], ["rconv2", "regulargpool"], ["rconv3", "regular"]]}, 1),
    # Nested bottleneck (b18c384nbt's blocks), batch norm with running statistics and gamma.
    "t-b3c48nbt-bng": ("b5c192nbt", {
        "trunk_num_channels": 48, "mid_num_channels": 24, "gpool_num_channels": 8,
        "block_kind": [["rconv1", "bottlenest2"], ["rconv2", "bottlenest2gpool"], ["rconv3", "bottlenest2"]],
        **HEADS,
        "norm_kind": "bnorm", "bnorm_use_gamma": True, "activation": "mish",
    }, 2),
    # Nested bottleneck, fixup normalisation, SiLU (as the published b18c384nbt / b28c512nbt).
    "t-b2c64nbt-fixup": ("b5c192nbt", {
        "trunk_num_channels": 64, "mid_num_channels": 32, "gpool_num_channels": 16,
        "block_kind": [["rconv1", "bottlenest2gpool"], ["rconv2", "bottlenest2"]],
        **HEADS,
        "activation": "silu",
    }, 3),
    # Human-SL: a nested-bottleneck net with the SGF-metadata encoder (as b18c384nbt-humanv0).
    "t-b2c48nbt-meta": ("b5c192nbt", {
        "trunk_num_channels": 48, "mid_num_channels": 24, "gpool_num_channels": 8,
        "block_kind": [["rconv1", "bottlenest2gpool"], ["rconv2", "bottlenest2"]],
        **HEADS,
        "metadata_encoder": {"meta_encoder_version": 1, "internal_num_channels": 48}, "activation": "silu",
    }, 4),
    # Transformer inside nested bottlenecks, learnable RoPE, SwiGLU, RMS-norm tip (as
    # b10c384h6nbttflrs, KaTrain's default).
    "t-b2c64h4nbttflrs": ("b10c384h6nbttflrs", {
        "trunk_num_channels": 64, "mid_num_channels": 32, "gpool_num_channels": 16,
        "transformer_ffn_channels": 48, "transformer_heads": 4, "transformer_kv_heads": 4,
        "block_kind": [["block1", "bottlenest2transformerropesg"], ["block2", "bottlenest2transformerropesg"]],
        **HEADS,
        "trunk_final_rmsnorm": True, "trunk_rmsnorm_spatial": True, "activation": "silu",
    }, 5),
}

# Full-size shapes of the published nets, for benchmarks (not committed).
FULL = {
    "b18c384nbt-random": ("b18c384nbt", {"activation": "silu"}, 11),
    "b28c512nbt-random": ("b28c512nbt", {"activation": "silu"}, 12),
    "b18c384nbt-humanv0-random": ("b18c384nbt", {
        "activation": "silu",
        "metadata_encoder": {"meta_encoder_version": 1, "internal_num_channels": 384},
    }, 13),
    "b10c384h6nbttflrs-random": ("b10c384h6nbttflrs", {
        "trunk_final_rmsnorm": True, "trunk_rmsnorm_spatial": True, "activation": "silu",
    }, 14),
}


def perturb(model, torch, seed):
    """Seeded noise on every weight, scaled so activations neither vanish nor explode."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if p.dim() >= 2:
                fan_in = p[0].numel()
                p.copy_(p * 0.5 + noise * (0.8 / fan_in ** 0.5))
            elif "gamma" in name or "weight" in name and "norm" in name:
                p.copy_(1.0 + 0.2 * noise)
            else:
                p.add_(0.1 * noise)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.2 * torch.randn(b.shape, generator=gen))
            elif name.endswith("running_var"):
                b.copy_(0.6 + 0.8 * torch.rand(b.shape, generator=gen))


def make(katago_python, out_dir, name, base, changes, seed):
    sys.path.insert(0, katago_python)
    import torch
    from katago.train import modelconfigs
    from katago.train.model_pytorch import Model

    torch.manual_seed(seed)
    config = copy.deepcopy(modelconfigs.config_of_name[base])
    config.update(copy.deepcopy(changes))
    model = Model(config, pos_len=19)
    model.initialize()
    perturb(model, torch, seed)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "model.ckpt")
        torch.save({"config": config, "model": model.state_dict()}, ckpt)
        export = os.path.join(tmp, "export")
        subprocess.run(
            [sys.executable, os.path.join(katago_python, "export_model_pytorch.py"),
             "-checkpoint", ckpt, "-export-dir", export, "-model-name", name,
             "-filename-prefix", name, "-ignore-attn-logit-bound"],
            check=True, cwd=katago_python, stdout=subprocess.DEVNULL,
        )
        target = os.path.join(out_dir, name + ".bin.gz")
        with open(os.path.join(export, name + ".bin"), "rb") as src, \
                gzip.GzipFile(target, "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    print(target)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago-python", required=True, help="KataGo's python/ folder")
    ap.add_argument("--out", required=True, help="folder for the .bin.gz files")
    ap.add_argument("--full", action="store_true", help="make the full-size benchmark nets")
    ap.add_argument("names", nargs="*", help="only these nets")
    args = ap.parse_args()
    table = FULL if args.full else SMALL
    os.makedirs(args.out, exist_ok=True)
    for name, (base, changes, seed) in table.items():
        if args.names and name not in args.names:
            continue
        make(os.path.abspath(args.katago_python), args.out, name, base, changes, seed)


if __name__ == "__main__":
    main()
