#!/usr/bin/env bash
# NetBill's data for the bench harness's `netbill` workload (issue 54), made with RTEC's own
# generator and laid out as the harness reads RTEC's applications:
#
#   DATA/netbill/rtec/rules.prolog, netbill_static_generator.prolog  (RTEC's files, copied)
#   DATA/netbill/endEND.csv                                          (one narrative per END)
#
#   [AGENTS=N] scripts/peers/netbill_data.sh RTEC_CHECKOUT DATA END...
#
# RTEC_CHECKOUT: a checkout of aartikis/RTEC; its generator runs under SWI-Prolog
# (`apt-get install swi-prolog-nox`). AGENTS defaults to 300; seed 1, as
# scripts/peers/rtec_netbill.sh. The records at time 0 are left out: RTEC's window (0, END]
# does not hold them. Then, for example:
#
#   cargo run --release -p stgflow-bench -- sweep --workload netbill \
#       --data DATA --length 100,1000 --output rtec
set -euo pipefail

rtec=$(cd "$1" && pwd)
mkdir -p "$2/netbill/rtec"
data=$(cd "$2" && pwd)/netbill
shift 2
agents=${AGENTS:-300}
[ $# -gt 0 ] || { echo "usage: [AGENTS=N] $0 RTEC_CHECKOUT DATA END..." >&2; exit 2; }
app=$rtec/examples/netbill
cp "$app/resources/patterns/rules.prolog" "$app/dataset/auxiliary/netbill_static_generator.prolog" "$data/rtec/"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# RTEC's generator is written for YAP; these two predicates are YAP's.
cat > "$work/yap.pl" <<'PL'
srandom(S) :- set_random(seed(S)).
number_atom(N, A) :- atom_number(A, N).
PL
mkdir -p "$app/dataset/csv"
for end in "$@"; do
    (cd "$app/dataset/prolog" && swipl -q -g "consult('$work/yap.pl'), consult('netbill_csv_data_generator.prolog'), createNarrative(0, $end, $agents, 1), halt." 2>/dev/null)
    awk -F'|' '$2 != "0"' "$app/dataset/csv/negotiation-$agents-1.csv" > "$data/end$end.csv"
    echo "$data/end$end.csv: $(wc -l < "$data/end$end.csv") records"
done
