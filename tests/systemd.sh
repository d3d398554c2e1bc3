#!/usr/bin/env bash
# Verifies systemd/tengen.service with `systemd-analyze verify`, failing on any error AND on
# any warning (verify prints warnings to stderr and may still exit 0).
#
# Usage: tests/systemd.sh [TENGEN_BINARY]   (default target/debug/tengen, built if missing)
#
# Nothing on the real system is touched: the unit is checked inside a throw-away root
# (`systemd-analyze verify --root=DIR`), where
#   DIR/etc/systemd/system/tengen.service  is the unit, byte for byte,
#   DIR/usr/bin/tengen                      is the given binary (hard link or copy), where
#                                           ExecStart= expects it,
#   DIR/usr/lib/systemd/system/             is a copy of this machine's system units, so the
#                                           unit's dependencies (sysinit.target,
#                                           modprobe@.service, network-online.target...) resolve.
# With --root the unit is verified a second time with the Jetson GPU drop-in
# (systemd/jetson-gpu.conf) in DIR/etc/systemd/system/tengen.service.d/.
# If this systemd-analyze has no --root, the unit is verified from a temporary copy whose
# only difference is ExecStart= naming the given binary's absolute path instead of
# /usr/bin/tengen (the script says so when it does that).
set -euo pipefail
cd "$(dirname "$0")/.."

unit=systemd/tengen.service
bin="${1:-target/debug/tengen}"

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "systemd-analyze not found: installing systemd"
    if ! apt-get install -y systemd >/dev/null; then
        apt-get update >/dev/null
        apt-get install -y systemd >/dev/null
    fi
fi
if [[ ! -x "$bin" ]]; then
    if [[ "$bin" == target/debug/tengen ]]; then
        echo "building $bin"
        cargo build -p tengen --bin tengen
    else
        echo "error: $bin is not an executable" >&2
        exit 1
    fi
fi
bin="$(realpath "$bin")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

systemd-analyze --version | head -n 1
if systemd-analyze verify --help 2>/dev/null | grep -q -- '--root='; then
    root="$tmp/root"
    mkdir -p "$root/etc/systemd/system" "$root/usr/bin" "$root/usr/lib/systemd"
    cp "$unit" "$root/etc/systemd/system/tengen.service"
    # A hard link where possible: a debug build is hundreds of MB.
    ln "$bin" "$root/usr/bin/tengen" 2>/dev/null || cp "$bin" "$root/usr/bin/tengen"
    for units in /usr/lib/systemd/system /lib/systemd/system; do
        if [[ -d "$units" ]]; then
            cp -a "$units" "$root/usr/lib/systemd/"
            break
        fi
    done
    echo "systemd-analyze verify --root=$root tengen.service"
    status=0
    out="$(systemd-analyze verify --root="$root" tengen.service 2>&1)" || status=$?
    # Then with the Jetson GPU drop-in (systemd/jetson-gpu.conf) in place.
    if [[ $status -eq 0 && -z "$out" ]]; then
        mkdir -p "$root/etc/systemd/system/tengen.service.d"
        cp systemd/jetson-gpu.conf "$root/etc/systemd/system/tengen.service.d/"
        echo "systemd-analyze verify --root=$root tengen.service (with jetson-gpu.conf)"
        out="$(systemd-analyze verify --root="$root" tengen.service 2>&1)" || status=$?
        [[ $status -ne 0 || -n "$out" ]] || dropin=" and with systemd/jetson-gpu.conf"
    fi
else
    echo "this systemd-analyze has no --root: verifying a copy whose ExecStart= names $bin"
    mkdir -p "$tmp/unit"
    sed "s|^ExecStart=/usr/bin/tengen |ExecStart=$bin |" "$unit" >"$tmp/unit/tengen.service"
    grep -q "^ExecStart=$bin " "$tmp/unit/tengen.service"
    status=0
    out="$(systemd-analyze verify "$tmp/unit/tengen.service" 2>&1)" || status=$?
fi

if [[ -n "$out" ]]; then
    printf '%s\n' "$out"
fi
if [[ $status -ne 0 ]]; then
    echo "FAIL: systemd-analyze verify exited with $status" >&2
    exit 1
fi
if [[ -n "$out" ]]; then
    echo "FAIL: systemd-analyze verify printed the above (warnings count as failures)" >&2
    exit 1
fi
echo "systemd unit: $unit verifies clean${dropin:-}"
