"""A measurement, not run by CI: the panel under many live viewers.

Usage: load.py TENGEN [SECONDS] [VIEWERS]. Starts mosquitto and `tengen serve` with the
panel on loopback, connects VIEWERS (default 50) Server-Sent Events clients, and plays a
19x19 game by publishing one snapshot a second for SECONDS (default 600), starting a new
game when the pattern is full. Reports whether every viewer saw every move, the latency
from publishing a snapshot to the new state on MQTT and on the viewers, and the daemon's
RSS (first, last, peak).
"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

COLS = "ABCDEFGHJKLMNOPQRST"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    for _ in range(1200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing on {port}")


def viewer(port, seen, stop):
    """Reads /api/events; records (moves, time) of each state event."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")
    buf = b""
    event = None
    while not stop.is_set():
        data = s.recv(65536)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            line = line.rstrip(b"\r")
            if line.startswith(b"event:"):
                event = line[6:].strip()
            elif line.startswith(b"data:") and event == b"state":
                text = line[5:].decode()
                moves = text.count('"B ') + text.count('"W ')
                seen.append((moves, time.monotonic()))
    s.close()


def mqtt_watch(port, seen, stop):
    p = subprocess.Popen(
        ["mosquitto_sub", "-p", str(port), "-t", "tengen/load/state"],
        stdout=subprocess.PIPE, text=True,
    )
    # Ended when the run stops, whether or not another state comes (else it outlives us).
    threading.Thread(target=lambda: (stop.wait(), p.kill()), daemon=True).start()
    for line in p.stdout:
        seen.append((line.count('"B ') + line.count('"W '), time.monotonic()))
        if stop.is_set():
            break
    p.kill()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pattern():
    """Moves that never capture: Black on rows 2, 6, 10, 14, 18, White on 4, 8, 12, 16."""
    black = [f"{c}{r}" for r in (2, 6, 10, 14, 18) for c in COLS]
    white = [f"{c}{r}" for r in (4, 8, 12, 16) for c in COLS]
    for b, w in zip(black, white):
        yield b, "X"
        yield w, "O"


def main():
    tengen = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    work = tempfile.mkdtemp(prefix="tengen-load-")
    mqtt, web = free_port(), free_port()
    with open(f"{work}/mosquitto.conf", "w") as f:
        f.write(f"listener {mqtt} 127.0.0.1\nallow_anonymous true\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{work}/mosquitto.conf"], stderr=subprocess.DEVNULL)
    wait_port(mqtt)
    with open(f"{work}/tengen.toml", "w") as f:
        f.write(
            f'[mqtt]\nhost = "127.0.0.1"\nport = {mqtt}\ndevice_id = "load"\n[state]\ndir = "{work}/state"\n'
            '[engine]\nmodel = "none"\n[game]\nsize = 19\nengine = "none"\n[board]\nstability = 1\n'
            f"[web]\nenabled = true\nport = {web}\n"
        )
    daemon = subprocess.Popen([tengen, "serve", "--config", f"{work}/tengen.toml"],
                              stderr=open(f"{work}/daemon.log", "w"))
    wait_port(web)
    time.sleep(1)
    stop = threading.Event()
    views = [[] for _ in range(n)]
    threads = [threading.Thread(target=viewer, args=(web, v, stop), daemon=True) for v in views]
    on_mqtt = []
    threads.append(threading.Thread(target=mqtt_watch, args=(mqtt, on_mqtt, stop), daemon=True))
    for t in threads:
        t.start()
    time.sleep(1)
    rss = [rss_kib(daemon.pid)]
    published = []  # (moves after it, time)
    stones = {}
    moves = pattern()
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            point, c = next(moves)
        except StopIteration:
            subprocess.run(["mosquitto_pub", "-p", str(mqtt), "-t", "tengen/load/command", "-m",
                            '{"cmd":"new_game","size":19,"engine":"none"}'], check=True)
            stones, moves = {}, pattern()
            time.sleep(1)
            continue
        stones[point] = c
        rows = [["."] * 19 for _ in range(19)]
        for p, s in stones.items():
            rows[19 - int(p[1:])][COLS.index(p[0])] = s
        t = time.monotonic()
        subprocess.run(["mosquitto_pub", "-p", str(mqtt), "-q", "1", "-t", "tengen/load/board/snapshot",
                        "-m", "\n".join("".join(r) for r in rows)], check=True)
        published.append((len(stones), t))
        rss.append(rss_kib(daemon.pid))
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
    time.sleep(2)
    stop.set()

    def latencies(seen):
        out, missing = [], 0
        for moves_after, t in published:
            hits = [at for m, at in seen if m == moves_after and at >= t]
            if hits:
                out.append(min(hits) - t)
            else:
                missing += 1
        return out, missing

    def fmt(ls):
        ls = sorted(ls)
        if not ls:
            return "none"
        return f"median {1000 * ls[len(ls) // 2]:.0f} ms, p99 {1000 * ls[int(len(ls) * 0.99)]:.0f} ms, max {1000 * ls[-1]:.0f} ms"

    m_lat, m_missing = latencies(on_mqtt)
    all_lat, missing = [], 0
    for v in views:
        lat, miss = latencies(v)
        all_lat += lat
        missing += miss
    print(f"{len(published)} moves in {seconds} s, {n} viewers")
    print(f"MQTT state: {fmt(m_lat)}; missed {m_missing}")
    print(f"viewers: {fmt(all_lat)}; moves missed over all viewers {missing}")
    print(f"daemon RSS: first {rss[0] // 1024} MiB, last {rss[-1] // 1024} MiB, peak {max(rss) // 1024} MiB")
    daemon.terminate()
    daemon.wait()
    broker.kill()
    sys.exit(1 if missing or m_missing else 0)


if __name__ == "__main__":
    main()
