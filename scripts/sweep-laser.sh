#!/usr/bin/env bash
# Laser's micro-benchmark programs in `--mode laser` over workers 1–16 (issue 23's
# programs, issue 20's question: does the Laser path use many cores?), each worker count
# with the calling thread reading (the default) and parallel end to end
# (--read-on-workers --format-on-workers); the output to /dev/null, every output of the
# shorter stream compared byte for byte with one worker's. About 4 minutes on a 16-CPU
# machine.
#
# Usage: [POINTS=100000] [WORKERS="1 2 4 8 16"] [PROGRAMS="d10 at10 b10 d100"]
#        scripts/sweep-laser.sh OUT_DIR [BIN_DIR]
#   OUT_DIR   streams, outputs and results.txt (one line per run: program, atoms,
#             workers, configuration, wall s, user s, sys s)
#   BIN_DIR   where stgflow and stgflow-datasets are (default target/release)
set -euo pipefail
out=${1:?usage: scripts/sweep-laser.sh OUT_DIR [BIN_DIR]}
bin=${2:-target/release}
points=${POINTS:-100000}
workers=${WORKERS:-"1 2 4 8 16"}
programs=${PROGRAMS:-"d10 at10 b10 d100"}
mkdir -p "$out"
results="$out/results.txt"
echo "# $(date -u +%FT%TZ) on $(hostname): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >>"$results"
echo "# program atoms workers configuration wall user sys" >>"$results"

program_text() {
  case $1 in
    d10) echo 'q(A,B) :- time_win(10,0,1,diamond(p(A,B)))' ;;
    d100) echo 'q(A,B) :- time_win(100,0,1,diamond(p(A,B)))' ;;
    b10) echo 'q(A,B) :- time_win(10,0,1,box(p(A,B)))' ;;
    at10) echo 'q(T,A,B) :- time_win(10,0,1,@(T,p(A,B)))' ;;
    *) echo "unknown program $1" >&2; exit 2 ;;
  esac
}

# Streams of 100 fresh names per time point, as the grid's (scripts/peers/laser_grid.py).
for n in 2000 "$points"; do
  [ -e "$out/s$n.laser" ] || "$bin/stgflow-datasets" unique-atoms --constants names \
    --atoms-per-point 100 --time-points "$n" --extra-every 0 --format laser \
    --out "$out/s$n.laser"
done

TIMEFORMAT='%R %U %S'
for p in $programs; do
  program_text "$p" >"$out/$p.lars"
  # Correctness on many cores: every worker count and configuration gives one worker's bytes.
  "$bin/stgflow" run "$out/$p.lars" "$out/s2000.laser" --mode laser >"$out/$p.w1.out"
  for w in $workers; do
    for config in default parallel; do
      flags=()
      [ "$config" = parallel ] && flags=(--read-on-workers --format-on-workers)
      "$bin/stgflow" run "$out/$p.lars" "$out/s2000.laser" --mode laser -w "$w" "${flags[@]}" \
        >"$out/$p.check.out"
      cmp -s "$out/$p.w1.out" "$out/$p.check.out" || echo "DIFFERS: $p -w $w $config" | tee -a "$results"
    done
  done
  for w in $workers; do
    for config in default parallel; do
      flags=()
      [ "$config" = parallel ] && flags=(--read-on-workers --format-on-workers)
      t=$( { time "$bin/stgflow" run "$out/$p.lars" "$out/s$points.laser" --mode laser -w "$w" \
        "${flags[@]}" >/dev/null; } 2>&1 )
      echo "$p $((points * 100)) $w $config $t" | tee -a "$results"
    done
  done
done
