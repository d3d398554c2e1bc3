#!/usr/bin/env bash
# Runs the daemon under the real unit, sandbox and all: boots systemd in a container
# (systemd-nspawn, on a throw-away overlay of this machine's root, with its own network),
# starts tengen.service there and checks that it reaches READY, writes its state
# directory, answers GTP on a pty serial port owned by root:dialout, publishes over MQTT
# and stops cleanly; that it runs with no capabilities, a system call filter and its own
# user namespace; and the same with systemd/jetson-gpu.conf and a board's memory drop-in,
# and with the x86 kiosk's profile running the network on its own backend and on ONNX
# Runtime when it can.
# A drop-in for the test turns a refused system call into SIGSYS (the unit says EPERM),
# so that a call the filter refuses kills the daemon and fails the test.
#
# Usage: tests/sandbox.sh [TENGEN_BINARY]   (default target/debug/tengen). Needs root.
# It skips, saying why, where no container can boot (not root, no systemd-nspawn); every
# failure after the boot fails. Mounts and processes it made are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/debug/tengen}")"
[[ -x "$bin" ]] || { echo "sandbox: $bin is not an executable" >&2; exit 1; }

skip() {
    echo "sandbox: skipped: $*"
    exit 0
}
fail() {
    echo "sandbox: FAIL: $*" >&2
    if [[ -n "${ct_leader:-}" ]]; then
        in_ct journalctl -u tengen.service -n 30 --no-pager -o cat >&2 || true
    fi
    exit 1
}
export PATH="$PATH:/usr/sbin" # mosquitto
for tool in socat mosquitto mosquitto_sub python3; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
done

# shellcheck source=tests/container.sh
. tests/container.sh
broker=""
trap 'if [[ -n "$broker" ]]; then kill "$broker" 2>/dev/null || true; fi; container_cleanup' EXIT
container_prepare || skip "$ct_why"
root="$ct_root"
# Everything below writes under $root: never let that be this machine's /.
if [[ -z "$root" ]] || ! mountpoint -q "$root"; then
    fail "no container root mounted"
fi
install -m 0644 systemd/tengen.service "$root/etc/systemd/system/tengen.service"
install -D -m 0644 systemd/tengen.sysusers "$root/usr/lib/sysusers.d/tengen.conf"
install -d "$root/etc/tengen" "$root/etc/systemd/system/tengen.service.d" "$root/usr/share/tengen"
cp -r boards "$root/usr/share/tengen/"
cat >"$root/etc/tengen/tengen.toml" <<'EOF'
[mqtt]
host = "127.0.0.1"
port = 1883
device_id = "sandbox"
[serial]
port = "/dev/ttyGTP"
[game]
size = 9
[engine]
# The classical engine: this run is about the filter, and this debug binary would take
# long over the built-in network; the x86-kiosk run below plays the network.
model = "none"
EOF
echo 'TENGEN_ARGS=' >"$root/etc/default/tengen"
cat >"$root/etc/systemd/system/tengen.service.d/zz-test.conf" <<'EOF'
# The test's only change: a refused system call kills the daemon (SIGSYS) instead of
# failing with EPERM, so that the test sees it.
[Service]
SystemCallErrorNumber=kill
EOF
container_boot --bind-ro="$bin:/usr/bin/tengen" || skip "$ct_why"
echo "sandbox: container booted ($(in_ct systemctl --version | head -n 1))"

in_ct systemd-sysusers
in_ct sh -c 'chgrp tengen /etc/tengen/tengen.toml && chmod 0640 /etc/tengen/tengen.toml'
# The broker, in the container's network.
nsenter -t "$ct_leader" -n mosquitto -p 1883 >/dev/null 2>&1 &
broker=$!

# A serial port: a pty owned by root:dialout like /dev/ttyUSB0, bridged to a TCP port.
# socat ends with the one connection the test makes, and the pty with it.
serial_port() {
    # The last run's socat removes its link as it exits: let it go first.
    for _ in $(seq 50); do
        in_ct test -e /dev/ttyGTP || break
        sleep 0.1
    done
    in_ct socat pty,link=/dev/ttyGTP,rawer,group=dialout,mode=660 TCP-LISTEN:4999,reuseaddr \
        >/dev/null 2>&1 &
    for _ in $(seq 50); do
        in_ct test -e /dev/ttyGTP && return 0
        sleep 0.1
    done
    fail "socat made no pty"
}

run_once() { # LABEL
    local label="$1" pid status gtp text
    serial_port
    in_ct systemctl daemon-reload
    in_ct systemctl start tengen.service || fail "$label: tengen.service did not start"
    [[ "$(in_ct systemctl is-active tengen.service)" == active ]] || fail "$label: not active"
    pid="$(in_ct systemctl show -p MainPID --value tengen.service)"
    status="$(in_ct cat "/proc/$pid/status")"
    grep -q '^CapBnd:[[:space:]]*0000000000000000$' <<<"$status" || fail "$label: capabilities left"
    grep -q '^Seccomp:[[:space:]]*2$' <<<"$status" || fail "$label: no system call filter"
    grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$status" || fail "$label: NoNewPrivs is off"
    [[ "$(in_ct cat "/proc/$pid/uid_map" | wc -l)" -eq 2 ]] || fail "$label: no private user namespace"
    # GTP over the serial port: the engine must answer and play.
    gtp="$(nsenter -t "$ct_leader" -n python3 - <<'EOF'
import socket, time
s = socket.create_connection(("127.0.0.1", 4999), timeout=30)
s.sendall(b"name\nclear_board\nplay b E5\ngenmove w\n")
buf, end = b"", time.monotonic() + 30
while buf.count(b"\n\n") < 4 and time.monotonic() < end:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print(buf.decode().replace("\n\n", " | ").strip())
EOF
)" || fail "$label: no GTP session on the serial port"
    grep -Eq '^= Tengen \| = \| = \| = [A-HJ-T][0-9]+ \|$' <<<"$gtp" || fail "$label: GTP on the serial port answered: $gtp"
    # MQTT: the retained game state holds the moves just played.
    text="$(nsenter -t "$ct_leader" -n timeout 10 mosquitto_sub -p 1883 -t tengen/sandbox/state -C 1)" ||
        fail "$label: no state message over MQTT"
    grep -q '"B E5"' <<<"$text" || fail "$label: the MQTT state lacks B E5: $text"
    # The state directory: the journal, private to the daemon (UMask=0077).
    [[ "$(in_ct stat -c '%U %a' /var/lib/tengen/journal.jsonl)" == "tengen 600" ]] ||
        fail "$label: journal.jsonl is $(in_ct stat -c '%U %a' /var/lib/tengen/journal.jsonl)"
    in_ct systemctl stop tengen.service
    [[ "$(in_ct systemctl show -p Result --value tengen.service)" == success ]] ||
        fail "$label: the daemon did not stop cleanly ($(in_ct systemctl show -p Result -p ExecMainStatus tengen.service | paste -sd ' '))"
    [[ "$(in_ct systemctl show -p NRestarts --value tengen.service)" == 0 ]] || fail "$label: the daemon restarted"
    echo "sandbox ($label): READY, GTP on a root:dialout pty answered ($gtp), MQTT state published, journal 0600 tengen, stopped cleanly; no capabilities, seccomp on, private user namespace"
}

run_once "the unit"
cp systemd/jetson-gpu.conf "$root/etc/systemd/system/tengen.service.d/"
"$bin" config --board jetson-nano --boards-dir boards --config /dev/null --systemd \
    >"$root/etc/systemd/system/tengen.service.d/memory.conf"
run_once "with jetson-gpu.conf and jetson-nano's memory.conf"
[[ "$(in_ct systemctl show -p MemoryMax --value tengen.service)" == $((2560 << 20)) ]] ||
    fail "MemoryMax is not jetson-nano's 2560M"

# The x86 kiosk's network (g170-b6c96, built into the binary) on the backend its profile
# names (native; `tengen config` says which), then on ONNX Runtime (CPU) where a build
# with the `ort` feature and the library (ORT_DYLIB_PATH, as tests/run.sh sets it) are at
# hand: each backend's threads, memory maps and CPU detection under the filter.
rm "$root/etc/systemd/system/tengen.service.d/jetson-gpu.conf"
# The profile's network, not the configuration's `model = "none"`.
# (Rewritten in place: the file keeps its owner and mode.)
kept="$(sed '/^\[engine\]/,$d' "$root/etc/tengen/tengen.toml")"
printf '%s\n' "$kept" >"$root/etc/tengen/tengen.toml"
"$bin" config --board x86-kiosk --boards-dir boards --config /dev/null --systemd \
    >"$root/etc/systemd/system/tengen.service.d/memory.conf"
echo "TENGEN_ARGS=--board x86-kiosk" >"$root/etc/default/tengen"
want="$("$bin" config --board x86-kiosk --boards-dir boards --config /dev/null |
    sed -n 's/^backend = "\(.*\)"$/\1/p' | head -n 1)"
since="$(in_ct date '+%Y-%m-%d %H:%M:%S')"
run_once "x86-kiosk: g170-b6c96 on its profile's backend ($want)"
log="$(in_ct journalctl -u tengen.service --since "$since" --no-pager -o cat)"
grep -q "network backend: $want" <<<"$log" ||
    fail "the network did not run on $want: $(grep -i 'backend' <<<"$log" | paste -sd ' ')"
echo "sandbox: the network ran on $want under the filter"

if [[ -z "${ORT_DYLIB_PATH:-}" || ! -f "$ORT_DYLIB_PATH" ]]; then
    echo "sandbox: the ONNX Runtime run skipped: no ORT_DYLIB_PATH"
else
    printf '%s\n' "$kept" "[engine]" 'backend = "ort"' >"$root/etc/tengen/tengen.toml"
    install -m 0644 "$ORT_DYLIB_PATH" "$root/usr/lib/libonnxruntime-sandbox.so"
    printf '%s\n' "TENGEN_ARGS=--board x86-kiosk" "ORT_DYLIB_PATH=/usr/lib/libonnxruntime-sandbox.so" \
        >"$root/etc/default/tengen"
    since="$(in_ct date '+%Y-%m-%d %H:%M:%S')"
    run_once "x86-kiosk: g170-b6c96 on ONNX Runtime"
    log="$(in_ct journalctl -u tengen.service --since "$since" --no-pager -o cat)"
    if grep -qF 'built without the' <<<"$log"; then
        echo "sandbox: the ONNX Runtime run fell back to tract: $bin was built without the ort feature"
    else
        grep -q 'network backend: ort CPU' <<<"$log" ||
            fail "the network did not run on ONNX Runtime: $(grep -i 'backend' <<<"$log" | paste -sd ' ')"
        echo "sandbox: the network ran on ONNX Runtime (CPU) under the filter"
    fi
fi
echo "sandbox: passed"
