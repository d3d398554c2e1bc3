#!/usr/bin/env bash
# Exercises the aarch64 build under qemu-user: the rules and nn test suites built for
# aarch64, then a GTP session against the aarch64 binary (classical engine, and the
# b6c96 network through tract when ../shared has it). Uses the release profile for
# both, so that tract is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
command -v qemu-aarch64 >/dev/null 2>&1 || $SUDO apt-get install -y qemu-user
cross/build-aarch64.sh
cargo test --release --target "$target" -p tengen-rules -p tengen-nn -- --nocapture

bin="target/$target/release/tengen"
run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$bin" "$@"; }
smoke() {
    local out
    out=$(printf 'boardsize 9\nkomi 7\nplay B E5\nplay W C3\nplay B G7\ngenmove W\nshowboard\nquit\n' | run gtp "$@")
    # Every command answered with success, and genmove named a point or pass.
    if grep -q '^?' <<<"$out" || ! grep -Eq '^= ([A-HJ-T][0-9]+|pass|resign)$' <<<"$out"; then
        echo "aarch64 GTP smoke session failed ($*):" >&2
        echo "$out" >&2
        return 1
    fi
    echo "aarch64 GTP smoke ($*): genmove W -> $(grep -Eo '^= ([A-HJ-T][0-9]+|pass|resign)$' <<<"$out" | head -1)"
}
smoke --level 10
model="${TENGEN_SHARED:-../shared}/models/g170-b6c96.bin.gz"
if [[ -f "$model" ]]; then
    smoke --model "$model" --backend tract --threads 1 --visits 16
else
    echo "aarch64 GTP smoke with b6c96 skipped: $model not found"
fi
