#!/usr/bin/env python3
"""Builds the data fit_prior.py fits: positions sampled from SGF games, a network's
policy for each (through `tengen gtp --model ... kata-raw-nn`), and the prior's features
of every legal move (the `prior_features` example of tengen-classic).

Usage: prior_data.py --tengen target/release/tengen --model NET.bin.gz \
           --features target/release/examples/prior_features OUT.jsonl GAME.sgf...
Every 3rd position of a 9x9 game and every 9th of a 19x19 one is taken (other sizes are
skipped), after a random start.
"""
import argparse, json, random, re, subprocess, sys

COLS = 'ABCDEFGHJKLMNOPQRST'


def sgf_moves(path):
    s = open(path, encoding='utf-8', errors='replace').read()
    m = re.search(r'SZ\[(\d+)\]', s)
    size = int(m.group(1)) if m else 19
    moves = []
    for c, v in re.findall(r';([BW])\[([a-z]{0,2})\]', s):
        if v == '' or v == 'tt':
            moves.append((c, 'pass'))
        else:
            moves.append((c, COLS[ord(v[0]) - 97] + str(size - (ord(v[1]) - 97))))
    return size, moves


def net_policies(tengen, model, size, items):
    cmds = [f'boardsize {size}']
    for i, p in items:
        cmds += ['clear_board', 'komi 7'] + [f'play {c} {v}' for c, v in p['moves']]
        cmds.append(f'{i + 1} kata-raw-nn 0')
    cmds.append('quit')
    r = subprocess.run([tengen, 'gtp', '--model', model], input='\n'.join(cmds) + '\n',
                       capture_output=True, text=True, check=True)
    out = {}
    for block in r.stdout.split('\n\n'):
        lines = block.strip().split('\n')
        head = lines[0].split()
        if not head or not head[0].startswith('=') or len(head[0]) < 2:
            continue
        i = int(head[0][1:]) - 1
        vals, on = [], False
        for ln in lines:
            t = ln.split()
            if t and t[0] == 'policy':
                on = True
            elif t and t[0] == 'policyPass':
                on = False
            elif on:
                vals += [0.0 if x.upper() == 'NAN' else float(x) for x in t]
        out[i] = vals
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tengen', required=True)
    ap.add_argument('--model', required=True)
    ap.add_argument('--features', required=True)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('out')
    ap.add_argument('games', nargs='+')
    a = ap.parse_args()
    random.seed(a.seed)
    pos = []
    for f in a.games:
        size, moves = sgf_moves(f)
        if size not in (9, 19) or len(moves) < 4:
            continue
        step = 3 if size == 9 else 9
        for n in range(random.randrange(step), len(moves) - 1, step):
            pos.append({'game': f, 'size': size, 'moves': moves[:n]})
    print(f'{len(a.games)} games, {len(pos)} positions', file=sys.stderr)
    for size in (9, 19):
        items = [(i, p) for i, p in enumerate(pos) if p['size'] == size]
        for i, v in net_policies(a.tengen, a.model, size, items).items():
            pos[i]['net'] = v
    text = '\n'.join(f"{p['size']} " + ' '.join(f'{c}:{v}' for c, v in p['moves']) for p in pos)
    r = subprocess.run([a.features], input=text + '\n', capture_output=True, text=True, check=True)
    cur = None
    for ln in r.stdout.split('\n'):
        t = ln.split()
        if not t:
            continue
        if t[0] == 'position':
            cur = pos[int(t[1])]
            cur['feat'] = {}
        else:
            cur['feat'][t[0]] = [int(x) for x in t[1:]]
    kept = 0
    with open(a.out, 'w') as f:
        for p in pos:
            if 'net' in p and 'feat' in p:
                f.write(json.dumps(p) + '\n')
                kept += 1
    print(f'{kept} positions written to {a.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
