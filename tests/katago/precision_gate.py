#!/usr/bin/env python3
"""The reduced-precision gate on positions of real play: a network's int16 outputs against
its fp32 ones, both from `tengen gtp --backend native` (`kata-raw-nn 0`).

    python3 tests/katago/precision_gate.py --tengen target/release/tengen \
        --model ../shared/models/b10c384h6nbttflrs.bin.gz [--games 16] [--every 4]

Games: the bundled g170-b6c96 plays itself at `--play-visits` visits a move from a random
4-move opening (seeded), 19x19, komi 7, until both pass or `--max-moves`. Every `--every`-th
position of each game is evaluated by `--model` at both precisions. Reported: positions,
how often the first policy move agrees, how often int16's first move is within
`--tie` of fp32's best in fp32's own policy (a near tie that swaps is no failure), and the
value (win minus loss) and lead changes. The gate (exit status 1 when missed): first move
within the tie on >= 99% of positions, every value change <= 0.02.
"""

import argparse
import random
import sys

from gtp_client import Gtp

COLS = "ABCDEFGHJKLMNOPQRST"


def raw_nn(engine):
    """Value (White's win minus loss), lead and the policy over points then pass."""
    out, policy, mode = {}, [], None
    for line in engine.lines("kata-raw-nn 0"):
        words = line.split()
        if words[0] in ("policy", "whiteOwnership"):
            mode = words[0]
            continue
        if words[0] == "policyPass":
            policy.append(float(words[1]))
            mode = None
            continue
        if mode == "policy":
            policy.extend(-1.0 if w == "NAN" else float(w) for w in words)
        elif mode is None and len(words) == 2:
            out[words[0]] = float(words[1])
    return out["whiteWin"] - out["whiteLoss"], out["whiteLead"], policy


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tengen", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--games", type=int, default=16)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--play-visits", type=int, default=8)
    ap.add_argument("--max-moves", type=int, default=300)
    ap.add_argument("--tie", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    player = Gtp([args.tengen, "gtp", "--visits", str(args.play_visits)])
    common = [args.tengen, "gtp", "--backend", "native", "--model", args.model]
    fp32 = Gtp(common + ["--precision", "fp32"])
    int16 = Gtp(common + ["--precision", "int16"])
    engines = (player, fp32, int16)

    n = same = near = 0
    dvs, dleads = [], []
    for game in range(args.games):
        for e in engines:
            for c in ("boardsize 19", "clear_board", "komi 7"):
                e.lines(c)
        taken, passes, colour = set(), 0, "B"
        for move_no in range(args.max_moves):
            if move_no < 4:
                while True:
                    x, y = rng.randrange(2, 17), rng.randrange(2, 17)
                    if (x, y) not in taken:
                        break
                taken.add((x, y))
                move = f"{COLS[x]}{y + 1}"
            else:
                move = player.ask(f"genmove {colour}")
            if move.lower() == "resign":
                break
            for e in (fp32, int16) if move_no >= 4 else engines:
                e.lines(f"play {colour} {move}")
            passes = passes + 1 if move.lower() == "pass" else 0
            colour = "W" if colour == "B" else "B"
            if passes >= 2:
                break
            if move_no % args.every != args.every - 1:
                continue
            va, la, pa = raw_nn(fp32)
            vb, lb, pb = raw_nn(int16)
            best_a = max(range(len(pa)), key=lambda i: pa[i])
            best_b = max(range(len(pb)), key=lambda i: pb[i])
            n += 1
            same += best_a == best_b
            near += pa[best_a] - pa[best_b] <= args.tie
            dvs.append(abs(va - vb))
            dleads.append(abs(la - lb))
        print(f"game {game + 1}: {move_no + 1} moves, {n} positions so far", file=sys.stderr)
    for e in engines:
        e.close()
    dvs.sort()
    print(f"positions {n}: first move agrees {same} ({100.0 * same / n:.1f}%), within {args.tie} "
          f"of fp32's best {near} ({100.0 * near / n:.1f}%); |value change| mean "
          f"{sum(dvs) / n:.4f}, median {dvs[n // 2]:.4f}, max {dvs[-1]:.4f}, over 0.02: "
          f"{sum(d > 0.02 for d in dvs)}; |lead change| max {max(dleads):.3f} points")
    ok = near >= 0.99 * n and dvs[-1] <= 0.02
    print("gate (99% within the tie, value <= 0.02):", "holds" if ok else "does not hold")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
