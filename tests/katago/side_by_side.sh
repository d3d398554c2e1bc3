#!/usr/bin/env bash
# Tengen beside KataGo on this machine, in one run (issue 25). Not part of CI: KataGo is
# built from its public source into a cache directory, never into the repository.
#
#   tests/katago/side_by_side.sh --build     # build KataGo (Eigen, AVX2) into the cache first
#   tests/katago/side_by_side.sh             # visits/s of both, interleaved, with the ratios
#   tests/katago/side_by_side.sh --match     # an equal-visits match, Tengen (A) against KataGo (B)
#
# The speed run: for each round, board and thread count, `katago benchmark` and then
# `tengen bench search` on each backend (A B A B ...), both on positions of the same game
# (one the network plays itself at one visit a move, saved as SGF and given to both), the
# same network, visits and threads. It prints each engine's visits/s per configuration (the
# mean over the rounds) and Tengen's ratio to KataGo, with the CPU and the commit.
#
# Options, with defaults:
#   --tengen PATH        $CARGO_TARGET_DIR/debug/tengen, else target/debug/tengen (build it
#                        with `cargo build --profile test -p tengen --features ort` for ONNX
#                        Runtime; the dev profile leaves Tengen's own crates unoptimized)
#   --katago PATH        the cached build (KATAGO_CACHE, default ~/.cache/tengen/katago)
#   --model FILE         models/g170-b6c96.bin.gz
#   --boards 9,19  --threads 1,2  --visits 800  --positions 6  --rounds 2
#   --backends tract,ort-fp32,ort-int8 (a backend alone runs at Tengen's default precision,
#                        `auto`: `native` is int16 on CPUs with AVX-512 VNNI, `ort` fp32;
#                        `native-fp32`, `native-int16` name one)
#   --transformer FILE   also measure this net (default: b10c384h6nbttflrs.bin.gz under
#                        $TENGEN_SHARED/models if present; `none` to skip), at
#   --transformer-visits 16 on 2 positions, one round, on --transformer-boards 19
#   --out DIR            where SGFs and logs go (default: a new directory under the cache)
# Match options: --games 10 --board 9 --match-visits 200 --backend ort --opening-moves 4
#   --opening-seed 1 (games 2k and 2k+1 share an opening with colours swapped);
#   --match-time SECS plays at equal time instead (each engine searches SECS a move, no
#   visit limit); --match-threads N (1) search threads for both; --tengen-args "..."
#   appends flags to Tengen's command line (e.g. "--precision int8").
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${KATAGO_CACHE:-$HOME/.cache/tengen/katago}"
shared="${TENGEN_SHARED:-$repo/../shared}"

mode=bench
build=0
tengen="${CARGO_TARGET_DIR:-$repo/target}/debug/tengen"
katago=""
model="$repo/models/g170-b6c96.bin.gz"
boards=9,19
threads=1,2
visits=800
positions=6
rounds=2
backends=tract,ort-fp32,ort-int8
transformer=""
transformer_visits=16
transformer_boards=19
out=""
games=10
board=9
match_visits=200
backend=ort
opening_moves=4
opening_seed=1
match_time=""
match_threads=1
tengen_args=""

while [[ $# -gt 0 ]]; do
    case "$1" in
        --build) build=1 ;;
        --bench) mode=bench ;;
        --match) mode=match ;;
        --tengen) tengen="$2"; shift ;;
        --katago) katago="$2"; shift ;;
        --model) model="$2"; shift ;;
        --boards) boards="$2"; shift ;;
        --threads) threads="$2"; shift ;;
        --visits) visits="$2"; shift ;;
        --positions) positions="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        --backends) backends="$2"; shift ;;
        --transformer) transformer="$2"; shift ;;
        --transformer-visits) transformer_visits="$2"; shift ;;
        --transformer-boards) transformer_boards="$2"; shift ;;
        --out) out="$2"; shift ;;
        --games) games="$2"; shift ;;
        --board) board="$2"; shift ;;
        --match-visits) match_visits="$2"; shift ;;
        --backend) backend="$2"; shift ;;
        --opening-moves) opening_moves="$2"; shift ;;
        --opening-seed) opening_seed="$2"; shift ;;
        --match-time) match_time="$2"; shift ;;
        --match-threads) match_threads="$2"; shift ;;
        --tengen-args) tengen_args="$2"; shift ;;
        -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

if [[ $build == 1 ]]; then
    katago="$("$here/build_katago.sh")"
fi
if [[ -z "$katago" ]]; then
    katago="$(ls -1 "$cache"/katago-v* 2>/dev/null | sort -V | tail -n 1 || true)"
fi
[[ -x "$katago" ]] || { echo "no KataGo binary: run with --build, or give --katago PATH" >&2; exit 1; }
[[ -x "$tengen" ]] || { echo "no tengen binary at $tengen: build it, or give --tengen PATH" >&2; exit 1; }
[[ -f "$model" ]] || { echo "no network at $model" >&2; exit 1; }
if [[ -z "$transformer" && -f "$shared/models/b10c384h6nbttflrs.bin.gz" ]]; then
    transformer="$shared/models/b10c384h6nbttflrs.bin.gz"
fi
[[ "$transformer" == none ]] && transformer=""
if [[ ",$backends,$backend," == *,ort* && -z "${ORT_DYLIB_PATH:-}" ]]; then
    ORT_DYLIB_PATH="$("$repo/crates/nn/scripts/fetch-onnxruntime.sh")" || {
        echo "ONNX Runtime is needed for the ort backend and could not be fetched" >&2
        exit 1
    }
    export ORT_DYLIB_PATH
fi
out="${out:-$cache/runs/$(date -u +%Y%m%dT%H%M%SZ)-$mode}"
mkdir -p "$out"
export RUST_LOG="${RUST_LOG:-warn}"

cpu="$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"
commit="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- crates || echo '+changes')"
kver="$("$katago" version 2>/dev/null | head -n 1 || true)"
echo "date $(date -u '+%Y-%m-%d %H:%M UTC'); CPU $cpu, $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tengen $tengen at commit $commit; $kver ($katago)"
echo "logs in $out"

# Everything runs at a lower priority: the machine is shared.
run() { nice -n 10 "$@"; }

# An SGF of a game the network plays itself at one visit a move, on a `size` board.
positions_game() {
    local size="$1" net="$2" dir="$out/positions-$size-$(basename "$net" .bin.gz)"
    if [[ ! -f "$dir/game-0000.sgf" ]]; then
        local engine="$tengen gtp --model $net --visits 1 --no-resign"
        run "$tengen" match --engine-a "$engine" --engine-b "$engine" --games 1 --board "$size" \
            --max-moves $((size * size * 2)) --sgf-dir "$dir" >"$dir.log" 2>&1 ||
            { echo "could not play the positions' game (see $dir.log)" >&2; return 1; }
    fi
    echo "$dir/game-0000.sgf"
}

# Appends `net board threads engine visits/s evals/s` lines to $out/results.tsv.
measure() {
    local net="$1" size="$2" t="$3" v="$4" n="$5" round="$6" sgf log line b
    sgf="$(positions_game "$size" "$net")"
    log="$out/katago-$(basename "$net" .bin.gz)-$size-t$t-r$round.log"
    if run "$katago" benchmark -config "$here/bench.cfg" -model "$net" -v "$v" -t "$t" \
        -n "$n" -sgf "$sgf" >"$log" 2>&1; then
        line="$(grep -a 'visits/s = ' "$log" | tail -n 1 | tr '\r' '\n' | grep 'visits/s' | tail -n 1)"
        echo "$net $size $t katago $(sed -E 's/.*visits\/s = ([0-9.]+).*nnEvals\/s = ([0-9.]+).*/\1 \2/' <<<"$line")" >>"$out/results.tsv"
    else
        echo "katago benchmark failed on $size x $size, $t thread(s): see $log" >&2
    fi
    for b in ${backends//,/ }; do
        # `ort-int8`, `ort-fp32`: ONNX Runtime at that precision.
        local kind="${b%%-*}" precision=()
        [[ "$b" == *-* ]] && precision=(--precision "${b#*-}")
        log="$out/tengen-$b-$(basename "$net" .bin.gz)-$size-t$t-r$round.log"
        if run "$tengen" bench search --model "$net" --board "$size" --visits "$v" --threads "$t" \
            --backend "$kind" "${precision[@]}" --positions "$n" --sgf "$sgf" >"$log" 2>&1; then
            # The table's row: backend, threads, visits/s, evals/s, ...
            awk -v b="$kind" -v t="$t" -v pre="$net $size $t tengen-$b" \
                '$1 == b && $2 == t { print pre, $3, $4 }' "$log" >>"$out/results.tsv"
        else
            echo "tengen bench search failed ($b, $size x $size, $t thread(s)): see $log" >&2
        fi
    done
}

summary() {
    awk -v backends="$backends" '
        { key = $1 SUBSEP $2 SUBSEP $3; n[key, $4]++; vps[key, $4] += $5; eps[key, $4] += $6
          if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
        END {
            nb = split(backends, be, ",")
            printf "%-26s %5s %7s %10s", "network", "board", "threads", "KataGo v/s"
            for (i = 1; i <= nb; i++) printf " %11s %6s", be[i] " v/s", "ratio"
            printf "\n"
            for (j = 1; j <= k; j++) {
                split(order[j], f, SUBSEP)
                net = f[1]; sub(/.*\//, "", net); sub(/\.bin\.gz$/, "", net)
                kk = (order[j] SUBSEP "katago") in n ? vps[order[j], "katago"] / n[order[j], "katago"] : 0
                printf "%-26s %5s %7s", net, f[2] "x" f[2], f[3]
                if (kk > 0) printf " %10.1f", kk; else printf " %10s", "-"
                for (i = 1; i <= nb; i++) {
                    e = "tengen-" be[i]
                    if ((order[j] SUBSEP e) in n) {
                        t = vps[order[j], e] / n[order[j], e]
                        if (kk > 0) printf " %11.1f %5.2fx", t, t / kk; else printf " %11.1f %6s", t, "-"
                    } else printf " %11s %6s", "-", "-"
                }
                printf "\n"
            }
        }' "$out/results.tsv"
}

if [[ $mode == bench ]]; then
    : >"$out/results.tsv"
    for r in $(seq 1 "$rounds"); do
        for size in ${boards//,/ }; do
            for t in ${threads//,/ }; do
                echo "round $r: ${size}x$size, $t thread(s)" >&2
                measure "$model" "$size" "$t" "$visits" "$positions" "$r"
            done
        done
    done
    if [[ -n "$transformer" ]]; then
        for size in ${transformer_boards//,/ }; do
            for t in ${threads//,/ }; do
                echo "transformer: ${size}x$size, $t thread(s)" >&2
                measure "$transformer" "$size" "$t" "$transformer_visits" 2 1
            done
        done
    fi
    echo "visits/s, mean of $rounds round(s) interleaved ($visits visits on $positions positions; transformer one round of $transformer_visits on 2); ratio: Tengen / KataGo"
    summary | tee "$out/summary.txt"
    echo "per-run figures: $out/results.tsv (network, board, threads, engine, visits/s, evals/s)"
    echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
else
    if [[ -n "$match_time" ]]; then
        # Equal time: a time limit a move and no visit limit on either side.
        kcmd="$katago gtp -config $here/match.cfg -model $model -override-config maxTime=$match_time,maxVisits=1000000000,numSearchThreads=$match_threads"
        tcmd="$tengen gtp --config $here/match.cfg --model $model --backend $backend --move-time $match_time --threads $match_threads $tengen_args"
        what="equal time ($match_time s a move, $match_threads thread(s) each)"
    else
        kcmd="$katago gtp -config $here/match.cfg -model $model -override-config maxVisits=$match_visits,numSearchThreads=$match_threads"
        tcmd="$tengen gtp --config $here/match.cfg --model $model --backend $backend --visits $match_visits --threads $match_threads $tengen_args"
        what="equal visits ($match_visits)"
    fi
    echo "$what, ${board}x$board, $games games, openings of $opening_moves random moves (seed $opening_seed), colours swapped in each pair"
    run "$tengen" match --engine-a "$tcmd" --engine-b "$kcmd" --games "$games" --board "$board" \
        --opening-moves "$opening_moves" --opening-seed "$opening_seed" --sgf-dir "$out/games" \
        2> >(tee "$out/match.log" >&2) | tee "$out/result.txt"
fi
