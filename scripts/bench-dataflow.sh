#!/usr/bin/env bash
# Dataflow engine figures for BENCHMARKS.md: windows over Laser-style unique atoms,
# inertia, per-time-point overhead, memory over long streams, workers vs processes.
# Usage: scripts/bench-dataflow.sh [SCRATCH_DIR]   (streams are written there, ~0.5 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/stgflow-bench}
mkdir -p "$dir"
cargo build --release -q -p stgflow-cli -p stgflow-datasets
gen=./target/release/stgflow-datasets
run=./target/release/stgflow
measure() { # label, then the stgflow arguments
  local label=$1; shift
  /usr/bin/time -f "$label	%e s	%M KiB" "$run" "$@" > /dev/null
}
# Fresh names (`p(id17,b17,T).`), as real logs and Laser's streams have; the integer
# stream beside them for the windows.
[ -f "$dir/ua_1000x10000.facts" ] || $gen unique-atoms --constants names --atoms-per-point 1000 --time-points 10000 --out "$dir/ua_1000x10000.facts"
[ -f "$dir/ua_int_1000x10000.facts" ] || $gen unique-atoms --atoms-per-point 1000 --time-points 10000 --out "$dir/ua_int_1000x10000.facts"
[ -f "$dir/ua_1000x1000.facts" ] || $gen unique-atoms --constants names --atoms-per-point 1000 --time-points 1000 --out "$dir/ua_1000x1000.facts"
[ -f "$dir/inertia.facts" ] || $gen inertia --fluents 100000 --events-per-point 10 --time-points 100000 --out "$dir/inertia.facts"
for n in 100000 1000000 10000000; do
  [ -f "$dir/tick_$n.facts" ] || $gen one-per-point --time-points $n --out "$dir/tick_$n.facts"
done
echo "# windows: 1000 new atoms per time point (fresh names), 10,000 time points (10^7 facts), 1 worker, changes"
for prog in diamond_10 diamond_100 box_10; do
  measure "$prog" run datasets/bench/$prog.tdl "$dir/ua_1000x10000.facts" --mode changes
done
measure "diamond_10 (integers)" run datasets/bench/diamond_10.tdl "$dir/ua_int_1000x10000.facts" --mode changes
measure "diamond_10 (literal rules)" run datasets/bench/diamond_10.tdl "$dir/ua_1000x10000.facts" --mode changes --no-lowering
echo "# inertia: 100,000 fluents, 10 events per time point, 10^5 time points, 1 worker"
measure inertia run datasets/examples/inertia.tdl "$dir/inertia.facts" --mode changes
echo "# one fact per time point (per-time-point overhead, and memory vs stream length)"
for n in 100000 1000000 10000000; do
  measure "tick $n" run datasets/bench/tick.tdl "$dir/tick_$n.facts" --mode changes
done
echo "# workers and processes: diamond_10 over 10^6 facts, and inertia"
measure "diamond_10 -w 1" run datasets/bench/diamond_10.tdl "$dir/ua_1000x1000.facts" --mode changes -w 1
measure "diamond_10 -w 2" run datasets/bench/diamond_10.tdl "$dir/ua_1000x1000.facts" --mode changes -w 2
printf '127.0.0.1:24101\n127.0.0.1:24102\n' > "$dir/hosts"
"$run" run datasets/bench/diamond_10.tdl "$dir/ua_1000x1000.facts" --mode changes -n 2 -p 1 -h "$dir/hosts" > /dev/null &
measure "diamond_10 -n 2 (process 0)" run datasets/bench/diamond_10.tdl "$dir/ua_1000x1000.facts" --mode changes -n 2 -p 0 -h "$dir/hosts"
wait
measure "inertia -w 2" run datasets/examples/inertia.tdl "$dir/inertia.facts" --mode changes -w 2
