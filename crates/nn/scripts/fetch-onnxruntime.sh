#!/usr/bin/env bash
# Fetches the ONNX Runtime shared library from the `onnxruntime` PyPI wheel into a cache
# directory and prints the library's path (for ORT_DYLIB_PATH). Idempotent: a cached copy is
# reused without touching the network. Without network (or pip) it prints why on stderr and
# exits 1, printing nothing on stdout, so callers can skip the ONNX Runtime tests.
#
#   export ORT_DYLIB_PATH="$(crates/nn/scripts/fetch-onnxruntime.sh)"
#
# ORT_VERSION picks the wheel (default below: the version the `api-31` build was tested with;
# tengen-nn's `ort` feature needs ONNX Runtime 1.31 or newer). TENGEN_CACHE_DIR moves the cache.
set -euo pipefail

version="${ORT_VERSION:-1.31.1}"
cache="${TENGEN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tengen}/onnxruntime-$version"

find_lib() {
    # The versioned file is the real library; the unversioned name may be missing in wheels.
    find "$cache/unpacked/onnxruntime/capi" -maxdepth 1 -type f -name 'libonnxruntime.so*' 2>/dev/null \
        | sort | tail -n 1 || true
}

lib="$(find_lib)"
if [[ -n "$lib" ]]; then
    echo "$lib"
    exit 0
fi

fail() {
    echo "fetch-onnxruntime: $*" >&2
    exit 1
}

python="$(command -v python3 || command -v python || true)"
[[ -n "$python" ]] || fail "python3 is needed to fetch and unpack the onnxruntime wheel"
"$python" -m pip --version >/dev/null 2>&1 || fail "pip is not available"

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/download.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: \
        --dest "$tmp" "onnxruntime==$version" >"$tmp/pip.log" 2>&1; then
    tail -n 5 "$tmp/pip.log" >&2 || true
    fail "could not download onnxruntime==$version (no network or no wheel for this platform)"
fi

wheel="$(find "$tmp" -maxdepth 1 -name 'onnxruntime-*.whl' | head -n 1)"
[[ -n "$wheel" ]] || fail "pip did not produce an onnxruntime wheel"

# Unpack beside the final place, then move in one step so a concurrent run never sees half a copy.
"$python" -m zipfile -e "$wheel" "$tmp/unpacked" || fail "could not unpack $wheel"
rm -rf "$cache/unpacked"
mv "$tmp/unpacked" "$cache/unpacked"

lib="$(find_lib)"
[[ -n "$lib" ]] || fail "no libonnxruntime.so in $wheel"
echo "$lib"
