#!/usr/bin/env bash
# Before/after on 16 CPUs: ♢10 over 10⁷ facts, one run per configuration.
set -uo pipefail
out=${1:-/tmp/ab}; L=${L:-10000}; W=${W:-16}
mkdir -p "$out/streams"
run() { # name binary workers args...
  local name=$1 b=$2 w=$3; shift 3
  local extra=(); for a in "$@"; do extra+=("--stgflow-arg=$a"); done
  mkdir -p "$out/$name"; ln -sfn ../streams "$out/$name/streams"
  .devbin/stgflow-bench sweep --stgflow ".devbin/$b" --out "$out/$name" --timeout 60 \
    --workload diamond --window 10 --rate 1000 --length "$L" --workers "$w" --repeat 1 "${extra[@]}" 2>&1 \
    | grep -v "^wrote" | sed "s/^/$name: /"
}
for b in stgflow-old stgflow; do
  run $b-w16-read-format $b $W --read-on-workers --format-on-workers
  run $b-w16-read $b $W --read-on-workers
  run $b-w8-read-format $b 8 --read-on-workers --format-on-workers
  run $b-w16-default $b $W
  run $b-w1-default $b 1
done
STGFLOW_IDLE_SPIN_US=10 run spin10-w16-read-format stgflow $W --read-on-workers --format-on-workers
run stgflow-w4-read-format stgflow 4 --read-on-workers --format-on-workers
run stgflow-w2-read-format stgflow 2 --read-on-workers --format-on-workers
