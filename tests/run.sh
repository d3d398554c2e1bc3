#!/usr/bin/env bash
# Runs every check and test suite of the workspace; this is what CI runs (.ci/run).
# It first installs whatever the suites need that is missing, then fails on the first problem.
# Golden tests read ../shared (or $TENGEN_SHARED) and print "golden <file>: <agreed>/<total> agree".
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n== %s\n' "$*"; }

have() { cargo "$1" --version >/dev/null 2>&1; }
for tool in fmt clippy; do
    have "$tool" || rustup component add "${tool/fmt/rustfmt}" || true
done

if have fmt; then
    step "format"
    cargo fmt --all -- --check
else
    echo "warning: rustfmt is not installed and could not be installed; format check skipped"
fi
if have clippy; then
    step "lint"
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy -p tengen-nn --features ort --all-targets -- -D warnings
else
    echo "warning: clippy is not installed and could not be installed; lint skipped"
fi
step "tests"
cargo test --workspace -- --nocapture

# ONNX Runtime parity: the same golden outputs through the `ort` backend, on the library from
# the `onnxruntime` PyPI wheel (fetched once into ~/.cache/tengen). Tract's half already ran above.
step "ONNX Runtime parity"
if [[ -z "${ORT_DYLIB_PATH:-}" ]]; then
    ORT_DYLIB_PATH="$(crates/nn/scripts/fetch-onnxruntime.sh)" || ORT_DYLIB_PATH=""
fi
if [[ -n "$ORT_DYLIB_PATH" ]]; then
    export ORT_DYLIB_PATH
    cargo test -p tengen-nn --features ort --test golden_rawnn --test backends -- --nocapture --skip through_tract
else
    echo "ONNX Runtime parity: skipped (no onnxruntime library could be fetched)"
fi
