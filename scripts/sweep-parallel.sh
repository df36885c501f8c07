#!/usr/bin/env bash
# Issue 20's sweep on a many-core machine: the runtime parallel end to end (every worker
# reads, diffs and formats: --read-on-workers --format-on-workers) against the calling
# thread's reading, over workers 1–16 and loopback clusters of 4 workers per process, on
# ♢10 over 10⁸ facts, inertia over 2·10⁷ events and RTEC's recorded data. About 6 minutes
# on a 16-CPU machine; BENCHMARKS.md has what it gave.
#
# Usage: [LENGTH=100000] [INERTIA_LENGTH=200000] [WORKERS=1,2,4,8,16] [PROCESSES=2,4]
#        scripts/sweep-parallel.sh OUT_DIR [BIN_DIR] [DATA_DIR]
#   OUT_DIR   each part's results.csv, report.md, plots/ (streams cached in OUT_DIR/streams)
#   BIN_DIR   where stgflow and stgflow-bench are (default target/release)
#   DATA_DIR  RTEC's data (default ../shared/data/rtec)
# With SAVE=DIR, each part's results.csv and report.md are appended to DIR/results.txt and
# DIR/reports.md, under the part's name, as soon as the part ends (for a machine whose run
# may be cut short, and which gives back few files).
set -euo pipefail
out=${1:?usage: scripts/sweep-parallel.sh OUT_DIR [BIN_DIR] [DATA_DIR]}
bin=${2:-target/release}
data=${3:-../shared/data/rtec}
length=${LENGTH:-100000}
inertia_length=${INERTIA_LENGTH:-200000}
workers=${WORKERS:-1,2,4,8,16}
processes=${PROCESSES:-2,4}
ends="1,${workers##*,}"
parallel=(--stgflow-arg=--read-on-workers --stgflow-arg=--format-on-workers)
mkdir -p "$out"
echo "# $(date -u +%FT%TZ) on $(hostname): $(nproc) CPUs, workers $workers, processes $processes × 4" >&2

# One `stgflow-bench sweep` into OUT_DIR/PART, its streams shared.
part() {
  local name=$1
  shift
  mkdir -p "$out/$name"
  ln -sfn ../streams "$out/$name/streams"
  "$bin/stgflow-bench" sweep --stgflow "$bin/stgflow" --out "$out/$name" --timeout 200 "$@"
  if [ -n "${SAVE:-}" ]; then
    mkdir -p "$SAVE"
    { echo "# $name"; cat "$out/$name/results.csv"; } >>"$SAVE/results.txt"
    { echo "# $name"; cat "$out/$name/report.md"; } >>"$SAVE/reports.md"
  fi
}
mkdir -p "$out/streams"

# 1. ♢10 over 1000 new atoms per time point, parallel end to end, by workers.
part diamond-parallel --workload diamond --window 10 --rate 1000 --length "$length" \
  --workers "$workers" --repeat 1 "${parallel[@]}"
# 2. The same with the calling thread reading, diffing and writing (the default).
part diamond-default --workload diamond --window 10 --rate 1000 --length "$length" \
  --workers "$ends" --repeat 1
# 3. Loopback clusters of 4 workers per process, parallel end to end.
part diamond-processes --workload diamond --window 10 --rate 1000 --length "$length" \
  --workers 4 --processes "$processes" --repeat 1 "${parallel[@]}"
# 4. Inertia (recursion through time) over 100 events per time point, both ways.
part inertia-parallel --workload inertia --rate 100 --length "$inertia_length" \
  --workers "$workers" --repeat 1 "${parallel[@]}"
part inertia-default --workload inertia --rate 100 --length "$inertia_length" \
  --workers "$ends" --repeat 1
# 5. RTEC's recorded data (CTM, voting, CAVIAR), both ways.
part ec-parallel --workload ctm,voting,caviar --data "$data" --workers "$workers" \
  --repeat 3 "${parallel[@]}"
part ec-default --workload ctm,voting,caviar --data "$data" --workers "$ends" --repeat 3
echo "# done $(date -u +%FT%TZ)" >&2
