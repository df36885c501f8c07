#!/usr/bin/env bash
# The scaling sweeps behind BENCHMARKS.md, for any machine from 2 to 64 cores: worker
# counts are the powers of two up to the number of CPUs (override with WORKERS=1,2,4),
# clusters are loopback processes of 4 workers (or 1 on small machines).
#
# Usage: [CPUS=N] [WORKERS=1,2,4] [DATA=DIR] scripts/sweep.sh [OUT_DIR] [BIN_DIR]
#   OUT_DIR  where each sweep writes results.csv, plots/ and report.md (default target/sweeps)
#   BIN_DIR  where stgflow and stgflow-bench are (default target/release; built if missing)
#
# Each part is one `stgflow-bench sweep`; copy a line to rerun one part. On a cluster of
# machines, start `stgflow run … -n N -p I -h hosts` by hand with a hostfile like
# scripts/hosts.example (the sweep's own clusters are on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/sweeps}
bin=${2:-target/release}
if [ ! -x "$bin/stgflow" ] || [ ! -x "$bin/stgflow-bench" ]; then
  cargo build --release -q -p stgflow-cli -p stgflow-bench
fi
cpus=${CPUS:-$(nproc)}
if [ -z "${WORKERS:-}" ]; then
  WORKERS=1; w=2
  while [ "$w" -le "$cpus" ] && [ "$w" -le 64 ]; do WORKERS="$WORKERS,$w"; w=$((w * 2)); done
fi
max=${WORKERS##*,}
if [ "$cpus" -ge 8 ]; then per=4; else per=1; fi
procs=1; p=2
while [ $((p * per)) -le "$cpus" ] && [ "$p" -le 16 ]; do procs="$procs,$p"; p=$((p * 2)); done
sweep() { "$bin/stgflow-bench" sweep --stgflow "$bin/stgflow" "$@"; }
echo "# $(date -u +%F) on $(hostname): $cpus CPUs, workers $WORKERS, processes $procs × $per workers" >&2

# 1. Throughput vs workers: LARS ⊞10 ♢ and ⊞100 ♢ over 1000 new atoms per time point.
sweep --out "$out/workers" --workload diamond --window 10,100 --rate 1000 --length 2000 \
  --workers "$WORKERS" --repeat 3
# 2. Throughput vs window size, ♢ and □, one worker and all of them.
sweep --out "$out/window" --workload diamond,box --window 1,10,100,1000 --rate 1000 \
  --length 2000 --workers "1,$max" --repeat 1
# 3. Loopback clusters: processes × $per workers.
sweep --out "$out/processes" --workload diamond --window 10 --rate 1000 --length 2000 \
  --workers "$per" --processes "$procs" --repeat 1
# 4. Streaming: per-time-point latency at 500 time points/s.
sweep --out "$out/streaming" --workload diamond --window 10 --rate 100 --length 2000 \
  --mode streaming --pace 500 --workers "1,$max" --repeat 1
# 5. Stream length: throughput and peak RSS, windows and one fact per time point.
sweep --out "$out/length" --workload diamond,tick --window 10 --rate 100 \
  --length 1000,10000,100000 --workers 1 --repeat 1
# 6. Inertia (recursion through time) vs workers.
sweep --out "$out/inertia" --workload inertia --rate 100 --length 5000 \
  --workers "$WORKERS" --repeat 1
# 7. Event Calculus on RTEC's recorded data (CAVIAR, city transport, voting) vs workers.
sweep --out "$out/ec" --workload caviar,ctm,voting --data "${DATA:-../shared/data/rtec}" \
  --workers "$WORKERS" --repeat 1
# 8. Issue 20: the input read on the workers (--read-on-workers) against the calling
#    thread's reading (sweeps 1 and 6), workers and processes.
sweep --out "$out/read-on-workers" --workload diamond,inertia --window 10 --rate 1000 \
  --length 2000 --workers "$WORKERS" --repeat 3 --stgflow-arg=--read-on-workers
sweep --out "$out/read-on-workers-processes" --workload diamond --window 10 --rate 1000 \
  --length 2000 --workers "$per" --processes "$procs" --repeat 1 \
  --stgflow-arg=--read-on-workers
