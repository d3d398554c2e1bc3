#!/usr/bin/env bash
# Builds Tengen for aarch64 and exercises the build under qemu-user (part of tests/run.sh,
# so CI runs it):
#  1. one offline cargo invocation (inside a network namespace without network when the
#     machine allows it) builds, with the `ort` feature, the rules and nn test suites and
#     the `tengen` binary for aarch64: tract is compiled once for all of them, and nothing
#     is downloaded (ONNX Runtime is opened at run time, `load-dynamic`);
#  2. every rules and nn test binary runs under qemu-aarch64, with the output shown (the
#     network golden files sampled, see below);
#  3. GTP sessions against the aarch64 binary: the classical engine, and g170-b6c96
#     through tract when ../shared has it. (ONNX Runtime's own aarch64 library, from its
#     PyPI wheel, dies with SIGSEGV as soon as it loads under qemu-user 7.2, with or
#     without SVE, so the `ort` path on aarch64 is built here but not run.)
# The `test` profile (opt-level 2) without debug info, linked by rust-lld: the slowest
# part of CI, kept as short as it can be.
#
# `--build` does step 1 only and `--run` steps 2 and 3 only (tests/run.sh builds while the
# host suites run, which leave a core idle much of the time); no argument does all three.
# The build has a target folder of its own, target/cross (a cargo building there does not
# wait for one running the host tests in target/), and the binary is copied to
# target/aarch64-unknown-linux-gnu/debug/tengen, where the packages stage takes it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
phase="${1:-all}"
case "$phase" in
all | --build | --run) ;;
*)
    echo "usage: $0 [--build | --run]" >&2
    exit 2
    ;;
esac
cross="target/cross"
cross/setup-aarch64.sh --qemu
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_PROFILE_TEST_DEBUG=false
host="$(rustc -vV | sed -n 's/^host: //p')"
lld="$(rustc --print sysroot)/lib/rustlib/$host/bin/gcc-ld"
if [[ -x "$lld/ld.lld" ]]; then
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C link-arg=-fuse-ld=lld -C link-arg=-B$lld"
fi
# ORT_DYLIB_PATH may name the host's (x86-64) library: not for these binaries (their ONNX
# Runtime tests then say they skipped).
run_qemu() { env -u ORT_DYLIB_PATH qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"; }

if [[ "$phase" != --run ]]; then
    # Crates for every target in the lock file, so that the build itself needs no network.
    cargo fetch --locked
    # Only what runs here: the rules, eval and nn suites (unit and integration tests) and the
    # `tengen` binary, which cargo builds for the binary's smallest integration test
    # (cli_config, not run). The binary's other suites run on the host only, so they are
    # not built for aarch64 (a small saving: the stage's build stayed near 8 minutes,
    # tract-core being its long serial step). One invocation, so features resolve once.
    select=(--lib --test cli_config)
    for suite in crates/rules/tests/*.rs crates/nn/tests/*.rs; do
        select+=(--test "$(basename "$suite" .rs)")
    done
    build=(cargo test --offline --locked --target "$target" --features tengen/ort
        -p tengen-rules -p tengen-eval -p tengen-nn -p tengen "${select[@]}" --no-run
        --message-format=json-render-diagnostics)
    if unshare --net true 2>/dev/null; then
        echo "building for $target inside a network namespace without network"
        build=(unshare --net "${build[@]}")
    else
        echo "building for $target offline (unshare is not permitted here)"
    fi
    mkdir -p "$cross" "target/$target/debug"
    CARGO_TARGET_DIR="$cross" "${build[@]}" >"$cross/aarch64-tests.json.new"
    mv "$cross/aarch64-tests.json.new" "$cross/aarch64-tests.json"
    cp "$cross/$target/debug/tengen" "target/$target/debug/tengen"
    [[ "$phase" == --build ]] && exit 0
fi
[[ -f "$cross/aarch64-tests.json" ]] || {
    echo "no aarch64 build to run: $0 --build first" >&2
    exit 1
}

# The test executables of tengen-rules, tengen-eval and tengen-nn, each with its package's folder (cargo
# runs tests from there).
mapfile -t tests < <(python3 - "$cross/aarch64-tests.json" <<'EOF'
import json, os, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    pkg = m["manifest_path"]
    if any(os.path.basename(os.path.dirname(pkg)) == c for c in ("rules", "eval", "nn")):
        print(os.path.dirname(pkg) + "\t" + m["executable"])
EOF
)
((${#tests[@]})) || { echo "no aarch64 test binaries were built" >&2; exit 1; }

# Under emulation a network evaluation is about a hundred times slower: the transformer
# net's golden tests (b10c384, over 15 minutes) and the int8 golden test (which first
# calibrates on hundreds of positions per board size, 16 s natively; int8 is for ONNX
# Runtime, which does not run under qemu anyway) are left to the native run, and the other
# network golden tests take every 12th position (all 42 of b6c96 take 16 minutes under
# qemu; every 6th took two of this stage's minutes). Every position still runs natively
# in the main suite.
export TENGEN_GOLDEN_STRIDE="${TENGEN_GOLDEN_STRIDE:-12}"
passed=0 failed=0 ignored=0
for t in "${tests[@]}"; do
    dir="${t%%$'\t'*}" exe="${t#*$'\t'}"
    echo "== qemu-aarch64 $(basename "$exe")"
    out="$(cd "$dir" && run_qemu "$exe" --nocapture --skip b10c384 --skip int8_b6c96 2>&1)" || {
        echo "$out"
        echo "aarch64 test binary $(basename "$exe") failed" >&2
        exit 1
    }
    echo "$out"
    while read -r p f i; do
        passed=$((passed + p)) failed=$((failed + f)) ignored=$((ignored + i))
    done < <(sed -n 's/^test result: [a-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' <<<"$out")
done
echo "aarch64 tests under qemu: ${#tests[@]} binaries, $passed passed, $failed failed, $ignored ignored"

bin="target/$target/debug/tengen"
file -b "$bin" | grep -q "ARM aarch64" || { echo "$bin is not an aarch64 binary" >&2; exit 1; }
smoke() {
    local out
    out=$(printf 'boardsize 9\nkomi 7\nplay B E5\nplay W C3\nplay B G7\ngenmove W\nshowboard\nquit\n' | run_qemu "$bin" gtp "$@")
    # Every command answered with success, and genmove named a point or pass.
    if grep -q '^?' <<<"$out" || ! grep -Eq '^= ([A-HJ-T][0-9]+|pass|resign)$' <<<"$out"; then
        echo "aarch64 GTP smoke session failed ($*):" >&2
        echo "$out" >&2
        return 1
    fi
    echo "aarch64 GTP smoke ($*): genmove W -> $(grep -Eo '^= ([A-HJ-T][0-9]+|pass|resign)$' <<<"$out" | head -1)"
}
# The classical engine, then the network built into the binary (a few visits: qemu is slow).
smoke --model none --level 10
smoke --backend tract --threads 1 --visits 16
