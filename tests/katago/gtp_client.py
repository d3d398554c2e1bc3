"""A GTP engine over pipes, for the scripts beside this file."""

import subprocess


class Gtp:
    """Runs `args` (a command line as a list) and talks GTP to it."""

    def __init__(self, args, cwd=None):
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, cwd=cwd)

    def lines(self, command):
        """The reply's lines, the status character taken off the first; an error raises."""
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"engine ended on {command!r}")
            line = line.rstrip("\n")
            if line.strip() == "" and lines:
                break
            if line.strip():
                lines.append(line)
        if not lines[0].startswith("="):
            raise RuntimeError(f"{command!r}: {' '.join(lines)}")
        lines[0] = lines[0][1:].strip()
        return [l for l in lines if l.strip()]

    def ask(self, command):
        """The reply as one line."""
        return " ".join(l.strip() for l in self.lines(command)).strip()

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)
