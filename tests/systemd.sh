#!/usr/bin/env bash
# Checks systemd/tengen.service with systemd-analyze:
#  - `verify`, failing on any error AND on any warning (verify prints warnings to stderr and
#    may still exit 0): the unit alone, with the Jetson GPU drop-in (systemd/jetson-gpu.conf),
#    and with each board profile's memory limits (`tengen config --board NAME --systemd`);
#  - `security --offline=yes`: the overall exposure must be at most 3.0, for the unit alone
#    and with the Jetson drop-in (whose effect must show in the report, so that it was read).
#
# Usage: tests/systemd.sh [TENGEN_BINARY]   (default target/debug/tengen, built if missing)
#
# Nothing on the real system is touched: the unit is checked inside a throw-away root
# (`systemd-analyze verify --root=DIR`), where
#   DIR/etc/systemd/system/tengen.service  is the unit, byte for byte,
#   DIR/etc/systemd/system/tengen.service.d/  holds the drop-in under test, if any,
#   DIR/usr/bin/tengen                      is the given binary (hard link or copy), where
#                                           ExecStart= expects it,
#   DIR/usr/lib/systemd/system/             is a copy of this machine's system units, so the
#                                           unit's dependencies (sysinit.target,
#                                           modprobe@.service, network-online.target...) resolve.
# If this systemd-analyze has no --root, the unit is checked from a temporary copy whose
# only difference is ExecStart= naming the given binary's absolute path instead of
# /usr/bin/tengen (the script says so when it does that), with drop-ins beside it.
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
# Every check below runs on DIR/tengen.service plus what is in DIR/tengen.service.d/, where
# DIR is the throw-away root's /etc/systemd/system (or a plain folder without --root).
if systemd-analyze verify --help 2>/dev/null | grep -q -- '--root='; then
    root="$tmp/root"
    dir="$root/etc/systemd/system"
    mkdir -p "$dir" "$root/usr/bin" "$root/usr/lib/systemd"
    cp "$unit" "$dir/tengen.service"
    # A hard link where possible: a debug build is hundreds of MB.
    ln "$bin" "$root/usr/bin/tengen" 2>/dev/null || cp "$bin" "$root/usr/bin/tengen"
    for units in /usr/lib/systemd/system /lib/systemd/system; do
        if [[ -d "$units" ]]; then
            cp -a "$units" "$root/usr/lib/systemd/"
            break
        fi
    done
    analyze() { # COMMAND [OPTION...]: systemd-analyze on the root's tengen.service
        systemd-analyze "$@" --root="$root" tengen.service
    }
else
    echo "this systemd-analyze has no --root: verifying a copy whose ExecStart= names $bin"
    dir="$tmp/unit"
    mkdir -p "$dir"
    sed "s|^ExecStart=/usr/bin/tengen |ExecStart=$bin |" "$unit" >"$dir/tengen.service"
    grep -q "^ExecStart=$bin " "$dir/tengen.service"
    analyze() { # the unit's folder holds its drop-ins, which systemd-analyze reads too
        systemd-analyze "$@" "$dir/tengen.service"
    }
fi
dropins="$dir/tengen.service.d"

# Fails on an error and on any output (verify prints warnings to stderr and may exit 0).
verify() { # LABEL
    local status=0 out
    echo "systemd-analyze verify tengen.service ($1)"
    out="$(analyze verify 2>&1)" || status=$?
    [[ -z "$out" ]] || printf '%s\n' "$out"
    if [[ $status -ne 0 ]]; then
        echo "FAIL: systemd-analyze verify exited with $status ($1)" >&2
        exit 1
    fi
    if [[ -n "$out" ]]; then
        echo "FAIL: systemd-analyze verify printed the above ($1; warnings count as failures)" >&2
        exit 1
    fi
}

# systemd-analyze security's overall exposure, 0 (locked down) to 10: at most 3.0 ("OK").
# The table is kept in $report for the caller to look into.
max_exposure=3.0
exposure() { # LABEL
    local status=0 score
    report="$(analyze security --offline=yes --no-pager 2>&1)" || status=$?
    score="$(sed -n 's/^→ Overall exposure level for tengen.service: \([0-9.]*\) .*/\1/p' <<<"$report")"
    if [[ $status -ne 0 || -z "$score" ]]; then
        printf '%s\n' "$report"
        echo "FAIL: systemd-analyze security gave no exposure level ($1, exit $status)" >&2
        exit 1
    fi
    echo "exposure ($1): $score (at most $max_exposure)"
    if ! awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }'; then
        printf '%s\n' "$report" | grep '✗' || true
        echo "FAIL: exposure $score is above $max_exposure ($1)" >&2
        exit 1
    fi
}

verify "the unit"
exposure "the unit"
grep -q 'DeviceAllow=.*device ACL with some special devices' <<<"$report" ||
    { echo "FAIL: the unit's device list is not in the security report" >&2; exit 1; }

# The Jetson GPU drop-in lifts the device list: the report must show that it was read.
mkdir -p "$dropins"
cp systemd/jetson-gpu.conf "$dropins/"
verify "with jetson-gpu.conf"
exposure "with jetson-gpu.conf"
grep -q 'DeviceAllow=.*no device ACL' <<<"$report" ||
    { echo "FAIL: the security report does not reflect jetson-gpu.conf" >&2; exit 1; }
rm "$dropins/jetson-gpu.conf"

# Each board's memory limits, as `tengen config --systemd` writes them from its profile:
# the drop-in must name them and systemd must take them without a warning.
boards=0
for profile in boards/*/board.toml; do
    name="$(basename "$(dirname "$profile")")"
    "$bin" config --board "$name" --boards-dir boards --config /dev/null --systemd \
        >"$dropins/memory.conf" ||
        { echo "FAIL: $bin config --board $name --systemd failed" >&2; exit 1; }
    grep -Eqx 'MemoryMax=[0-9]+M' "$dropins/memory.conf" ||
        { cat "$dropins/memory.conf"; echo "FAIL: no MemoryMax= for $name" >&2; exit 1; }
    verify "with the memory limits of $name: $(grep -E '^Memory(High|Max)=' "$dropins/memory.conf" | paste -sd ' ')"
    boards=$((boards + 1))
done
rm "$dropins/memory.conf"

# A USB camera (the README's /dev/video0): the drop-in adds the video group and the
# video4linux device class; systemd takes it and the exposure stays within bounds.
printf '[camera]\nsource = "/dev/video0"\n' >"$tmp/camera.toml"
"$bin" config --config "$tmp/camera.toml" --systemd >"$dropins/camera.conf" ||
    { echo "FAIL: $bin config --systemd with a camera failed" >&2; exit 1; }
grep -qx 'DeviceAllow=char-video4linux rw' "$dropins/camera.conf" &&
    grep -qx 'SupplementaryGroups=video' "$dropins/camera.conf" ||
    { cat "$dropins/camera.conf"; echo "FAIL: no camera device rule in the drop-in" >&2; exit 1; }
verify "with a /dev/video0 camera"
exposure "with a /dev/video0 camera"
analyze security --offline=yes --no-pager 2>&1 | grep -q 'video4linux' ||
    { echo "FAIL: the security report does not reflect the camera's device rule" >&2; exit 1; }
rm "$dropins/camera.conf"

echo "systemd unit: $unit verifies clean, alone, with systemd/jetson-gpu.conf, with a camera and with the memory limits of $boards board profiles; exposure at most $max_exposure"
