#!/usr/bin/env bash
# Builds the release binary for aarch64 (Jetson, Raspberry Pi) without Docker, with
# Debian's cross toolchain; installs the Rust target and the linker when missing.
# Extra arguments go to cargo, e.g. `--features ort`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross
fi
cargo build --release --target "$target" -p tengen "$@"
echo "built target/$target/release/tengen"
