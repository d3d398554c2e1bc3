#!/usr/bin/env python3
"""How well the classical engine's quick judgement (what the search sees without a
network) agrees with a network's, on positions sampled from SGF games.

Both are asked with `kata-raw-nn 0`: `tengen gtp --model NET` for the network, and
`tengen gtp ARGS...` (no model: the classical evaluator) for the classical side, so any
playout settings can be compared (`--playouts 0` is the static analysis alone).
Prints: stones the network calls settled and what the classical side calls them, the
score and win-side agreement, and the policy's cross-entropy against the network's.

Usage: judge_vs_net.py --tengen BIN --model NET [--args "--playouts 0"] GAME.sgf...
"""
import argparse, math, random, shlex, subprocess

from prior_data import COLS, sgf_moves


def raw_nn(cmd, size, positions):
    lines = [f'boardsize {size}']
    for i, p in enumerate(positions):
        lines += ['clear_board', 'komi 7'] + [f'play {c} {v}' for c, v in p] + [f'{i + 1} kata-raw-nn 0']
    lines.append('quit')
    r = subprocess.run(cmd, input='\n'.join(lines) + '\n', capture_output=True, text=True, check=True)
    out = [None] * len(positions)
    for block in r.stdout.split('\n\n'):
        rows = block.strip().split('\n')
        head = rows[0].split()
        if not head or not head[0].startswith('=') or len(head[0]) < 2:
            continue
        d, key = {}, None
        for ln in rows[1:]:
            t = ln.split()
            if not t:
                continue
            if t[0] in ('policy', 'whiteOwnership'):
                key = t[0]
                d[key] = []
            elif len(t) == 2 and not t[0][0].isdigit() and t[0] != 'NAN':
                key = None
                d[t[0]] = float(t[1])
            elif key:
                d[key] += [float('nan') if x.upper() == 'NAN' else float(x) for x in t]
        out[int(head[0][1:]) - 1] = d
    return out


def stones(size, moves):
    b = {}
    nb = lambda x, y: [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                       if 0 <= x + dx < size and 0 <= y + dy < size]

    def group(p):
        c, s, st, libs = b[p], {p}, [p], set()
        while st:
            for n in nb(*st.pop()):
                if n not in b:
                    libs.add(n)
                elif b[n] == c and n not in s:
                    s.add(n)
                    st.append(n)
        return s, libs
    for c, v in moves:
        if v == 'pass':
            continue
        p = (COLS.index(v[0]), size - int(v[1:]))
        b[p] = c
        for n in nb(*p):
            if n in b and b[n] != c:
                s, libs = group(n)
                if not libs:
                    for q in s:
                        del b[q]
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tengen', required=True)
    ap.add_argument('--model', required=True)
    ap.add_argument('--args', default='--playouts 0')
    ap.add_argument('--size', type=int, default=9)
    ap.add_argument('--step', type=int, default=7)
    ap.add_argument('games', nargs='+')
    a = ap.parse_args()
    random.seed(1)
    pos = []
    for f in a.games:
        size, moves = sgf_moves(f)
        if size == a.size:
            pos += [moves[:n] for n in range(12, len(moves), a.step)]
    net = raw_nn([a.tengen, 'gtp', '--model', a.model], a.size, pos)
    cl = raw_nn([a.tengen, 'gtp'] + shlex.split(a.args), a.size, pos)
    conf, sdiff, wins, ce, top3, n = {}, [], [0, 0], 0.0, 0, 0
    cat = lambda v: 'alive' if v > 0.6 else ('dead' if v < -0.6 else 'open')
    for p, nt, c in zip(pos, net, cl):
        if not nt or not c:
            continue
        n += 1
        for (x, y), col in stones(a.size, p).items():
            i, s = y * a.size + x, (1 if col == 'W' else -1)
            k = (cat(nt['whiteOwnership'][i] * s), cat(c['whiteOwnership'][i] * s))
            conf[k] = conf.get(k, 0) + 1
        sdiff.append(c['whiteLead'] - nt['whiteLead'])
        if abs(nt['whiteWin'] - 0.5) > 0.2:
            wins[0] += 1
            wins[1] += (c['whiteWin'] > 0.5) == (nt['whiteWin'] > 0.5)
        pn = [x if x == x and x > 0 else 0.0 for x in nt['policy']] + [nt.get('policyPass', 0.0)]
        pc = [x if x == x and x > 0 else 0.0 for x in c['policy']] + [c.get('policyPass', 0.0)]
        ce -= sum(t * math.log(max(q, 1e-6)) for t, q in zip(pn, pc))
        best = max(range(len(pn)), key=lambda i: pn[i])
        top3 += best in sorted(range(len(pc)), key=lambda i: -pc[i])[:3]
    print(f'{n} positions from {len(a.games)} games, {a.size}x{a.size}; classical side: {a.args}')
    for t in ('alive', 'open', 'dead'):
        print(f'  network {t:5}: ' + '  '.join(f'classical {k} {conf.get((t, k), 0):6}' for k in ('alive', 'open', 'dead')))
    sd = sorted(abs(x) for x in sdiff)
    print(f'score: mean |classical - network| {sum(sd) / n:.1f}, median {sd[n // 2]:.1f}, bias {sum(sdiff) / n:+.1f}')
    print(f'win: where the network is sure (<0.3 or >0.7), same side {100 * wins[1] / max(wins[0], 1):.1f}% of {wins[0]}')
    print(f'policy: cross-entropy against the network {ce / n:.3f} nats; its best move in the top 3 {100 * top3 / n:.1f}%')


if __name__ == '__main__':
    main()
