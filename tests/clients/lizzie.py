"""A Lizzie-style GTP session against `tengen gtp -model M -config CFG -override-version V
-override-config gtpName=KataGo-Tengen` (the name is what enables the clients' KataGo mode).

Lizzie (featurecat/lizzie, analysis/Leelaz.java) and LizzieYzy (yzyray/lizzieyzy) number
every command, read the id back from each `=N` line, and enter their KataGo mode when the
reply to `name` starts with `KataGo` (Lizzie) or, in any case, `kata` (LizzieYzy); Lizzie's
check of `override-version` in the engine line is reset when the engine starts, so the name
decides. In KataGo mode they stream `kata-analyze INTERVAL ownership true` (Lizzie) or
`kata-analyze ... ownership true` (LizzieYzy), read the ownership as the numbers after
`ownership` to the end of the line, and end the stream with the next command: `name`
(Lizzie) or `stop` (LizzieYzy). Usage: python3 lizzie.py TENGEN MODEL CFG
"""

import queue
import subprocess
import sys
import threading
import time

VERSION = "1.16.0"  # LizzieYzy reads "major.minor" from `version` in KataGo mode
NAME = "KataGo-Tengen"


class Session:
    """Speaks numbered GTP to the engine and reads its output on a thread."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.lines = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def line(self, timeout=60):
        line = self.lines.get(timeout=timeout)
        assert line is not None, "the engine closed its output"
        return line

    def send(self, command):
        """Sends one numbered command and returns its id."""
        cid = self.next_id
        self.next_id += 1
        self.proc.stdin.write(f"{cid} {command}\n")
        self.proc.stdin.flush()
        return cid

    def reply(self, cid):
        """Reads the reply to command `cid`: its `=N` line and the lines up to the blank one."""
        head = self.line()
        assert head.startswith(f"={cid}"), f"expected ={cid} ..., got {head!r}"
        body = [head[len(f"={cid}") :].strip()]
        while (line := self.line()) != "":
            body.append(line)
        return "\n".join(body).strip()

    def command(self, command):
        return self.reply(self.send(command))


def stream(session, command, stopper, infos_wanted=3):
    """Streams an analysis, ends it with `stopper` as Lizzie does, returns its info lines."""
    cid = session.send(command)
    head = session.line()
    assert head.strip() == f"={cid}", f"expected ={cid} to open the stream, got {head!r}"
    infos = []
    while len(infos) < infos_wanted:
        line = session.line()
        assert line.startswith("info "), f"not an info line: {line[:80]!r}"
        infos.append(line)
    stop_id = session.send(stopper)
    # The stream ends with a blank line; info lines written before the stopper was read may
    # come first, then the stopper's own reply.
    while (line := session.line()) != "":
        assert line.startswith("info "), f"not an info line: {line[:80]!r}"
    session.reply(stop_id)
    return infos


def check_ownership(info, area):
    """Lizzie reads every token after `ownership` as one point's ownership."""
    assert " ownership " in info, f"no ownership in {info[:120]!r}"
    values = [float(x) for x in info.split("ownership", 1)[1].split()]
    assert len(values) == area, f"{len(values)} ownership values for {area} points"
    assert all(-1 <= v <= 1 for v in values)
    assert any(v != 0 for v in values)


def main(bin_path, model, cfg):
    argv = [bin_path, "gtp", "-model", model, "-config", cfg, "-override-version", VERSION]
    session = Session(argv + ["-override-config", f"gtpName={NAME}"])
    start = time.time()
    name = session.command("name")
    version = session.command("version")
    commands = session.command("list_commands").split("\n")
    print(f"name {name!r}, version {version!r}")
    assert name.startswith("KataGo"), f"Lizzie's KataGo mode needs a name starting KataGo: {name!r}"
    assert name.lower().startswith("kata"), f"LizzieYzy's KataGo mode needs kata...: {name!r}"
    major, minor = (int(x) for x in version.split(".")[:2])
    assert (major, minor) == (1, 16), f"-override-version {VERSION} gave version {version!r}"
    for needed in ("kata-analyze", "stop"):
        assert needed in commands, f"list_commands lacks {needed}"

    for setup in ("boardsize 19", "komi 7.5", "clear_board", "play B Q16", "play W D4"):
        assert session.command(setup) == "", setup

    # Lizzie: kata-analyze INTERVAL ownership true, ended by `name`.
    infos = stream(session, "kata-analyze 10 ownership true", "name")
    check_ownership(infos[-1], 361)
    # LizzieYzy: kata-analyze COLOR INTERVAL ownership true, ended by `stop`.
    infos = stream(session, "kata-analyze B 50 ownership true", "stop")
    check_ownership(infos[-1], 361)
    assert all(" scoreLead " in info for info in infos)

    # The session goes on: a move, then quit.
    move = session.command("genmove B")
    assert move and move.split()[0].lower() != "resign", move
    session.command("quit")
    assert session.proc.wait(timeout=30) == 0
    print(f"lizzie: passed in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main(*sys.argv[1:4])
