#!/usr/bin/env bash
# The kiosk panel in a real browser: Debian's chromium, driven by Playwright for Python
# (pointed at the system browser; nothing downloads a browser), against a real
# `tengen serve` and a real mosquitto. Playwright installs once from PyPI into a cache
# directory (TENGEN_PANEL_CACHE, default ~/.cache/tengen/panel). Screenshots at phone,
# laptop and 1080p sizes go to TENGEN_PANEL_OUT (default a temporary folder).
# Usage: tests/panel/run.sh path/to/tengen; prints "panel: N passed, N failed".
set -euo pipefail
bin="$(realpath "${1:?usage: tests/panel/run.sh path/to/tengen}")"
here="$(cd "$(dirname "$0")" && pwd)"
export PATH="$PATH:/usr/sbin"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$browser" ]]; then
    echo "panel: skipped: no chromium (apt-get install chromium)"
    exit 0
fi
for tool in mosquitto mosquitto_pub mosquitto_sub; do
    if ! command -v "$tool" >/dev/null; then
        echo "panel: skipped: no $tool"
        exit 0
    fi
done
cache="${TENGEN_PANEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tengen/panel}"
playwright=1.63.0
venv="$cache/playwright-$playwright"
if [[ ! -e "$venv/ready" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==$playwright"
    touch "$venv/ready"
fi
out="${TENGEN_PANEL_OUT:-$(mktemp -d)}"
mkdir -p "$out"
"$venv/bin/python" "$here/browser.py" "$bin" "$browser" "$out"
