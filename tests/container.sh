# shellcheck shell=bash disable=SC2034  # ct_why and ct_root are read by the caller
# Sourced by tests/sandbox.sh and tests/deb.sh: a throw-away container booted with systemd
# (systemd-nspawn) on a tmpfs overlay of this machine's root, with its own network.
#
#   container_prepare         mounts the overlay at $ct_root (set it up there before boot)
#   container_boot [ARGS...]  boots it (ARGS go to systemd-nspawn) and waits for systemd
#   in_ct CMD...              runs CMD inside (all the container's namespaces)
#   container_cleanup         powers it off and unmounts; call it from the caller's EXIT trap
#
# Where no container can be had (not root, no systemd-nspawn, no overlay, no boot),
# container_prepare and container_boot return 1 with the reason in $ct_why: the caller
# skips. (Call them directly, not in $(...): they set variables and start nspawn.)

ct_tmp=""
ct_root=""
ct_nspawn=""
ct_leader=""
ct_why=""

container_prepare() {
    if [[ $(id -u) -ne 0 ]]; then
        ct_why="needs root (mounts and a container)"
        return 1
    fi
    for tool in systemd-nspawn nsenter; do
        command -v "$tool" >/dev/null 2>&1 || { ct_why="$tool is not installed"; return 1; }
    done
    ct_tmp="$(mktemp -d)"
    ct_root="$ct_tmp/root"
    mkdir -p "$ct_tmp/rw" "$ct_root"
    mount -t tmpfs -o size=512M tmpfs "$ct_tmp/rw"
    mkdir -p "$ct_tmp/rw/upper" "$ct_tmp/rw/work"
    if ! mount -t overlay overlay \
        -o "lowerdir=/,upperdir=$ct_tmp/rw/upper,workdir=$ct_tmp/rw/work" "$ct_root"; then
        ct_why="cannot mount an overlay of / (a container of its own?)"
        return 1
    fi
    if command -v systemd-id128 >/dev/null 2>&1; then
        systemd-id128 new >"$ct_root/etc/machine-id"
    else
        python3 -c 'import uuid; print(uuid.uuid4().hex)' >"$ct_root/etc/machine-id"
    fi
    # Only what a test starts runs in there, and maintainer scripts may start services
    # (an image's policy-rc.d may forbid it).
    rm -rf "$ct_root/etc/systemd/system/multi-user.target.wants"
    rm -f "$ct_root/usr/sbin/policy-rc.d"
}

container_boot() { # [SYSTEMD-NSPAWN ARGS...]
    local state=""
    systemd-nspawn -D "$ct_root" --boot --register=no --keep-unit --link-journal=no \
        --private-network --machine="tengen-test-$$" --console=pipe --resolv-conf=off \
        --timezone=off "$@" </dev/null >"$ct_tmp/console.log" 2>&1 &
    ct_nspawn=$!
    # The container's init: nspawn's child that runs systemd.
    for _ in $(seq 100); do
        ct_leader="$(pgrep -P "$ct_nspawn" -x systemd || true)"
        [[ -n "$ct_leader" ]] && break
        if ! kill -0 "$ct_nspawn" 2>/dev/null; then
            ct_why="systemd-nspawn could not boot a container: $(tail -n 3 "$ct_tmp/console.log" | paste -sd ' ')"
            return 1
        fi
        sleep 0.2
    done
    [[ -n "$ct_leader" ]] || { ct_why="no systemd in the container after 20 s"; return 1; }
    for _ in $(seq 100); do
        state="$(in_ct systemctl is-system-running 2>/dev/null || true)"
        [[ "$state" == running || "$state" == degraded ]] && return 0
        sleep 0.2
    done
    ct_why="the container did not finish booting ($state)"
    return 1
}

in_ct() { nsenter -t "$ct_leader" -a "$@"; }

container_cleanup() {
    if [[ -n "$ct_nspawn" ]]; then
        kill "$ct_nspawn" 2>/dev/null || true # nspawn powers the container off
        for _ in $(seq 50); do
            kill -0 "$ct_nspawn" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$ct_nspawn" 2>/dev/null || true
        wait "$ct_nspawn" 2>/dev/null || true
        ct_nspawn=""
    fi
    if [[ -n "$ct_tmp" ]]; then
        mountpoint -q "$ct_root" && umount "$ct_root"
        mountpoint -q "$ct_tmp/rw" && umount "$ct_tmp/rw"
        rm -rf "$ct_tmp"
        ct_tmp=""
    fi
    ct_leader=""
}
