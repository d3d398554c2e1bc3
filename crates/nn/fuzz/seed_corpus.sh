#!/bin/sh
# Writes the seed corpus of the model_reader fuzz target into corpus/model_reader/:
# tiny complete models (versions 3 to 17, text and binary floats) written by an ignored test
# of tests/model_reader.rs, plus the first 4 KiB of each shared real network when present.
# Nothing here is committed: corpus/ is git-ignored.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus="$here/corpus/model_reader"
mkdir -p "$corpus"

TENGEN_FUZZ_SEEDS="$corpus" cargo test --manifest-path "$here/../Cargo.toml" \
    --test model_reader -- --ignored --exact write_fuzz_seeds

shared="${TENGEN_SHARED:-$here/../../../../shared}"
for model in "$shared"/models/*.bin.gz; do
    [ -f "$model" ] || continue
    # The header and first layer names; the weights after them add nothing but length.
    gzip -dc "$model" | head -c 4096 >"$corpus/$(basename "$model" .bin.gz).head" || true
done
ls -l "$corpus"
