#!/usr/bin/env python3
"""Per-move strength at equal visits, without playing games.

Both engines (GTP, each as it plays in side_by_side.sh --match) choose a move in the same
positions, taken from finished games' SGF files; where they disagree, a judge (KataGo's or
Tengen's analysis engine, many more visits) evaluates the position after each choice. The
mean difference in the judge's win rate and score for the mover, with its standard error,
says which search picks better moves: a far smaller sample than a match resolves a few
points of win rate, and a change to one engine is measured on the same positions.

Usage: move_quality.py --a CMD --b CMD --judge CMD --sgf-dir DIR [--every 7] [--limit 300]
       [--judge-visits 1000] [--cache FILE] [--label-a Tengen --label-b KataGo] [--reuse]
With --reuse each engine follows every game move by move and searches (`kata-search`, which
plays nothing) at each of one colour's turns, as it would in a game, so that each search
starts from the tree its last one left; the positions compared are every Nth of those turns.
The judge command runs an analysis engine (`katago analysis -config F -model M` or
`tengen analysis ...`); its values are cached by position and move (--cache), so runs of
several variants of one engine against the same positions judge each move once.
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys

from gtp_client import Gtp

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def sgf_moves(text):
    """Board size, komi and the (colour, GTP move) list of one SGF game."""
    size = int((re.search(r"SZ\[(\d+)\]", text) or [None, 19])[1])
    komi = float((re.search(r"KM\[([-0-9.]+)\]", text) or [None, 7.5])[1])
    moves = []
    for colour, coord in re.findall(r";([BW])\[([a-z]{0,2})\]", text):
        if coord in ("", "tt") and size <= 19:
            moves.append((colour, "pass"))
        else:
            x, y = ord(coord[0]) - 97, ord(coord[1]) - 97
            moves.append((colour, f"{LETTERS[x]}{size - y}"))
    return size, komi, moves


def to_move(moves):
    """The colour to play after `moves` (no handicap stones in these games)."""
    return "W" if moves and moves[-1][0] == "B" else "B"


def games(sgf_dir, limit=None):
    """Each SGF game of the folder, in name order: its name, size, komi, moves, and where
    its last passes begin (positions before them are the ones where a move matters)."""
    names = sorted(n for n in os.listdir(sgf_dir) if n.endswith(".sgf"))[:limit]
    for name in names:
        with open(os.path.join(sgf_dir, name)) as f:
            size, komi, moves = sgf_moves(f.read())
        end = len(moves)
        while end and moves[end - 1][1] == "pass":
            end -= 1
        yield name, size, komi, moves, end


class Engine(Gtp):
    """An engine of the comparison."""

    def __init__(self, cmd):
        super().__init__(shlex.split(cmd))

    def new_game(self, size, komi):
        self.ask(f"boardsize {size}")
        self.ask("clear_board")
        self.ask(f"komi {komi}")

    def choose(self, size, komi, moves):
        """The move chosen after `moves`, from a fresh tree."""
        self.new_game(size, komi)
        for colour, move in moves:
            self.ask(f"play {colour} {move}")
        return self.ask(f"genmove {to_move(moves)}").upper()

    def follow(self, size, komi, moves, colour, wanted):
        """Searches at each of `colour`'s turns of a game, the tree kept from one to the
        next; returns the moves chosen at the turns in `wanted`."""
        self.new_game(size, komi)
        chosen = {}
        last = max(wanted)
        for turn, (c, move) in enumerate(moves[:last + 1]):
            if c == colour:
                choice = self.ask(f"kata-search {c}").upper()
                if turn in wanted:
                    chosen[turn] = choice
            if turn < last:
                self.ask(f"play {c} {move}")
        return chosen

    def close(self):
        try:
            self.ask("quit")
        except (RuntimeError, BrokenPipeError):
            pass
        self.proc.wait(timeout=30)


class Judge:
    """An analysis engine (KataGo's JSON protocol) valuing the position after a move."""

    def __init__(self, cmd, visits, cache_path):
        self.proc = subprocess.Popen(
            shlex.split(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        self.visits = visits
        self.cache_path = cache_path
        self.cache = {}
        if cache_path and os.path.exists(cache_path):
            with open(cache_path) as f:
                for line in f:
                    entry = json.loads(line)
                    self.cache[entry["key"]] = (entry["winrate"], entry["lead"])
        self.n = 0

    def value(self, size, komi, moves, move):
        """The mover's win rate and score lead after `move`, by the judge."""
        history = [[c, m] for c, m in moves]
        mover = to_move(moves)
        key = f"{size}|{komi}|{' '.join(m for _, m in history)}|{mover} {move}|{self.visits}"
        if key in self.cache:
            return self.cache[key]
        self.n += 1
        query = {
            "id": str(self.n), "moves": history + [[mover, move]], "rules": "chinese",
            "komi": komi, "boardXSize": size, "boardYSize": size, "maxVisits": self.visits,
            "analyzeTurns": [len(history) + 1],
            "overrideSettings": {"reportAnalysisWinratesAs": "SIDETOMOVE"},
        }
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the judge ended")
            reply = json.loads(line)
            if reply.get("id") == str(self.n) and "rootInfo" in reply:
                break
            if "error" in reply:
                raise RuntimeError(f"judge: {reply}")
        root = reply["rootInfo"]
        # The judge reports for the side to move after `move`, the mover's opponent.
        result = (1.0 - root["winrate"], -root["scoreLead"])
        self.cache[key] = result
        if self.cache_path:
            with open(self.cache_path, "a") as f:
                f.write(json.dumps({"key": key, "winrate": result[0], "lead": result[1]}) + "\n")
        return result

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def mean_se(xs):
    if not xs:
        return 0.0, 0.0
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def fresh(a, b, args):
    """Both engines' choices, each from a fresh tree, at every Nth position of the games,
    at most --limit positions spread over all of them."""
    positions = []
    for name, size, komi, moves, end in games(args.sgf_dir):
        for n in range(args.first, max(args.first, end - 10), args.every):
            positions.append((name, size, komi, moves[:n]))
    if len(positions) > args.limit:
        step = len(positions) / args.limit
        positions = [positions[int(i * step)] for i in range(args.limit)]
    for name, size, komi, moves in positions:
        yield name, size, komi, moves, a.choose(size, komi, moves), b.choose(size, komi, moves)


def followed(a, b, args):
    """Both engines' choices at every Nth turn of one colour of each game, each engine
    following the game with its tree reused; the colour alternates from game to game."""
    for g, (name, size, komi, moves, end) in enumerate(games(args.sgf_dir, args.games)):
        colour = "BW"[g % 2]
        turns = [t for t in range(args.first, max(args.first, end - 10))
                 if moves[t][0] == colour]
        wanted = set(turns[::args.every])
        if not wanted:
            continue
        ca = a.follow(size, komi, moves, colour, wanted)
        cb = b.follow(size, komi, moves, colour, wanted)
        print(f"{name}: followed {len(wanted)} turns", file=sys.stderr, flush=True)
        for t in sorted(wanted):
            yield name, size, komi, moves[:t], ca[t], cb[t]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="engine A's GTP command")
    ap.add_argument("--b", required=True, help="engine B's GTP command")
    ap.add_argument("--judge", required=True, help="the judge's analysis command")
    ap.add_argument("--sgf-dir", required=True)
    ap.add_argument("--every", type=int, default=7, help="one position every N moves")
    ap.add_argument("--first", type=int, default=8, help="skip the opening's moves")
    ap.add_argument("--limit", type=int, default=300, help="positions at most")
    ap.add_argument("--judge-visits", type=int, default=1000)
    ap.add_argument("--cache", help="judge values, one JSON line each")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--out", help="per-position lines (TSV)")
    ap.add_argument("--reuse", action="store_true",
                    help="follow each game, the tree reused from turn to turn")
    ap.add_argument("--games", type=int, default=1000, help="games at most (--reuse)")
    args = ap.parse_args()

    a, b = Engine(args.a), Engine(args.b)
    # Lazily: each position (or game, with --reuse) is judged as soon as it is chosen.
    positions = followed(a, b, args) if args.reuse else fresh(a, b, args)
    judge = Judge(args.judge, args.judge_visits, args.cache)
    out = open(args.out, "w") if args.out else None
    dw, dl, same = [], [], 0
    better = worse = 0
    try:
        for i, (name, size, komi, moves, ma, mb) in enumerate(positions):
            if ma == mb or "RESIGN" in (ma, mb):
                same += 1
                line = f"{name}\t{len(moves)}\t{ma}\t{mb}\t0\t0"
            else:
                wa, la = judge.value(size, komi, moves, ma)
                wb, lb = judge.value(size, komi, moves, mb)
                dw.append(wa - wb)
                dl.append(la - lb)
                better += wa > wb
                worse += wa < wb
                line = f"{name}\t{len(moves)}\t{ma}\t{mb}\t{wa - wb:+.4f}\t{la - lb:+.2f}"
            if out:
                out.write(line + "\n")
                out.flush()
            if (i + 1) % 25 == 0:
                m, se = mean_se(dw)
                print(f"{i + 1}: {len(dw)} disagreements, "
                      f"{args.label_a} - {args.label_b} win rate {m:+.4f} ± {se:.4f}",
                      file=sys.stderr, flush=True)
    finally:
        a.close()
        b.close()
        judge.close()
    n = same + len(dw)
    mw, sw = mean_se(dw)
    ml, sl = mean_se(dl)
    # Over all positions, agreeing ones count as zero difference.
    aw = sum(dw) / n if n else 0.0
    print(f"positions {n}, same move {same}, different {len(dw)} "
          f"({args.label_a} better {better}, worse {worse})")
    print(f"where they differ, {args.label_a} - {args.label_b}: win rate {mw:+.4f} ± {sw:.4f}, "
          f"score {ml:+.2f} ± {sl:.2f} (judge {args.judge_visits} visits)")
    print(f"per position: win rate {aw:+.4f}")


if __name__ == "__main__":
    main()
