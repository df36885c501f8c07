#!/usr/bin/env bash
# Where ♢10's time goes at 16 workers: one run per configuration, the harness measuring.
set -uo pipefail
bin=${BIN:-.devbin}; out=${1:-/tmp/diag}; L=${L:-10000}; R=${R:-1000}; W=${W:-16}
mkdir -p "$out/streams"
run() { # name workers rate length args...
  local name=$1 w=$2 r=$3 l=$4; shift 4
  local extra=(); for a in "$@"; do extra+=("--stgflow-arg=$a"); done
  mkdir -p "$out/$name"; ln -sfn ../streams "$out/$name/streams"
  "$bin/stgflow-bench" sweep --stgflow "$bin/stgflow" --out "$out/$name" --timeout 100 \
    --workload diamond --window 10 --rate "$r" --length "$l" --workers "$w" --repeat 1 "${extra[@]}" 2>&1 \
    | grep -v "^wrote" | sed "s/^/$name: /"
}
run w1-default 1 $R $L
run w1-no-parse-threads 1 $R $L --parse-threads=0
run w1-read 1 $R $L --read-on-workers
run w2-read 2 $R $L --read-on-workers
run w16-default $W $R $L
run w16-diff $W $R $L --diff-on-workers
run w16-read $W $R $L --read-on-workers
run w16-read-format $W $R $L --read-on-workers --format-on-workers
run w16-read-format-b64k $W $R $L --read-on-workers --format-on-workers --batch-points=65536
run w16-read-format-b256 $W $R $L --read-on-workers --format-on-workers --batch-points=256
run w16-read-dir $W $R $L --read-on-workers --output-dir=/tmp/diag-od
run w16-read-format-r10k $W $((R*10)) $((L/10)) --read-on-workers --format-on-workers
run w1-read-r10k 1 $((R*10)) $((L/10)) --read-on-workers
run w4-read-format 4 $R $L --read-on-workers --format-on-workers
run w16-read-format-r100 $W $((R/10)) $((L*10)) --read-on-workers --format-on-workers
