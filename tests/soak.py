"""A measurement, not run by CI: the appliance under a long mixed load, then kill -9.

Usage: soak.py TENGEN [SECONDS] [VIEWERS]   (defaults 1800 s, 20 viewers)

Starts mosquitto, `tengen serve` (bundled network, live analysis with ownership, the
panel, a pool worker) and beside it a `tengen worker` and a `tengen analysis --cluster`
client sharing one pool secret. For SECONDS it then:
- publishes 5 board snapshots a second, a new move every fifth (a 19x19 game that never
  captures; a new game when the pattern is full), with junk mixed in: random bytes,
  wrong sizes, bad JSON, a random board, and every 2 minutes a 5 MiB message;
- sends junk commands beside the real ones, and a pool query every 5 s (some junk);
- keeps VIEWERS Server-Sent Events viewers on the panel;
- samples the RSS of the daemon and the worker every 5 s.
Then it kills the daemon with SIGKILL while snapshots still arrive, starts it again, and
checks that every move the daemon announced on `move` (journalled before it is
published) is in the restarted game. Exit status 1 when something was lost, the RSS of
the last 20 minutes (or the last two thirds of a shorter run) spread over more than 10%,
or a pool query went unanswered. The RSS samples are left in the work folder's rss.csv.
With SOAK_WRAP (a command to run the daemon under, such as a heap profiler) the RSS
figures are the wrapper's, not the daemon's.
"""

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# The panel's load test's helpers: ports, and a 19x19 game that never captures.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "panel"))
from load import COLS, free_port, pattern, wait_port  # noqa: E402

DEVICE = "soak"


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rows_of(stones):
    rows = [["."] * 19 for _ in range(19)]
    for p, s in stones.items():
        rows[19 - int(p[1:])][COLS.index(p[0])] = s
    return ["".join(r) for r in rows]


def junk(rng):
    """One junk snapshot line: mosquitto_pub -l sends a line a message and stalls on a NUL."""
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(rng.choice([b for b in range(256) if b not in (0, 10)]) for _ in range(rng.randrange(1, 3000)))
    if kind == 1:
        return json.dumps({"rows": ["." * 9] * 9}).encode()
    if kind == 2:
        return b'{"rows": 5'
    if kind == 3:
        return json.dumps({"rows": ["".join(rng.choice(".XO?") for _ in range(19)) for _ in range(19)]}).encode()
    return b"X" * rng.randrange(1, 100000)


JUNK_COMMANDS = [
    b"not json at all",
    b'{"cmd":"explode"}',
    b'{"cmd":"level","level":"99k"}',
    b'{"cmd":"gtp","line":"loadsgf /etc/passwd","id":"j"}',
    b'{"cmd":"new_game","size":400}',
    b'{"cmd":"analysis","on":"maybe"}',
]


class Watch:
    """Follows the device's topics through mosquitto_sub: the moves announced in the
    current game, and counts of everything else."""

    def __init__(self, port):
        self.lock = threading.Lock()
        self.moves = []  # (number, "B D4") of the current game
        self.counts = {}
        self.p = subprocess.Popen(
            ["mosquitto_sub", "-p", str(port), "-t", f"tengen/{DEVICE}/#", "-v"],
            stdout=subprocess.PIPE,
        )
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        for line in self.p.stdout:
            topic, _, payload = line.partition(b" ")
            name = topic.decode(errors="replace").split("/", 2)[-1]
            with self.lock:
                self.counts[name] = self.counts.get(name, 0) + 1
                if name == "move":
                    m = json.loads(payload)
                    if m["number"] == 1:
                        self.moves = []
                    self.moves.append((m["number"], f'{m["color"]} {m["vertex"]}'))

    def announced(self):
        with self.lock:
            return list(self.moves), dict(self.counts)


def viewer(port, source, events, stop):
    """Reads /api/events from the address `source` until stopped; counts events."""
    try:
        s = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
        s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        while not stop.is_set():
            data = s.recv(65536)
            if not data:
                break
            events[0] += data.count(b"\nevent:") + data.startswith(b"event:")
        s.close()
    except OSError:
        pass


def pool_client(tengen, broker, secret, log, stop, tally):
    """Sends a query every 5 s (one in five is junk) and counts the answers by id."""
    p = subprocess.Popen(
        [tengen, "analysis", "--cluster", f"mqtt://127.0.0.1:{broker}", "--pool-secret-file", secret],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "w"),
    )

    def read():
        for line in p.stdout:
            try:
                a = json.loads(line)
            except ValueError:
                continue
            if a.get("id", "").startswith("q"):
                tally["answered"].add(a["id"])
                if "error" in a:
                    tally["errors"].append(a)

    threading.Thread(target=read, daemon=True).start()
    rng = random.Random(7)
    n = 0
    while not stop.is_set():
        n += 1
        if n % 5 == 0:
            p.stdin.write(b'{"id":"junk","moves":[["B","Z99"]]}\n{not json\n')
        else:
            # Four distinct points: a repeated one would be an illegal move, answered
            # with an error.
            points = rng.sample([f"{c}{r}" for c in COLS for r in range(1, 20)], 4)
            moves = [[c, p] for c, p in zip("BWBW", points)]
            q = {"id": f"q{n}", "moves": moves, "rules": "chinese", "komi": 7.5,
                 "boardXSize": 19, "boardYSize": 19, "maxVisits": 100}
            p.stdin.write((json.dumps(q) + "\n").encode())
            tally["sent"].append((q["id"], time.monotonic()))
        p.stdin.flush()
        stop.wait(5)
    time.sleep(20)  # the last answers
    p.kill()


def main():
    tengen = os.path.abspath(sys.argv[1])
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 1800
    n_viewers = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = tempfile.mkdtemp(prefix="tengen-soak-")
    mqtt, web = free_port(), free_port()
    with open(f"{work}/mosquitto.conf", "w") as f:
        f.write(f"listener {mqtt} 127.0.0.1\nallow_anonymous true\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{work}/mosquitto.conf"], stderr=subprocess.DEVNULL)
    wait_port(mqtt)
    secret = f"{work}/secret"
    with open(secret, "w") as f:
        f.write("soak-secret-of-the-club-pool-0123\n")
    with open(f"{work}/tengen.toml", "w") as f:
        f.write(
            f'[mqtt]\nhost = "127.0.0.1"\nport = {mqtt}\ndevice_id = "{DEVICE}"\n'
            f'[state]\ndir = "{work}/state"\n'
            "[engine]\nthreads = 1\nvisits = 200\n"
            "[game]\nsize = 19\nengine = \"none\"\n[board]\nstability = 1\n"
            "[analysis]\nenabled = true\nownership = true\n"
            '[cluster]\nworker = true\nslots = 1\nsecret = "soak-secret-of-the-club-pool-0123"\n'
            f"[web]\nenabled = true\nport = {web}\n"
        )
    log = open(f"{work}/daemon.log", "a")

    def start_daemon():
        # SOAK_WRAP: a command to run the daemon under (a heap profiler, say).
        wrap = os.environ.get("SOAK_WRAP", "").split()
        d = subprocess.Popen(wrap + [tengen, "serve", "--config", f"{work}/tengen.toml"], stderr=log)
        wait_port(web)
        return d

    watch = Watch(mqtt)
    time.sleep(0.5)
    daemon = start_daemon()
    worker = subprocess.Popen(
        [tengen, "worker", "--broker", f"mqtt://127.0.0.1:{mqtt}", "--model",
         f"{repo}/models/g170-b6c96.bin.gz", "--pool-secret-file", secret, "--id", "soak-worker"],
        stderr=open(f"{work}/worker.log", "w"),
    )
    time.sleep(2)
    stop = threading.Event()
    views = [[0] for _ in range(n_viewers)]
    # Ten viewers an address: the panel admits 16 connections from one address.
    for i, v in enumerate(views):
        source = f"127.0.0.{2 + i // 10}"
        threading.Thread(target=viewer, args=(web, source, v, stop), daemon=True).start()
    tally = {"sent": [], "answered": set(), "errors": []}
    client_stop = threading.Event()
    client = threading.Thread(target=pool_client, args=(tengen, mqtt, secret, f"{work}/client.log", client_stop, tally))
    client.start()

    pub = lambda topic: subprocess.Popen(  # noqa: E731
        ["mosquitto_pub", "-p", str(mqtt), "-q", "1", "-t", f"tengen/{DEVICE}/{topic}", "-l"],
        stdin=subprocess.PIPE,
    )
    snapshots, commands = pub("board/snapshot"), pub("command")
    rng = random.Random(1)
    stones, moves = {}, pattern()
    samples = []  # (seconds, daemon MiB, worker MiB)
    start = time.monotonic()
    tick = 0
    last_sample = -5.0
    while time.monotonic() - start < seconds:
        t = time.monotonic()
        if tick % 5 == 0:
            try:
                point, c = next(moves)
                stones[point] = c
            except StopIteration:
                commands.stdin.write(b'{"cmd":"new_game","size":19,"engine":"none"}\n')
                commands.stdin.flush()
                stones, moves = {}, pattern()
        snapshots.stdin.write(json.dumps({"rows": rows_of(stones)}).encode() + b"\n")
        if tick % 7 == 3:
            snapshots.stdin.write(junk(rng) + b"\n")
        if tick % 600 == 300:
            snapshots.stdin.write(b"." * (5 << 20) + b"\n")
        if tick % 11 == 5:
            commands.stdin.write(rng.choice(JUNK_COMMANDS) + b"\n")
        snapshots.stdin.flush()
        commands.stdin.flush()
        elapsed = time.monotonic() - start
        if elapsed - last_sample >= 5:
            last_sample = elapsed
            samples.append((elapsed, rss_mib(daemon.pid), rss_mib(worker.pid)))
            if len(samples) % 60 == 1:
                print(f"{elapsed / 60:5.1f} min: daemon {samples[-1][1]:.0f} MiB, worker {samples[-1][2]:.0f} MiB",
                      flush=True)
        tick += 1
        time.sleep(max(0.0, 0.2 - (time.monotonic() - t)))

    # kill -9 while snapshots still arrive, then count what survived.
    announced, counts = watch.announced()
    daemon.kill()
    daemon.wait()
    for _ in range(10):
        t = time.monotonic()
        snapshots.stdin.write(json.dumps({"rows": rows_of(stones)}).encode() + b"\n")
        snapshots.stdin.flush()
        time.sleep(max(0.0, 0.2 - (time.monotonic() - t)))
    snapshots.stdin.close()
    commands.stdin.close()
    daemon = start_daemon()
    time.sleep(2)
    with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/state", timeout=10) as r:
        state = json.load(r)["state"]
    kept = state["moves"]
    want = [m for _, m in announced]
    lost = [m for i, m in enumerate(want) if i >= len(kept) or kept[i] != m]
    stop.set()
    client_stop.set()
    client.join()

    with open(f"{work}/rss.csv", "w") as f:
        f.write("seconds,daemon_mib,worker_mib\n")
        f.writelines(f"{t:.0f},{d:.1f},{w:.1f}\n" for t, d, w in samples)

    def spread(part):
        d = [s[1] for s in part]
        return min(d), max(d), (max(d) - min(d)) / min(d)

    tail_from = seconds - 1200 if seconds >= 1800 else seconds / 3
    tail = [s for s in samples if s[0] >= tail_from]
    lo, hi, frac = spread(tail)
    at = lambda sec: min(samples, key=lambda s: abs(s[0] - sec))[1]  # noqa: E731
    answered = sum(1 for q, _ in tally["sent"] if q in tally["answered"])
    print(f"{seconds} s, {tick} snapshot ticks, {n_viewers} viewers; messages seen: {json.dumps(counts, sort_keys=True)}")
    print(f"viewer events: min {min(v[0] for v in views)}, max {max(v[0] for v in views)}")
    print(f"daemon RSS: 1 min {at(60):.0f} MiB, 10 min {at(600):.0f} MiB, "
          f"from {tail_from / 60:.0f} min: {lo:.0f}..{hi:.0f} MiB ({100 * frac:.1f}%), peak {max(s[1] for s in samples):.0f} MiB")
    print(f"worker RSS: first {samples[0][2]:.0f} MiB, last {samples[-1][2]:.0f} MiB, peak {max(s[2] for s in samples):.0f} MiB")
    missed = [f"{q} ({t - start:.0f} s)" for q, t in tally["sent"] if q not in tally["answered"]]
    print(f"pool queries answered {answered}/{len(tally['sent'])}, {len(tally['errors'])} with an error"
          + (f"; not: {', '.join(missed)}" if missed else ""))
    for e in tally["errors"][:3]:
        print(f"  {json.dumps(e)}")
    print(f"kill -9: {len(want)} moves announced in the last game, {len(kept)} after the restart, lost {len(lost)}")
    daemon.terminate()
    daemon.wait()
    worker.terminate()
    worker.wait()
    watch.p.kill()
    broker.kill()
    print(f"work dir {work}")
    sys.exit(1 if lost or frac > 0.10 or answered < len(tally["sent"]) or tally["errors"] else 0)


if __name__ == "__main__":
    main()
