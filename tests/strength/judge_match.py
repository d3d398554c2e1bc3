#!/usr/bin/env python3
"""Judge every move of a `tengen match --sgf-dir DIR` run with `tengen analysis`.

For each side (A is Black in even-numbered games, as `tengen match` plays them) it prints
the judged loss per move (the drop in the mover's expected score lead across its move,
signed, and clipped at 0), the spread over games of each side's summed loss, and how
often the side with the smaller summed loss won. The first four moves (the match's
random opening) are not counted.

Usage: judge_match.py DIR [--visits N] [--tengen PATH]
"""
import argparse
import glob
import json
import re
import statistics
import subprocess

COLUMNS = "ABCDEFGHJKLMNOPQRST"
OPENING_MOVES = 4


def read_game(path):
    """(index, size, result, [[colour, vertex], ...]) of one SGF file, or None."""
    text = open(path).read()
    result = re.search(r"RE\[([^\]]*)\]", text)
    if not result:
        return None
    size = int(re.search(r"SZ\[(\d+)\]", text).group(1))
    moves = []
    for colour, point in re.findall(r";([BW])\[([a-s]{0,2})\]", text):
        if point in ("", "tt"):
            moves.append([colour, "pass"])
        else:
            x, y = ord(point[0]) - 97, ord(point[1]) - 97
            moves.append([colour, f"{COLUMNS[x]}{size - y}"])
    index = int(re.search(r"game-(\d+)", path).group(1))
    return index, size, result.group(1), moves


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--visits", type=int, default=64)
    ap.add_argument("--tengen", default="tengen")
    args = ap.parse_args()
    games = [g for g in map(read_game, sorted(glob.glob(args.dir + "/game-*.sgf"))) if g]
    engine = subprocess.Popen(
        [args.tengen, "analysis", "--max-visits", str(args.visits)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for index, size, _, moves in games:
        query = dict(id=str(index), moves=moves, rules="chinese", komi=7, boardXSize=size,
                     boardYSize=size, analyzeTurns=list(range(len(moves) + 1)),
                     maxVisits=args.visits)
        engine.stdin.write(json.dumps(query) + "\n")
    engine.stdin.close()
    leads = {}  # id -> turn -> Black's lead
    for line in engine.stdout:
        reply = json.loads(line)
        if "rootInfo" in reply:
            leads.setdefault(reply["id"], {})[reply["turnNumber"]] = reply["rootInfo"]["scoreLead"]
    rows = []
    for index, _, result, moves in games:
        lead = leads.get(str(index), {})
        a_is_black = index % 2 == 0
        signed = {"A": [], "B": []}
        for turn, (colour, _) in enumerate(moves):
            if turn < OPENING_MOVES or turn not in lead or turn + 1 not in lead:
                continue
            loss = (lead[turn] - lead[turn + 1]) * (1 if colour == "B" else -1)
            signed["A" if (colour == "B") == a_is_black else "B"].append(loss)
        winner = "D" if result[:1] not in ("B", "W") else (
            "A" if (result[0] == "B") == a_is_black else "B")
        rows.append((winner, signed))
    for side in "AB":
        losses = [x for _, s in rows for x in s[side]]
        sums = [sum(s[side]) for _, s in rows]
        clipped = sum(max(0.0, x) for x in losses) / max(1, len(losses))
        print(f"{side}: judged loss a move {statistics.fmean(losses):.2f} (clipped at 0: "
              f"{clipped:.2f}); a game's sum {statistics.fmean(sums):.1f}, "
              f"sd {statistics.pstdev(sums):.1f}")
    edges = [sum(s["B"]) - sum(s["A"]) for _, s in rows]
    agree = sum(1 for (w, _), e in zip(rows, edges) if (e > 0) == (w == "A"))
    print(f"A's edge a game (B's sum less A's): mean {statistics.fmean(edges):.1f}, "
          f"sd {statistics.pstdev(edges):.1f}; the side with the smaller sum won "
          f"{agree}/{len(rows)}")


if __name__ == "__main__":
    main()
