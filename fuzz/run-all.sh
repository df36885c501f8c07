#!/usr/bin/env bash
# Builds the fuzz targets once (`cargo +nightly fuzz build`), then runs them one after
# another (or two at a time with PAIRS=1) for SECONDS_EACH seconds each under
# `nice -n 19`, seeding each corpus from tests/cases and datasets; logs go to
# fuzz/logs/<target>.log, a line per run to fuzz/logs/runs.log, crashes to
# fuzz/artifacts/<target>/. The binaries run directly, so edits to the sources during
# the runs do not trigger rebuilds. Usage: fuzz/run-all.sh [target…]  (default: all)
set -uo pipefail
cd "$(dirname "$0")"
SECONDS_EACH=${SECONDS_EACH:-660}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(td_parser lars_parser ec_parser stream_td stream_csv stream_rtec stream_laser)
fi
mkdir -p logs
if [ "${NO_BUILD:-0}" != 1 ]; then
    nice -n 19 cargo +nightly fuzz build > logs/build.log 2>&1 || { echo "build failed" >&2; exit 1; }
fi
seed() {
    local target=$1 pattern
    case $target in
        td_parser) pattern='*.tdl' ;;
        lars_parser) pattern='*.lars' ;;
        ec_parser) pattern='*.ec' ;;
        stream_td) pattern='*.facts' ;;
        stream_csv) pattern='*.csv' ;;
        stream_rtec) pattern='*.csv' ;;
        stream_laser) pattern='*.laser' ;;
    esac
    mkdir -p "corpus/$target"
    local file
    find ../tests/cases ../datasets -name "$pattern" -size -64k | while read -r file; do
        case $target in
            # The stream targets read their options from the first byte.
            stream_*)
                { printf '\000'; cat "$file"; } > "corpus/$target/seed0-$(basename "$file")"
                { printf '\003'; cat "$file"; } > "corpus/$target/seed3-$(basename "$file")"
                ;;
            *) cp "$file" "corpus/$target/" ;;
        esac
    done
}
run() {
    local target=$1
    seed "$target"
    echo "$(date -u +%FT%TZ) start $target" >> logs/runs.log
    mkdir -p "artifacts/$target"
    nice -n 19 "target/x86_64-unknown-linux-gnu/release/$target" "corpus/$target" \
        -artifact_prefix="artifacts/$target/" -max_total_time="$SECONDS_EACH" \
        -print_final_stats=1 -max_len=4096 -timeout=10 > "logs/$target.log" 2>&1
    local status=$?
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$target.log" | grep -o '[0-9]*$')
    echo "$(date -u +%FT%TZ) end $target status=$status execs=${execs:-?}" >> logs/runs.log
}
i=0
while [ $i -lt ${#targets[@]} ]; do
    if [ "${PAIRS:-0}" = 1 ] && [ $((i + 1)) -lt ${#targets[@]} ]; then
        run "${targets[$i]}" &
        run "${targets[$((i + 1))]}"
        wait
        i=$((i + 2))
    else
        run "${targets[$i]}"
        i=$((i + 1))
    fi
done
