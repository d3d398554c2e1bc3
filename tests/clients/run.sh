#!/usr/bin/env bash
# Runs real clients' own code against a tengen binary: KaTrain's KataGoEngine (PyPI
# `katrain`), Sabaki's GTP controller (npm `@sabaki/gtp`) and a Lizzie-style GTP session,
# all with the bundled network at small visit counts. The clients are installed once into
# a cache directory (TENGEN_CLIENTS_CACHE, default ~/.cache/tengen/clients).
# Usage: tests/clients/run.sh path/to/tengen; prints "clients: N passed, N failed".
set -euo pipefail
bin="$(realpath "${1:?usage: tests/clients/run.sh path/to/tengen}")"
here="$(cd "$(dirname "$0")" && pwd)"
model="$(realpath "$here/../../models/g170-b6c96.bin.gz")"
cache="${TENGEN_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tengen/clients}"

# Pinned client versions; a new pin installs afresh beside the old one.
katrain=1.20.0 kivy=2.3.1 pysgf=1.0.0 sabaki_gtp=3.0.0

# KaTrain without its GUI-only dependencies (video, screen info, web sockets): its engine
# module needs only kivy (headless) and pysgf.
venv="$cache/katrain-$katrain"
if [[ ! -e "$venv/ready" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "kivy==$kivy" "pysgf==$pysgf"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "katrain==$katrain"
    touch "$venv/ready"
fi
npm_dir="$cache/sabaki-gtp-$sabaki_gtp"
if [[ ! -e "$npm_dir/ready" ]]; then
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    npm install --prefix "$npm_dir" --no-audit --no-fund --no-save --loglevel=error "@sabaki/gtp@$sabaki_gtp"
    touch "$npm_dir/ready"
fi

# Each client gets a scratch home (KaTrain's homeDataDir, kivy's settings).
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

passed=0 failed=0
run() {
    local name="$1" start=$SECONDS
    shift
    echo "-- $name"
    mkdir -p "$scratch/$name"
    if HOME="$scratch/$name" KIVY_HOME="$scratch/$name/kivy" timeout 600 "$@"; then
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
    echo "-- $name took $((SECONDS - start)) s"
}
run katrain "$venv/bin/python" "$here/katrain_engine.py" "$bin" "$model"
run sabaki env NODE_PATH="$npm_dir/node_modules" node "$here/sabaki.js" "$bin" "$model" "$here/gtp.cfg"
run lizzie python3 "$here/lizzie.py" "$bin" "$model" "$here/gtp.cfg"

echo "clients: $passed passed, $failed failed"
((failed == 0))
