#!/usr/bin/env bash
# Runs the dataflow and front-end workloads of BENCHMARKS.md with one or two stgflow
# binaries in turn (a baseline and a change, in the same session), three times each, and
# prints per workload and binary: median wall:cpu(user+sys):peak-RSS-KiB, then every run.
#
# Usage: scripts/bench-pair.sh SCRATCH_DIR BIN [BIN2]
#   SCRATCH_DIR holds the generated streams (scripts/bench-dataflow.sh writes most of
#   them; the Laser stream and the small inertia stream are written here if missing).
#   RTEC_HOME=…/RTEC also times RTEC's own run on CAVIAR (a local checkout, never
#   committed; its "execution scripts/run_rtec.sh" needs SWI-Prolog and graphviz).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:?scratch dir}; shift
bins=("$@")
R=${DATA:-../shared/data/rtec}
gen=./target/release/stgflow-datasets
[ -f "$D/ua_100x10000.laser" ] || $gen unique-atoms --constants names --atoms-per-point 100 --time-points 10000 --format laser --out "$D/ua_100x10000.laser"
lars=$(mktemp -d)
for n in 10 100; do
  echo "q(A,B) :- time_win($n,0,1,diamond(p(A,B)))" > "$lars/d$n.lars"
  echo "q(A,B) :- time_win($n,0,1,box(p(A,B)))" > "$lars/b$n.lars"
done
run3() { local label=$1 bin=$2; shift 2
  local out=() w u s m
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %U %S %M" -o "$lars/t" "$bin" "$@" >/dev/null 2>/dev/null || true
    read -r w u s m < "$lars/t"
    out+=("$w:$(echo "$u+$s" | bc):$m")
  done
  printf '%s\t%s\tmedian %s\truns %s\n' "$label" "$bin" \
    "$(printf '%s\n' "${out[@]}" | sort -t: -k1 -n | sed -n 2p)" "${out[*]}"; }
each() { local label=$1; shift; for bin in "${bins[@]}"; do run3 "$label" "$bin" "$@"; done; }
each d10_1e7 run datasets/bench/diamond_10.tdl "$D/ua_1000x10000.facts" --mode changes
each d100_1e7 run datasets/bench/diamond_100.tdl "$D/ua_1000x10000.facts" --mode changes
each b10_1e7 run datasets/bench/box_10.tdl "$D/ua_1000x10000.facts" --mode changes
each d10_1e6 run datasets/bench/diamond_10.tdl "$D/ua_1000x1000.facts" --mode changes
each d10_1e6_w2 run datasets/bench/diamond_10.tdl "$D/ua_1000x1000.facts" --mode changes -w 2
each inertia_1e6 run datasets/examples/inertia.tdl "$D/inertia.facts" --mode changes
each inertia_1e6_w2 run datasets/examples/inertia.tdl "$D/inertia.facts" --mode changes -w 2
for n in 100000 1000000 10000000; do
  each "tick_$n" run datasets/bench/tick.tdl "$D/tick_$n.facts" --mode changes
done
for p in d10 d100 b10 b100; do
  each "lars_${p}_100x1e4" run "$lars/$p.lars" "$D/ua_100x10000.laser" --mode changes
done
each lars_d10_laser run "$lars/d10.lars" "$D/ua_100x10000.laser" --mode laser
# RTEC's own event descriptions (and, for CAVIAR, the distances RTEC computes in Prolog).
cav=("$R/caviar/rtec/rules.prolog" "$R/caviar/rtec/list-of-ids.prolog" datasets/ec/caviar_distance.ec)
each caviar run "${cav[@]}" "$R/caviar/appearance.csv" "$R/caviar/movementB.csv" --tick 40 --mode intervals
each caviar_reference run "${cav[@]}" "$R/caviar/appearance.csv" "$R/caviar/movementB.csv" --tick 40 --mode intervals --engine reference
each ctm run "$R/ctm/rtec/rules.prolog" "$R/ctm/rtec/vehicles.prolog" "$R"/ctm/{abrupt_acceleration,abrupt_deceleration,internal_temperature_change,noise_level_change,passenger_density_change,sharp_turn,stop_enter_leave}.csv --mode intervals
each voting run "$R/voting/rtec/rules.prolog" "$R/voting/rtec/voting_static_generator.prolog" "$R/voting/voting.csv" --mode intervals
if [ -n "${RTEC_HOME:-}" ]; then
  data=$(cd "$R" && pwd)
  cd "$RTEC_HOME/execution scripts"
  for _ in 1 2 3; do
    # run_rtec.sh exits 1 even when it succeeds.
    /usr/bin/time -f "rtec_caviar %e s wall, %U+%S s cpu, %M KiB" -o "$lars/t" ./run_rtec.sh --app=caviar \
      --window-size=1100000 --step=1100000 --end-time=1100000 \
      --input="$data/caviar/appearance.csv" --input="$data/caviar/movementB.csv" > "$lars/rtec" 2>&1 || true
    cat "$lars/t"; grep "Recognition Time average" "$lars/rtec" || true
  done
fi
rm -rf "$lars"
