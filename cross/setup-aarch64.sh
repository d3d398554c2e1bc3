#!/usr/bin/env bash
# Installs what building for aarch64 without Docker needs, when it is missing: the Rust
# target, Debian's cross linker (gcc-aarch64-linux-gnu) and, with --qemu, qemu-user to run
# the result. Idempotent.
set -euo pipefail
target=aarch64-unknown-linux-gnu
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
packages=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
[[ "${1:-}" == --qemu ]] && ! command -v qemu-aarch64 >/dev/null 2>&1 && packages+=(qemu-user)
if ((${#packages[@]})); then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get install -y "${packages[@]}" || $SUDO sh -c "apt-get update && apt-get install -y ${packages[*]}"
fi
