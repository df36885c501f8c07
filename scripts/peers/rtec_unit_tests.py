#!/usr/bin/env python3
"""Runs RTEC's own unit tests (aartikis/RTEC, `unit-tests/RTEC-tests/`) through stgflow.

    rtec_unit_tests.py RTEC_CHECKOUT [STGFLOW] [--verbose]

RTEC is fetched, never committed; SWI-Prolog (`swipl`) reads its test files
(`rtec_unit_tests.pl`, beside this script, prints each test case: its narrative per
query, the expected intervals, the fluent-value pair its check reads). Each test case is
run as RTEC's unit tester runs it, one stgflow run per query: the input facts known at the
query, sorted by time, as RTEC's CSV records, with the test file's event description
(its uncompiled rules where the folder has them beside the compiled ones RTEC's tester
loads, its declarations and background knowledge) and `--mode rtec`. RTEC's query at CT
over a window of WM sees (CT - WM, CT] and reports an interval still open at CT as
`(S, inf)`: stgflow runs with `--from max(0, CT - WM) --until CT + 1`, and an interval
that still holds at CT + 1 is open.

Every case ends as one of:
* same: the intervals RTEC's tester expects, at every query;
* differs: ours beside RTEC's (the first query that differs);
* rejected: stgflow refuses the description (the first error shown);
* not comparable: a query's window leaves out input known at the query, or starts after
  the queries' start (RTEC forgets what is before its window and carries its fluents'
  state across windows, which a run over the window alone cannot know), an input fact
  has compound arguments (RTEC's CSV records carry atoms), or the check does more than
  read one pair's intervals.

Prints one line per case and the counts per test file and in all.
"""
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def loaded_files(test_file):
    """The files a test file loads (`:-['../x.prolog'].`), as paths."""
    base = os.path.dirname(test_file)
    text = open(test_file).read()
    paths = []
    for group in re.findall(r"^:-\s*\[(.*?)\]\s*\.", text, re.M):
        for name in re.findall(r"'([^']+)'", group):
            paths.append(os.path.normpath(os.path.join(base, name)))
    return paths


def description(test_file):
    """The event description stgflow is given: its rules first (uncompiled where the
    folder has them beside the compiled ones), then declarations and background knowledge;
    or None and why."""
    rules, rest = None, []
    for path in loaded_files(test_file):
        name = os.path.basename(path)
        # RTEC itself and its unit tester, which the test files load.
        if f"{os.sep}src{os.sep}" in path:
            continue
        if not os.path.exists(path):
            shown = path.split(f"unit-tests{os.sep}", 1)[-1]
            return None, f"RTEC's test loads {shown}, which its checkout lacks"
        if "updateSDE" in open(path).read():
            continue
        if "compiled" in name:
            folder = os.path.dirname(path)
            plain = [f for f in sorted(os.listdir(folder))
                     if f.endswith(".prolog") and "compiled" not in f and "declarations" not in f]
            rules = os.path.join(folder, plain[0]) if plain else path
        else:
            rest.append(path)
    if rules is None:
        return None, "no rules loaded"
    return [rules] + rest, None


def cases(rtec_tests, test_file):
    """The test cases of a test file, as the Prolog reader prints them."""
    goal = (f"consult('{test_file}'), consult('{os.path.join(HERE, 'rtec_unit_tests.pl')}'), "
            "dump_all")
    out = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt"], cwd=rtec_tests,
                         capture_output=True, text=True, timeout=600).stdout
    found, case = [], None
    for line in out.splitlines():
        tag, _, rest = line.partition("\t")
        if tag == "TEST":
            kind, scen, name, number, start = rest.split("\t")
            case = {"kind": kind, "scenario": scen, "case": name, "number": number,
                    "start": int(start), "queries": []}
            found.append(case)
        elif case is None:
            continue
        elif tag == "EXPECTED":
            case["expected"] = expected_lists(rest)
        elif tag == "CHECK":
            case["check"] = rest
        elif tag == "QUERY":
            ct, wm = rest.split("\t")
            case["queries"].append({"ct": int(ct), "wm": int(wm), "records": []})
        elif tag == "R":
            case["queries"][-1]["records"].append(rest)
    return found


def expected_lists(term):
    """`[[(10,14),(15,inf)],[]]` → [[(10, 14), (15, 'inf')], []]."""
    inner = term.strip()[1:-1]
    lists, depth, start = [], 0, None
    for i, c in enumerate(inner):
        if c == "[":
            depth += 1
            if depth == 1:
                start = i
        elif c == "]":
            depth -= 1
            if depth == 0:
                lists.append(intervals(inner[start:i + 1]))
    return lists


def intervals(text):
    return [(int(s), e if e == "inf" else int(e))
            for s, e in re.findall(r"\((-?\d+),\s*(-?\d+|inf)\)", text)]


def split_args(text):
    """Top-level comma-separated arguments."""
    args, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        args.append(text[start:].strip())
    return args


def pair_pattern(check):
    """`rich(chris)=true` → ("rich", ["chris"], "true"); variables are None."""
    fluent, _, value = check.rpartition("=")
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?", fluent.strip())
    if not m:
        return None
    name, args = m.groups()
    def pattern(a):
        return None if re.match(r"[A-Z_]", a) else a.replace(" ", "")
    return name, [pattern(a) for a in split_args(args or "")], value.strip()


def ours_for(output, pattern):
    """The intervals of the pairs of stgflow's `--mode rtec` output that match."""
    name, args, value = pattern
    found = []
    for line in output.splitlines():
        m = re.fullmatch(r"recognitions\(predictions,(\w+),\[\[(.*)\],(\w+)\],\[(.*)\]\)\.", line)
        if not m or m.group(1) != name or m.group(3) != value:
            continue
        theirs = split_args(m.group(2))
        if len(theirs) != len(args) or any(a is not None and a != t.replace(" ", "")
                                           for a, t in zip(args, theirs)):
            continue
        found.append(intervals(m.group(4)))
    return found


def run_case(stgflow, files, case, workdir):
    """'same' | 'differs' | 'rejected' | 'not comparable', and a note."""
    check = case.get("check", "")
    if check.startswith("complex"):
        return "not comparable", f"the check does more than read one pair ({check[8:]})"
    pattern = pair_pattern(check)
    if pattern is None:
        return "not comparable", f"check reads {check}"
    if len(case["expected"]) != len(case["queries"]):
        return "not comparable", "expected results do not match the queries"
    for q, want in zip(case["queries"], case["expected"]):
        ct, wm = q["ct"], q["wm"]
        if any(r.startswith("X ") for r in q["records"]):
            first = next(r for r in q["records"] if r.startswith("X "))
            return "not comparable", f"input with compound arguments: {first[2:]}"
        times = [int(r.split("|")[2]) for r in q["records"]]
        if ct - wm >= 0 and any(t <= ct - wm for t in times):
            return ("not comparable",
                    f"the window ({ct - wm},{ct}] leaves out input known at {ct}")
        if ct - wm > case["start"]:
            return ("not comparable",
                    f"the window ({ct - wm},{ct}] starts after the queries' start, "
                    f"{case['start']} (RTEC carries what held there from the query before)")
        records = sorted(q["records"], key=lambda r: int(r.split("|")[2]))
        records = [r for r in records if int(r.split("|")[2]) <= ct]
        stream = os.path.join(workdir, "input.csv")
        with open(stream, "w") as f:
            f.write("".join(r + "\n" for r in records))
        command = [stgflow, "run", *files, stream, "--mode", "rtec", "-q",
                   "--from", str(max(0, ct - wm)), "--until", str(ct + 1)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            error = next((l for l in run.stderr.splitlines() if "Error" in l or "error" in l),
                         run.stderr.strip().splitlines()[0] if run.stderr.strip() else "?")
            return "rejected", error.strip()
        found = ours_for(run.stdout, pattern)
        if len(found) > 1:
            return "not comparable", f"{len(found)} instances of {check}"
        ours = [(s, "inf" if e == ct + 2 else e) for s, e in (found[0] if found else [])]
        if sorted(ours) != sorted(want):
            return "differs", f"at {ct}: ours {ours}, RTEC's {want}"
    return "same", ""


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    if not args:
        sys.exit(__doc__)
    rtec_tests = os.path.join(os.path.abspath(args[0]), "unit-tests", "RTEC-tests")
    stgflow = os.path.abspath(args[1]) if len(args) > 1 else "stgflow"
    tests = sorted(os.path.join("tests", f) for f in os.listdir(os.path.join(rtec_tests, "tests"))
                   if f.endswith(".prolog"))
    tests += sorted(os.path.join("tests", "allen", f)
                    for f in os.listdir(os.path.join(rtec_tests, "tests", "allen")))
    total = Counter()
    reasons = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as workdir:
        for test in tests:
            path = os.path.join(rtec_tests, test)
            files, why = description(path)
            found = cases(rtec_tests, test)
            counts = Counter()
            for case in found:
                if files is None:
                    status, note = "rejected", why
                else:
                    status, note = run_case(stgflow, files, case, workdir)
                counts[status] += 1
                if status != "same":
                    reasons[status][re.sub(r"\d+", "N", note)[:120]] += 1
                if verbose or status not in ("same",):
                    print(f"  {test} {case['case']} {case['number']} ({case['scenario']}): "
                          f"{status}{': ' + note if note else ''}")
            total.update(counts)
            summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            if not found:
                summary = f"none read ({why or 'SWI-Prolog could not load the test file'})"
            print(f"{test}: {len(found)} cases: {summary}")
    print(f"all: {sum(total.values())} cases: "
          + ", ".join(f"{n} {s}" for s, n in sorted(total.items())))
    for status, notes in reasons.items():
        print(f"{status}, by reason:")
        for note, n in notes.most_common():
            print(f"  {n:4d}  {note}")


if __name__ == "__main__":
    main()
