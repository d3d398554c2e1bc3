"""The kiosk panel in headless chromium against a real `tengen serve` and mosquitto.

Usage: browser.py TENGEN CHROMIUM OUT_DIR. A 9x9 game is played by publishing board
snapshots; the page must show each stone, the last move, captures and the move number
soon after the MQTT message, grow its graph, show top moves and a hovered move's
variation, mark a knocked stone's point until it is fixed, refuse controls without the
token and carry them out with it (journalled: a restart shows the same game), show
offline when the broker and the daemon go and recover by itself, and lay out at phone,
laptop and 1080p sizes (screenshots written to OUT_DIR), and show the engine's level as
set by the new-game form and a level command; the kiosk shows a pairing PIN that gives
another browser the controls. Prints
"panel: N passed, N failed".
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

TOKEN = "panel-test-token"
COLS = "ABCDEFGHJ"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Rig:
    def __init__(self, tengen, work):
        self.tengen = tengen
        self.work = work
        self.mqtt = free_port()
        self.web = free_port()
        self.broker = None
        self.daemon = None
        self.cfg = os.path.join(work, "tengen.toml")
        with open(self.cfg, "w") as f:
            f.write(
                f'[mqtt]\nhost = "127.0.0.1"\nport = {self.mqtt}\ndevice_id = "test"\n'
                f'keep_alive = 5\n[state]\ndir = "{work}/state"\n[engine]\nmodel = "none"\n'
                '[game]\nsize = 9\nkomi = 7\nengine = "none"\n[board]\nstability = 1\n'
                "[analysis]\nenabled = true\ninterval_ms = 100\nmax_visits = 300\nownership = true\n"
                f'[web]\nenabled = true\nport = {self.web}\ntoken = "{TOKEN}"\npin = true\n'
            )

    def start_broker(self):
        conf = os.path.join(self.work, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.mqtt} 127.0.0.1\nallow_anonymous true\n")
        self.broker = subprocess.Popen(
            ["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.mqtt)

    def start_daemon(self):
        log = open(os.path.join(self.work, "daemon.log"), "a")
        self.daemon = subprocess.Popen(
            [self.tengen, "serve", "--config", self.cfg],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.web}/api/state") as r:
                    if json.load(r)["state"] is not None:
                        break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            raise RuntimeError("the panel did not come up")
        # Snapshots published before the daemon subscribed would be lost: wait for its
        # retained status (sent after its subscriptions), naming this daemon's pid.
        while time.monotonic() < deadline:
            status = subprocess.run(
                ["mosquitto_sub", "-p", str(self.mqtt), "-t", "tengen/test/status", "-C", "1", "-W", "5"],
                capture_output=True, text=True,
            ).stdout
            try:
                if json.loads(status)["pid"] == self.daemon.pid:
                    return
            except (ValueError, KeyError, TypeError):
                pass
            time.sleep(0.05)
        raise RuntimeError("the daemon did not come up on MQTT")

    def stop(self, what):
        p = getattr(self, what)
        if p and p.poll() is None:
            p.kill()
            p.wait()

    def snapshot(self, rows):
        subprocess.run(
            ["mosquitto_pub", "-p", str(self.mqtt), "-q", "1", "-t", "tengen/test/board/snapshot",
             "-m", "\n".join("".join(r) for r in rows)],
            check=True,
        )


def board(stones):
    rows = [["."] * 9 for _ in range(9)]
    for point, c in stones.items():
        rows[9 - int(point[1:])][COLS.index(point[0])] = c
    return rows


def main():
    tengen, chromium, out = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="tengen-panel-")
    rig = Rig(tengen, work)
    passed = failed = 0
    figures = []

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAILED {name}: {detail}", flush=True)

    try:
        rig.start_broker()
        rig.start_daemon()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            url = f"http://127.0.0.1:{rig.web}/"
            page.goto(url)
            page.wait_for_selector('#turn[data-moves="0"]')

            # A game played on the board: every stone, the last move, the move number,
            # captures; B A2 takes W A1.
            stones = {}
            for n, (point, c) in enumerate([("B1", "X"), ("A1", "O"), ("E5", "X"), ("E4", "O"), ("A2", "X")], 1):
                stones[point] = c
                if point == "A2":
                    del stones["A1"]
                t = time.monotonic()
                rig.snapshot(board(stones))
                page.wait_for_selector(f'#turn[data-moves="{n}"]', timeout=10_000)
                figures.append(time.monotonic() - t)
                on_page = sorted(page.eval_on_selector_all("#stones circle", "cs => cs.map(c => c.dataset.point)"))
                check(f"stones after move {n}", on_page == sorted(stones), f"{on_page} vs {sorted(stones)}")
                last = page.eval_on_selector("#last-move", "c => [c.getAttribute('cx'), c.getAttribute('cy')]")
                want = [str(COLS.index(point[0])), str(9 - int(point[1:]))]
                check(f"last move {n}", last == want, f"{last} vs {want}")
            check("captures", "Black 1" in page.inner_text("#captures"), page.inner_text("#captures"))
            check("move number", page.inner_text("#turn").startswith("Move 6"), page.inner_text("#turn"))
            worst = max(figures)
            print(f"panel: MQTT snapshot to page, worst {1000 * worst:.0f} ms, "
                  f"median {1000 * sorted(figures)[len(figures) // 2]:.0f} ms "
                  "(mosquitto_pub's own start-up included)", flush=True)
            # The 200 ms for the typical move; a loaded CI machine gets slack on one.
            median = sorted(figures)[len(figures) // 2]
            check("move latency", median < 0.2 and worst < 1.0, f"median {median:.3f} s, worst {worst:.3f} s")

            # Analysis: the graph gains points, top moves appear, hovering shows the PV.
            # Predicates are functions, not expressions: the page's CSP forbids the eval
            # Playwright would run an expression with.
            page.wait_for_function("() => Number(document.querySelector('#graph').dataset.points || 0) >= 3",
                                   timeout=20_000)
            check("graph", True)
            page.wait_for_selector("#top tbody tr", timeout=20_000)
            # A locator, not an element handle: analysis rebuilds the rows, and the hover
            # retries on the new ones.
            page.locator("#top tbody tr").first.hover()
            try:
                page.wait_for_selector("#pv circle.pv-stone", timeout=5_000)
            except Exception:
                pass
            pv = page.eval_on_selector_all("#pv circle.pv-stone", "cs => cs.length")
            check("pv on hover", pv >= 1, f"{pv} pv stones")
            page.mouse.move(0, 0)

            # A knocked stone: exactly its point is marked, and the mark goes when fixed.
            knocked = dict(stones)
            del knocked["E5"]
            rig.snapshot(board(knocked))
            page.wait_for_selector("#fixes rect", timeout=10_000)
            marked = page.eval_on_selector_all("#fixes rect", "rs => rs.map(r => r.dataset.point)")
            check("fix marks", marked == ["E5"], str(marked))
            rig.snapshot(board(stones))
            page.wait_for_selector("#fixes", state="detached", timeout=10_000)
            check("fix cleared", True)

            # Controls: refused without the token, nothing changes; with it they work.
            status = page.evaluate(
                "fetch('/api/command', {method: 'POST', body: '{\"cmd\":\"pass\"}'}).then(r => r.status)")
            check("control without token", status == 401, str(status))
            time.sleep(0.3)
            check("nothing changed", page.get_attribute("#turn", "data-moves") == "5")
            page.click("#controls summary")
            page.fill("#token", TOKEN)
            page.click('button[data-cmd="pass"]')
            page.wait_for_selector('#turn[data-moves="6"]', timeout=10_000)
            page.click('button[data-cmd="undo"]')
            page.wait_for_selector('#turn[data-moves="5"]', timeout=10_000)
            page.fill('#new-game input[name="komi"]', "5.5")
            page.select_option('#new-game select[name="size"]', "9")
            page.select_option('#new-game select[name="engine"]', "none")
            page.click('#new-game button[type="submit"]')
            page.wait_for_selector('#turn[data-moves="0"]', timeout=10_000)
            check("new game", "komi 5.5" in page.inner_text("#game-info"), page.inner_text("#game-info"))
            page.click("#games summary")
            page.wait_for_selector("#game-list a", timeout=10_000)
            check("archived game listed", "5 moves" in page.inner_text("#game-list"), page.inner_text("#game-list"))
            rig.snapshot(board({"C3": "X"}))
            page.wait_for_selector('#turn[data-moves="1"]', timeout=10_000)

            # Broker gone, then the daemon: offline; both back: the page recovers by itself
            # and shows the journalled game.
            rig.stop("broker")
            time.sleep(0.5)
            check("online without the broker", page.is_hidden("#offline"))
            rig.stop("daemon")
            page.wait_for_selector("#offline", state="visible", timeout=10_000)
            check("offline shown", True)
            rig.start_broker()
            rig.start_daemon()
            page.wait_for_selector("#offline", state="hidden", timeout=20_000)
            page.wait_for_selector('#turn[data-moves="1"]', timeout=10_000)
            check("same game after restart", "komi 5.5" in page.inner_text("#game-info"), page.inner_text("#game-info"))

            # Layout at three sizes: the board whole in view, nothing wider than the screen.
            for name, w, h in [("phone", 390, 844), ("laptop", 1366, 768), ("1080p", 1920, 1080)]:
                page.set_viewport_size({"width": w, "height": h})
                # Laid out at the new size: two frames after the window has it.
                page.wait_for_function(f"() => window.innerWidth === {w} && window.innerHeight === {h}")
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                shot = os.path.join(out, f"panel-{name}.png")
                page.screenshot(path=shot)
                box = page.eval_on_selector("#board", "b => { const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }")
                scroll_w = page.evaluate("document.documentElement.scrollWidth")
                inside = box[0] >= 0 and box[1] >= 0 and box[2] <= w + 0.5 and box[3] <= h + 0.5
                check(f"layout {name}", inside and scroll_w <= w and os.path.getsize(shot) > 0,
                      f"board {box}, scroll width {scroll_w}, viewport {w}x{h}")
            page.goto(url + "?kiosk=1")
            page.wait_for_selector('#turn[data-moves="1"]')
            check("kiosk mode", page.evaluate("document.body.classList.contains('kiosk')") and page.is_hidden("#controls"))
            # The pairing PIN, on the kiosk's own screen.
            page.wait_for_selector("#pin", state="visible", timeout=10_000)
            pin = page.inner_text("#pin").split()[-1]
            check("kiosk PIN", len(pin) == 6 and pin.isdigit(), page.inner_text("#pin"))
            page.screenshot(path=os.path.join(out, "panel-kiosk-1080p.png"))

            # Paired with the kiosk's PIN instead of the token, then the engine's level
            # beside its side: from the new-game form, then changed by a level command.
            page.goto(url)
            page.wait_for_selector('#turn[data-moves="1"]')
            page.click("#controls summary")
            page.fill("#token", "")
            page.fill("#pair-pin", pin)
            page.click("#pair")
            page.wait_for_function("() => document.querySelector('#control-msg').textContent !== ''", timeout=10_000)
            check("paired", page.inner_text("#control-msg") == "paired", page.inner_text("#control-msg"))
            check("session token", len(page.input_value("#token")) == 32, page.input_value("#token"))
            page.select_option('#new-game select[name="engine"]', "white")
            page.fill('#new-game input[name="level"]', "3")
            page.click('#new-game button[type="submit"]')
            shows = "text => document.querySelector('#game-info').textContent.includes(text)"
            page.wait_for_function(shows, arg="engine plays white at level 3", timeout=10_000)
            check("level from the form", True)
            status = page.evaluate(
                "t => fetch('/api/command', {method: 'POST', headers: {Authorization: `Bearer ${t}`},"
                " body: '{\"cmd\":\"level\",\"level\":5}'}).then(r => r.status)", TOKEN)
            check("level command", status == 200, str(status))
            page.wait_for_function(shows, arg="engine plays white at level 5", timeout=10_000)
            check("level shown", True)
            browser.close()
    except Exception as e:  # a step that could not even run counts as a failure
        failed += 1
        print(f"FAILED: {e!r}", flush=True)
        try:
            with open(os.path.join(work, "daemon.log")) as f:
                print(f.read()[-4000:])
        except OSError:
            pass
    finally:
        rig.stop("daemon")
        rig.stop("broker")
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {out}")
    print(f"panel: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
