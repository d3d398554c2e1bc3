#!/usr/bin/env python3
"""Records KataGo's raw network outputs (`kata-raw-nn 0 0`) for a network on the positions of
the shared golden file, as Tengen's golden tests read them.

    python3 tests/katago/record_rawnn.py --katago BIN --model NET.bin.gz --out OUT.jsonl \
        [--positions ../shared/golden/katago-rawnn-g170-b6c96.jsonl] [--human-profile rank_5k] \
        [--config gtp_example.cfg]

Each position's `gtpCommands` are replayed in one `katago gtp` process (one search thread,
symmetry 0, policy optimism 0, so the outputs are deterministic); the last command is replaced
by `kata-raw-nn 0 0`. Each output line is `{"id", "model", "humanSLProfile"?, "output"}` with
the fields KataGo printed, parsed as the shared golden README describes (`null` for an illegal
move's policy). The positions themselves stay in the shared file, joined by `id`.
`--human-profile` sets KataGo's `humanSLProfile` for a net with an SGF-metadata encoder.
"""

import argparse
import json
import os
import sys
import tempfile

from gtp_client import Gtp

# On top of KataGo's stock gtp_example.cfg, as the shared golden files were recorded.
OVERRIDES = "numSearchThreads=1,logToStderr=false"


def is_grid_row(words):
    """A row of a printed grid: numbers, `NAN` for an illegal move."""
    try:
        return all(w == "NAN" or float(w) == float(w) for w in words)
    except ValueError:
        return False


def parse_raw(lines):
    out = {}
    i = 0
    while i < len(lines):
        words = lines[i].split()
        if not words:
            i += 1
            continue
        key = words[0]
        if key in ("policy", "whiteOwnership"):
            grid = []
            i += 1
            while i < len(lines) and lines[i].split() and is_grid_row(lines[i].split()):
                grid.extend(None if w == "NAN" else float(w) for w in lines[i].split())
                i += 1
            out[key] = grid
            continue
        if key == "policyPass":
            out[key] = None if words[1] == "NAN" else float(words[1])
        else:
            out[key] = int(words[1]) if key == "symmetry" else float(words[1])
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--positions", default=os.path.join(
        os.environ.get("TENGEN_SHARED", "../shared"), "golden", "katago-rawnn-g170-b6c96.jsonl"))
    ap.add_argument("--config", default=os.path.join(
        os.environ.get("KATAGO_CACHE", os.path.expanduser("~/.cache/tengen/katago")),
        "src-v1.17.2", "cpp", "configs", "gtp_example.cfg"),
        help="KataGo's stock gtp_example.cfg (kept by build_katago.sh)")
    ap.add_argument("--human-profile")
    args = ap.parse_args()

    overrides = OVERRIDES
    if args.human_profile:
        overrides += f",humanSLProfile={args.human_profile}"
    logs = tempfile.TemporaryDirectory()  # the stock config logs to gtp_logs/ here
    gtp = Gtp([args.katago, "gtp", "-model", os.path.abspath(args.model), "-config",
               os.path.abspath(args.config), "-override-config", overrides], cwd=logs.name)
    name = os.path.basename(args.model)
    count = 0
    with open(args.positions) as src, open(args.out, "w") as dst:
        for line in src:
            record = json.loads(line)
            for command in record["gtpCommands"][:-1]:
                gtp.lines(command)
            output = parse_raw(gtp.lines("kata-raw-nn 0 0"))
            row = {"id": record["id"], "model": name}
            if args.human_profile:
                row["humanSLProfile"] = args.human_profile
            row["output"] = output
            dst.write(json.dumps(row, separators=(",", ":")) + "\n")
            count += 1
    gtp.close()
    print(f"{args.out}: {count} positions", file=sys.stderr)


if __name__ == "__main__":
    main()
