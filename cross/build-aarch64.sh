#!/usr/bin/env bash
# Builds the release binary for aarch64 (Jetson, Raspberry Pi) without Docker, with
# Debian's cross toolchain; installs the Rust target and the linker when missing.
# Extra arguments go to cargo, e.g. `--features ort` (or `tensorrt` for a Jetson).
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
cross/setup-aarch64.sh
cargo build --release --target "$target" -p tengen "$@"
echo "built target/$target/release/tengen"
