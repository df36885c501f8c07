#!/usr/bin/env bash
# NetBill from RTEC's own files, side by side with RTEC (issue 22).
#
# RTEC's NetBill example ships no data in its repository (a download link), so this script
# generates a narrative with RTEC's own generator, runs RTEC over it in one window, runs
# stgflow over RTEC's files unchanged, and compares every fluent-value pair RTEC reports.
# Nothing of RTEC is copied into this repository.
#
#   scripts/peers/rtec_netbill.sh RTEC_CHECKOUT [AGENTS [END]]
#
# RTEC_CHECKOUT: a checkout of aartikis/RTEC (its `execution scripts/run_rtec.sh` needs
# SWI-Prolog: `apt-get install swi-prolog-nox`). AGENTS (default 300) and END (default 100)
# are the generator's; seed 1. stgflow is target/release/stgflow (cargo build --release).
set -euo pipefail

rtec=$(cd "$1" && pwd)
agents=${2:-300}
end=${3:-100}
here=$(cd "$(dirname "$0")/../.." && pwd)
stgflow=$here/target/release/stgflow
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

app=$rtec/examples/netbill
rules=$app/resources/patterns/rules.prolog
static=$app/dataset/auxiliary/netbill_static_generator.prolog

# RTEC's generator is written for YAP; these two predicates are YAP's.
cat > "$work/yap.pl" <<'EOF'
srandom(S) :- set_random(seed(S)).
number_atom(N, A) :- atom_number(A, N).
EOF
mkdir -p "$app/dataset/csv"
(cd "$app/dataset/prolog" && swipl -q -g "consult('$work/yap.pl'), consult('netbill_csv_data_generator.prolog'), createNarrative(0, $end, $agents, 1), halt." 2>/dev/null)
data=$app/dataset/csv/negotiation-$agents-1.csv
last=$(cut -d'|' -f2 "$data" | sort -n | tail -1)
echo "narrative: $(wc -l < "$data") records, time 0..$last"

# RTEC: one window over all the data, as for the other applications (../shared/data/README.md).
cd "$rtec/execution scripts"
chmod +x run_rtec.sh auxiliary/*.sh
/usr/bin/time -o "$work/rtec.time" -f "RTEC whole run: %e s wall, %U s user, %S s sys, %M KB" \
    ./run_rtec.sh --app=netbill --window-size="$last" --step="$last" --start-time=0 \
    --end-time="$last" --output-mode=file --input="$data" > "$work/rtec.log" 2>&1 || true
cat "$work/rtec.time"
grep -m1 "Recognition Time" "$work/rtec.log" || true
theirs=$app/results/log-swi-$last-$last-csv-file-recognised-intervals.txt

# stgflow: RTEC's window (0, END] leaves out the records at time 0.
awk -F'|' '$2 != "0"' "$data" > "$work/netbill.csv"
/usr/bin/time -f "stgflow whole run: %e s wall, %U s user, %S s sys, %M KB" \
    "$stgflow" run -q "$rules" "$static" "$work/netbill.csv" --mode rtec > "$work/ours.txt"

python3 - "$work/ours.txt" "$theirs" "$last" <<'EOF'
import sys

def recognitions(path, end):
    pairs = {}
    for line in open(path):
        if not line.startswith("recognitions("):
            continue
        pair, intervals = line.split(",[(", 1)
        clipped = []
        for interval in intervals.strip().rstrip(")]).").split("),("):
            s, e = (int(x) for x in interval.split(","))
            s, e = max(s, 1), min(e, end + 1)
            if s < e:
                clipped.append((s, e))
        if clipped:
            pairs[pair] = clipped
    return pairs

ours, theirs = (recognitions(p, int(sys.argv[3])) for p in sys.argv[1:3])
differing = [p for p in theirs if ours.get(p) != theirs[p]]
print(f"pairs RTEC reports: {len(theirs)}; stgflow prints {len(ours)}; differing: {len(differing)}")
for pair in differing[:10]:
    print(f"  {pair}: ours {ours.get(pair)}, RTEC's {theirs[pair]}")
sys.exit(1 if differing or len(ours) != len(theirs) else 0)
EOF
