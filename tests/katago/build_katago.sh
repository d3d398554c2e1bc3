#!/usr/bin/env bash
# Builds KataGo (Eigen backend, AVX2) from its public source into a cache directory, for the
# side-by-side measurements in side_by_side.sh. The build is the user's: nothing of it lands
# in the repository.
#
#   tests/katago/build_katago.sh            # clone the tag from GitHub
#   KATAGO_GIT_DIR=/path/to/KataGo.git tests/katago/build_katago.sh   # or export it from a local git dir
#
# Environment: KATAGO_CACHE (default ~/.cache/tengen/katago), KATAGO_TAG (default v1.17.2).
# Needs cmake, g++, libeigen3-dev, zlib1g-dev and libzip-dev.
set -euo pipefail

cache="${KATAGO_CACHE:-$HOME/.cache/tengen/katago}"
tag="${KATAGO_TAG:-v1.17.2}"
src="$cache/src-$tag"
bin="$cache/katago-$tag"

if [[ -x "$bin" ]]; then
    echo "$bin"
    exit 0
fi
for tool in cmake g++ make; do
    command -v "$tool" >/dev/null || { echo "error: $tool is missing (apt-get install cmake g++ libeigen3-dev zlib1g-dev libzip-dev)" >&2; exit 1; }
done
mkdir -p "$cache"
if [[ ! -d "$src" ]]; then
    tmp="$cache/src-tmp.$$"
    rm -rf "$tmp"
    if [[ -n "${KATAGO_GIT_DIR:-}" ]]; then
        mkdir -p "$tmp"
        # Only the C++ sources; a snapshot may lack the large test models.
        git --git-dir="$KATAGO_GIT_DIR" archive "$tag" -- cpp ':!cpp/tests/models' | tar -x -C "$tmp"
    else
        git clone --quiet --depth 1 --branch "$tag" https://github.com/lightvector/KataGo "$tmp"
    fi
    mv "$tmp" "$src"
fi
build="$src/cpp/build-eigen"
mkdir -p "$build"
cd "$build"
# The machine is shared: one job at a lower priority.
nice -n 10 cmake .. -DUSE_BACKEND=EIGEN -DUSE_AVX2=1 -DCMAKE_BUILD_TYPE=Release -DNO_GIT_REVISION=1 >&2
nice -n 10 make -j"${KATAGO_JOBS:-1}" >&2
cp katago "$bin"
# The object files are large and only the binary is needed.
cd "$cache"
rm -rf "$build"
echo "$bin"
