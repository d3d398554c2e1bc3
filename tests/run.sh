#!/usr/bin/env bash
# Runs every check and test suite of the workspace; this is what CI runs (.ci/run).
# It first installs whatever the suites need that is missing, then fails on the first problem.
# Golden tests read ../shared (or $TENGEN_SHARED) and print "golden <file>: <agreed>/<total> agree";
# with the data present, TENGEN_REQUIRE_GOLDEN=1 makes a golden test that skips fail.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A CI run builds once from a clean clone: incremental compilation's saved state would only
# cost time there. Local runs keep it.
if [[ "${CI:-}" == true ]]; then
    export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
fi

# With the shared reference data present, a golden test that cannot find its part of it
# fails instead of saying it skipped. CI, or anyone who sets TENGEN_REQUIRE_GOLDEN=1, must
# have the data: say so now rather than after the build.
shared="${TENGEN_SHARED:-../shared}"
if [[ -d "$shared" ]]; then
    export TENGEN_REQUIRE_GOLDEN=1
elif [[ "${TENGEN_REQUIRE_GOLDEN:-}" == 1 || "${CI:-}" == true ]]; then
    echo "tests/run.sh: the shared reference data is missing at $shared (set TENGEN_SHARED);" \
        "the golden tests cannot run, and TENGEN_REQUIRE_GOLDEN=1 (or CI) requires them" >&2
    exit 1
fi

# Each step says how long the one before took, so a slow CI run shows where its time went.
last=$SECONDS
step() {
    printf '\n== %s (after %d s; the previous step took %d s)\n' "$*" "$SECONDS" $((SECONDS - last))
    last=$SECONDS
}

have() { cargo "$1" --version >/dev/null 2>&1; }

# The appliance's tests run a real broker (mosquitto), a real pty (socat), systemd's
# unit checker and a systemd container; install them when missing (Debian packages).
missing=()
command -v mosquitto >/dev/null 2>&1 || [[ -x /usr/sbin/mosquitto ]] || missing+=(mosquitto)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The sandbox test boots a container and reads MQTT with mosquitto's client.
command -v systemd-nspawn >/dev/null 2>&1 || missing+=(systemd-container)
command -v mosquitto_sub >/dev/null 2>&1 || missing+=(mosquitto-clients)
# tengen-vision's `gstreamer` feature links GStreamer and is tested with videotestsrc.
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
pkg-config --exists gstreamer-app-1.0 2>/dev/null ||
    missing+=(libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev)
compgen -G "/usr/lib/*/gstreamer-1.0/libgstvideotestsrc.so" >/dev/null ||
    missing+=(gstreamer1.0-plugins-base)
# The kiosk panel's browser test drives Debian's chromium (tests/panel/run.sh).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ((${#missing[@]})); then
    step "installing ${missing[*]}"
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get install -y "${missing[@]}" || $SUDO sh -c "apt-get update && apt-get install -y ${missing[*]}" ||
        echo "warning: could not install ${missing[*]}; the tests that need them will say they skipped"
fi
export PATH="$PATH:/usr/sbin"
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
    cargo clippy --workspace --all-targets --features tengen/ort,tengen/gstreamer -- -D warnings
else
    echo "warning: clippy is not installed and could not be installed; lint skipped"
fi
# The tests are built with the `ort` feature (its code is behind that feature only; nothing is
# linked) and run the network golden tests on ONNX Runtime too, with the library from the
# `onnxruntime` PyPI wheel, fetched once into ~/.cache/tengen; without it they say they skipped.
# The search's network suites (strength, tactics) then evaluate on it rather than on tract.
step "tests"
if [[ -z "${ORT_DYLIB_PATH:-}" ]]; then
    ORT_DYLIB_PATH="$(crates/nn/scripts/fetch-onnxruntime.sh)" || ORT_DYLIB_PATH=""
fi
if [[ -n "$ORT_DYLIB_PATH" ]]; then
    export ORT_DYLIB_PATH
else
    echo "warning: no onnxruntime library could be fetched; the ONNX Runtime parity tests will skip"
fi
# GStreamer sources (off by default; Jetson CSI cameras) are built in too, so their
# videotestsrc pipelines (the `gst` suite) run here: a separate build with the feature
# recompiled the camera crate and everything above it (nearly 4 minutes). The binaries the
# later stages use therefore link GStreamer, which this machine has (installed above).
tests=(cargo test --workspace --features tengen/ort,tengen/gstreamer)
"${tests[@]}" --no-run

# The boards' build (aarch64) runs at the lowest priority while the host suites run: they
# wait on brokers, ptys, streams and one another's threads, and leave a core idle much of
# the time. Its own target folder, so neither cargo waits for the other; its output is
# shown in its own step below.
aarch64_log=target/aarch64-build.log
nice -n 19 cross/test-aarch64.sh --build >"$aarch64_log" 2>&1 &
aarch64_build=$!
# A failing stage ends the run: the build (cargo and its rustc children) ends with it.
kill_tree() {
    local child
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
trap 'kill_tree "$aarch64_build"' EXIT
"${tests[@]}" -- --nocapture

# Real clients' own code (KaTrain's engine class, Sabaki's GTP controller, a Lizzie-style
# session) against the binary the tests just built, with the bundled network; the clients
# install once from PyPI and npm into ~/.cache/tengen/clients.
step "clients"
tests/clients/run.sh target/debug/tengen

# The kiosk panel in headless chromium (Playwright from PyPI, the system browser) against
# the daemon and mosquitto; screenshots at phone, laptop and 1080p sizes.
step "panel in a browser"
tests/panel/run.sh target/debug/tengen

# The binary the integration tests just ran (cargo test builds it as target/debug/tengen).
step "systemd unit"
tests/systemd.sh target/debug/tengen
# The same binary under the unit's sandbox, in a container booted with systemd.
step "systemd sandbox"
tests/sandbox.sh target/debug/tengen

# The boards' build: aarch64 test suites and GTP sessions under qemu-user.
step "aarch64"
aarch64_status=0
wait "$aarch64_build" || aarch64_status=$?
trap - EXIT
cat "$aarch64_log"
if ((aarch64_status)); then
    echo "the aarch64 build failed (exit $aarch64_status)" >&2
    exit 1
fi
echo "(the aarch64 build above ran beside the host suites)"
cross/test-aarch64.sh --run

# Both Debian packages, from the binaries tested above.
step "Debian packages"
tests/deb.sh test
step "all passed"
