#!/usr/bin/env python3
"""Measures the analysis pool on this machine (docs/cluster.md): queries per second with
1 and 2 workers of one thread each, and the broker path's latency per query against
`tengen analysis` on the same engine.

    tests/cluster-bench.py [path/to/tengen] [--queries N] [--visits V] [--mosquitto PATH]

Needs mosquitto (PATH picks another build of it). Each worker runs one analysis thread
with one search thread. Last, it counts the jobs a worker of 1 and 2 slots held at once while
three jobs a slot waited for it: the broker keeps to the worker's receive maximum when
that count is the slots.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
TENGEN = args.pop(0) if args and not args[0].startswith("--") else "tengen"
opts = dict(zip(args[::2], args[1::2]))
QUERIES = int(opts.get("--queries", 60))
VISITS = int(opts.get("--visits", 100))
MOSQUITTO = opts.get("--mosquitto", "mosquitto")
ENGINE = ["--analysis-threads", "1", "--search-threads", "1"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


COLS = "ABCDEFGHJ"


def point(k):
    return f"{COLS[k % 9]}{1 + k // 9 % 9}"


def query(i, visits, salt=0):
    # A different opening each time, so that no worker's network cache helps it.
    k = i + 1000 * salt
    a, b = k % 81, (k // 81 * 7 + 40) % 81
    moves = [["B", point(a)]] + ([["W", point(b)]] if b != a else [])
    return json.dumps({"id": f"q{i}", "moves": moves,
                       "rules": "chinese", "komi": 7, "boardXSize": 9, "boardYSize": 9,
                       "maxVisits": visits})


class Lines:
    """A process spoken to one JSON line at a time."""

    def __init__(self, cmd, log):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=log, text=True, bufsize=1)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def batch(self, lines):
        for l in lines:
            self.p.stdin.write(l + "\n")
        self.p.stdin.flush()
        return [json.loads(self.p.stdout.readline()) for _ in lines]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def main():
    d = tempfile.mkdtemp()
    port = free_port()
    conf = os.path.join(d, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n")
    broker = subprocess.Popen([MOSQUITTO, "-c", conf], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    url = f"mqtt://127.0.0.1:{port}"
    log = open(os.path.join(d, "log"), "w")
    workers = []
    try:
        rows = []
        for n in (1, 2):
            # Fresh workers for each row: nothing cached from the row before.
            for w in workers:
                w.terminate()
                w.wait()
            workers = [subprocess.Popen(
                [TENGEN, "worker", "--broker", url, "--id", f"w{n}-{j}", "--slots", "2"]
                + ENGINE, stderr=log) for j in range(n)]
            client = Lines([TENGEN, "analysis", "--cluster", url], log)
            # Every worker loads its network before the clock starts.
            client.batch([query(i, 1, 9) for i in range(4 * n)])
            start = time.monotonic()
            out = client.batch([query(i, VISITS, n) for i in range(QUERIES)])
            took = time.monotonic() - start
            client.close()
            assert all("rootInfo" in v for v in out), out
            rows.append((n, QUERIES / took))
        print(f"| workers | queries/s ({QUERIES} queries, {VISITS} visits, 9x9) |")
        print("|---|---|")
        for n, qps in rows:
            print(f"| {n} | {qps:.2f} |")
        print(f"2 workers / 1 worker: {rows[1][1] / rows[0][1]:.2f}x")

        # Latency: one query at a time, one visit, direct and through the broker.
        for w in workers[1:]:
            w.terminate()
            w.wait()
        direct = Lines([TENGEN, "analysis"] + ENGINE, log)
        pooled = Lines([TENGEN, "analysis", "--cluster", url], log)
        times = {"direct": [], "pool": []}
        for name, p in (("direct", direct), ("pool", pooled)):
            p.ask(query(0, 1, 7))
            for i in range(50):
                t = time.monotonic()
                v = p.ask(query(i, 1, 8))
                times[name].append(time.monotonic() - t)
                assert v.get("id") == f"q{i}" and "rootInfo" in v, v
            p.close()
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        print(f"latency per query, median of 50 (1 visit): direct {med['direct']:.1f} ms, "
              f"through the broker {med['pool']:.1f} ms, "
              f"overhead {med['pool'] - med['direct']:.1f} ms")

        # Back-pressure: one worker with 1 and then 2 slots, three jobs a slot sent at once.
        for slots in (1, 2):
            for w in workers:
                w.terminate()
                w.wait()
            wlog_path = os.path.join(d, f"slots{slots}.log")
            with open(wlog_path, "w") as wlog:
                workers = [subprocess.Popen(
                    [TENGEN, "worker", "--broker", url, "--id", f"slots{slots}",
                     "--slots", str(slots)] + ENGINE, stderr=wlog,
                    env=dict(os.environ, RUST_LOG="tengen_device::cluster=debug"))]
                client = Lines([TENGEN, "analysis", "--cluster", url], log)
                client.batch([query(0, 1, 6)])
                out = client.batch([query(i, 4 * VISITS, 5) for i in range(3 * slots)])
                client.close()
            assert all("rootInfo" in v for v in out), out
            held = [int(l.split(";")[1].split()[0]) for l in open(wlog_path)
                    if "jobs open" in l]
            print(f"back-pressure: a worker of {slots} slot(s) held at most {max(held)} jobs "
                  f"at once ({3 * slots} sent at once)")
    finally:
        for w in workers:
            w.terminate()
            w.wait()
        broker.terminate()
        broker.wait()


main()
