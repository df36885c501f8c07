//! Random valid TD programs and streams, as text.
//!
//! Programs are valid by construction: derived predicates come in groups; an atom read
//! at offset 0 positively may belong to a lower group or the rule's own group (so offset-0
//! recursion and multi-predicate SCCs occur), negatively only to a lower group; atoms read
//! at an offset > 0 may be anything (recursion through time, negation of the past). Rules
//! with an assignment never read their own group at offset 0, so no time point derives
//! unboundedly many facts. A head has one to three rules. Some rules have no positive
//! atom (they start from nothing at every time point: `p(T) :- not p(T-1).`), and some
//! read the time as a value (`V = T * 0`, `T >= 2`), with and without negation; an
//! assignment is now and then a function's value (`V = abs(X - 1)`, `min`, `max`); the note
//! on [`shape_counts`] says how often. About one rule in eight counts (`N = #count { C :
//! … }` over lower groups or the past). Streams carry facts of input and of derived
//! predicates.

use std::fmt::Write as _;

use stgflow_datasets::SplitMix64;

/// A tiny deterministic generator (the datasets' SplitMix64), so a failing case is
/// reproduced by its seed.
#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[derive(Clone, Debug)]
struct Pred {
    name: String,
    /// Object arity.
    arity: usize,
    /// 0 for input predicates, 1.. for derived groups.
    group: usize,
}

/// A generated program and stream.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub program: String,
    pub stream: String,
}

const CONSTANTS: [&str; 4] = ["0", "1", "2", "a"];
/// Few values in streams, so that joins and negations meet.
const STREAM_CONSTANTS: [&str; 3] = ["0", "1", "a"];
const VARS: [&str; 3] = ["X", "Y", "Z"];

/// Generates a program and a stream from `seed`.
pub fn case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut preds = Vec::new();
    for i in 0..2 + rng.below(2) {
        preds.push(Pred {
            name: format!("e{i}"),
            arity: rng.below(3),
            group: 0,
        });
    }
    let groups = 1 + rng.below(3);
    let mut derived = 0;
    for group in 1..=groups {
        for _ in 0..1 + rng.below(2) {
            preds.push(Pred {
                name: format!("p{derived}"),
                arity: rng.below(3),
                group,
            });
            derived += 1;
        }
    }
    let mut program = String::new();
    for head in preds.iter().filter(|p| p.group > 0) {
        for _ in 0..1 + rng.below(3) {
            program.push_str(&rule(&mut rng, &preds, head));
            program.push('\n');
        }
    }
    // Sometimes a rule twice: the planner must drop one copy without changing anything.
    if rng.chance(15) {
        let rules: Vec<&str> = program.lines().collect();
        let copy = rng.pick(&rules).to_string();
        program.push_str(&copy);
        program.push('\n');
    }
    let stream = stream(&mut rng, &preds);
    Case {
        seed,
        program,
        stream,
    }
}

fn args(terms: &[String], time: &str) -> String {
    let mut all = terms.to_vec();
    all.push(time.to_owned());
    all.join(", ")
}

fn time_term(offset: usize) -> String {
    if offset == 0 {
        "T".to_owned()
    } else {
        format!("T-{offset}")
    }
}

/// One random TD rule. Over 100 lines: positive atoms, an assignment, negations,
/// comparisons and the head, in the order they are written, each a few lines.
fn rule(rng: &mut Rng, preds: &[Pred], head: &Pred) -> String {
    let with_assignment = rng.chance(20);
    let mut bound: Vec<String> = Vec::new();
    let mut body: Vec<String> = Vec::new();
    // About one rule in eight has no positive atom: it starts from the unit row at every
    // time point (`p(T) :- not p(T-1).`, `d(T) :- T >= 2.`).
    let positives = [0, 1, 1, 1, 2, 2, 2, 3][rng.below(8)];
    for _ in 0..positives {
        let offset = if rng.chance(50) { 0 } else { 1 + rng.below(3) };
        let candidates: Vec<&Pred> = preds
            .iter()
            .filter(|p| {
                offset > 0 || p.group < head.group || (p.group == head.group && !with_assignment)
            })
            .collect();
        let pred = *rng.pick(&candidates);
        let terms: Vec<String> = (0..pred.arity)
            .map(|_| match rng.below(10) {
                0 => rng.pick(&CONSTANTS).to_string(),
                1 => "_".to_owned(),
                _ => rng.pick(&VARS).to_string(),
            })
            .collect();
        for t in &terms {
            if VARS.contains(&t.as_str()) && !bound.contains(t) {
                bound.push(t.clone());
            }
        }
        body.push(format!(
            "{}({})",
            pred.name,
            args(&terms, &time_term(offset))
        ));
    }
    if with_assignment {
        // From the time (always, without a bound variable) or from a bound variable.
        let source = if bound.is_empty() || rng.chance(40) {
            "T".to_owned()
        } else {
            rng.pick(&bound).clone()
        };
        let k = rng.below(3);
        // Now and then through a function: `abs` of a difference, `min`, `max`.
        let expr = match rng.below(8) {
            0 => format!("abs({source} - {k})"),
            1 => format!("min({source}, {k})"),
            2 => format!("max({k}, {source})"),
            _ => format!("{source} {} {k}", rng.pick(&["+", "-", "*"])),
        };
        body.push(format!("V = {expr}"));
        bound.push("V".to_owned());
    }
    // Now and then a count: `N = #count { C : … }` over atoms of lower groups at offset 0
    // or anything in the past, linked to the rule by the variables it shares (those bound
    // by the rule's atoms make the count 0 where nothing matches).
    if rng.chance(12) {
        if let Some(count) = count(rng, preds, head, &bound) {
            body.push(count);
            bound.push("N".to_owned());
        }
    }
    let negatives = [0, 0, 1, 1, 2][rng.below(5)];
    for _ in 0..negatives {
        let offset = if rng.chance(50) { 0 } else { 1 + rng.below(3) };
        let candidates: Vec<&Pred> = preds
            .iter()
            .filter(|p| offset > 0 || p.group < head.group)
            .collect();
        let pred = *rng.pick(&candidates);
        let terms: Vec<String> = (0..pred.arity)
            .map(|_| {
                if !bound.is_empty() && rng.chance(70) {
                    rng.pick(&bound).clone()
                } else if rng.chance(50) {
                    "_".to_owned()
                } else {
                    rng.pick(&CONSTANTS).to_string()
                }
            })
            .collect();
        body.push(format!(
            "not {}({})",
            pred.name,
            args(&terms, &time_term(offset))
        ));
    }
    if !bound.is_empty() && rng.chance(30) {
        let lhs = rng.pick(&bound).clone();
        let rhs = if rng.chance(50) {
            rng.pick(&bound).clone()
        } else {
            rng.pick(&CONSTANTS).to_string()
        };
        let op = *rng.pick(&["=", "!=", "<", "<=", ">", ">="]);
        body.push(format!("{lhs} {op} {rhs}"));
    }
    // The time read as a value in a comparison: against a constant, or a bound variable.
    if rng.chance(15) {
        let op = *rng.pick(&["!=", "<", "<=", ">", ">="]);
        let other = if !bound.is_empty() && rng.chance(30) {
            rng.pick(&bound).clone()
        } else {
            rng.below(6).to_string()
        };
        body.push(format!("T {op} {other}"));
    }
    if body.is_empty() {
        body.push(format!("{} = {}", rng.below(2), rng.below(2)));
    }
    let head_terms: Vec<String> = (0..head.arity)
        .map(|_| {
            if !bound.is_empty() && rng.chance(85) {
                rng.pick(&bound).clone()
            } else {
                rng.pick(&CONSTANTS).to_string()
            }
        })
        .collect();
    format!(
        "{}({}) :- {}.",
        head.name,
        args(&head_terms, "T"),
        body.join(", ")
    )
}

/// A `#count` literal for a rule of `head` that has bound `bound` so far; `None` where no
/// atom it could count over has an argument.
fn count(rng: &mut Rng, preds: &[Pred], head: &Pred, bound: &[String]) -> Option<String> {
    let mut atoms = Vec::new();
    let mut counts_something = false;
    for _ in 0..1 + rng.below(2) {
        let offset = if rng.chance(60) { 0 } else { 1 + rng.below(2) };
        let candidates: Vec<&Pred> = preds
            .iter()
            .filter(|p| p.arity > 0 && (offset > 0 || p.group < head.group))
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let pred = *rng.pick(&candidates);
        let terms: Vec<String> = (0..pred.arity)
            .map(|_| match rng.below(10) {
                0..=3 => "C".to_owned(),
                4..=6 if !bound.is_empty() => rng.pick(bound).clone(),
                4..=6 => rng.pick(&VARS).to_string(),
                7 => "_".to_owned(),
                _ => rng.pick(&CONSTANTS).to_string(),
            })
            .collect();
        counts_something |= terms.iter().any(|t| t == "C");
        atoms.push(format!(
            "{}({})",
            pred.name,
            args(&terms, &time_term(offset))
        ));
    }
    if atoms.is_empty() {
        return None;
    }
    if !counts_something {
        // Count a variable the first atom gives: replace its first argument.
        let first = &atoms[0];
        let open = first.find('(')?;
        let rest = &first[open + 1..];
        let end = rest.find(',').unwrap_or(rest.len());
        atoms[0] = format!("{}(C{}", &first[..open], &rest[end..]);
    }
    Some(format!("N = #count {{ C : {} }}", atoms.join(", ")))
}

fn stream(rng: &mut Rng, preds: &[Pred]) -> String {
    let mut text = String::new();
    let start = rng.below(3);
    let length = 2 + rng.below(10);
    for t in start..start + length {
        for _ in 0..1 + rng.below(6) {
            // Mostly input predicates, sometimes facts of derived ones.
            let pred = if rng.chance(80) {
                let inputs: Vec<&Pred> = preds.iter().filter(|p| p.group == 0).collect();
                *rng.pick(&inputs)
            } else {
                rng.pick(preds)
            };
            let terms: Vec<String> = (0..pred.arity)
                .map(|_| rng.pick(&STREAM_CONSTANTS).to_string())
                .collect();
            let _ = writeln!(text, "{}({}).", pred.name, args(&terms, &t.to_string()));
        }
    }
    text
}

/// How often the generator writes the shapes that rules starting from nothing take, over
/// some cases: the counts are of rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShapeCounts {
    pub cases: usize,
    pub rules: usize,
    /// Rules without a positive atom.
    pub no_positive_atom: usize,
    /// Of those, rules whose head is in a component that recurses through time.
    pub no_positive_atom_in_temporal_scc: usize,
    /// Rules that read the time as a value, without negation.
    pub reads_time: usize,
    /// Rules that read the time as a value and have a negated atom.
    pub reads_time_with_negation: usize,
    /// Rules without a positive atom or reading the time, whose head has another rule.
    pub beside_another_rule: usize,
    /// Counting rules (`#count`, lowered).
    pub counting: usize,
    /// Rules that take a count as 0 where nothing is counted (they read a count's hidden
    /// `__any` predicate negated).
    pub zero_counts: usize,
    /// Rules with a function's value (`abs`, `min`, `max`).
    pub functions: usize,
}

/// Counts the shapes of [`ShapeCounts`] in `cases` (invalid programs are skipped).
pub fn shape_counts(cases: impl IntoIterator<Item = Case>) -> ShapeCounts {
    use stgflow_lang::ir::Literal;
    let mut counts = ShapeCounts::default();
    for case in cases {
        let compiled = stgflow_lang::compile_str("g.tdl", &case.program);
        let Some(analysis) = compiled.analysis.as_ref() else {
            continue;
        };
        let program = &compiled.program;
        counts.cases += 1;
        counts.rules += program.rules.len();
        let temporal = |pred| {
            analysis
                .temporal_sccs
                .iter()
                .any(|s| s.preds.contains(&pred))
        };
        for rule in &program.rules {
            counts.counting += usize::from(rule.count.is_some());
            counts.functions += usize::from(rule.body.iter().any(|l| {
                matches!(
                    l,
                    Literal::Assign {
                        expr: stgflow_lang::ir::Expr::Call(..),
                        ..
                    }
                )
            }));
            counts.zero_counts +=
                usize::from(rule.body.iter().any(
                    |l| matches!(l, Literal::Negative(a) if program.hidden.contains(&a.pred)),
                ));
            let unit = !rule.has_positive_atom();
            let negated = rule.body.iter().any(|l| matches!(l, Literal::Negative(_)));
            counts.no_positive_atom += usize::from(unit);
            counts.no_positive_atom_in_temporal_scc +=
                usize::from(unit && temporal(rule.head.pred));
            counts.reads_time += usize::from(rule.reads_time() && !negated);
            counts.reads_time_with_negation += usize::from(rule.reads_time() && negated);
            let same_head = program
                .rules
                .iter()
                .filter(|r| r.head.pred == rule.head.pred)
                .count();
            counts.beside_another_rule += usize::from((unit || rule.reads_time()) && same_head > 1);
        }
    }
    counts
}

/// A random program around a predicate that persists, in the shapes the dataflow engine
/// lowers to its persistence operator (EC inertia: start rules, keep rules `h(X, …, T) :-
/// h(X, …, T-1), not s(…, T-k), …`, sometimes a terminating predicate in the multi-valued
/// form), mixed with joins, negation, a ♢ window over it and another recursion through
/// time that reads it; and a stream that sometimes gives facts of `h` and `term` directly.
/// The key is the first argument of `h`, so that the shape is lowered; a variant without
/// it (`not alarm(T-1)`) stays on the time-stepping operator.
pub fn persistence_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut program = String::new();
    // A third of the programs are exactly EC's simple fluent of exclusive values
    // (`operators::persist`'s exclusive form): h(X, V) started by e2 a point back, kept
    // unless terminated, terminated by an e2 of another value.
    let exclusive = rng.chance(33);
    let h_arity = if exclusive { 2 } else { 1 + rng.below(2) };
    // What `h(X, …)` is written with: the key X, then a variable or a constant.
    let second = if exclusive || rng.chance(50) {
        "V"
    } else {
        *rng.pick(&["0", "a"])
    };
    let h_args = |key: &str| {
        if h_arity == 1 {
            key.to_owned()
        } else {
            format!("{key}, {second}")
        }
    };
    // Derived predicates outside the SCC that stop h: a join and a negation over the input.
    program.push_str("s0(X, Y, T) :- e0(X, Y, T), e1(X, T).\n");
    program.push_str("s1(X, T) :- e1(X, T), not e2(X, _, T).\n");
    // Start rules: from an event a point back, from an input at offset 0, a join.
    let start_offset = if exclusive { 1 } else { rng.below(3) };
    let has_v = h_arity == 2 && second == "V";
    let start_args = h_args("X");
    let event_args = if has_v { "X, V" } else { "X, _" };
    program.push_str(&format!(
        "h({start_args}, T) :- e2({event_args}, {}).\n",
        time_term(start_offset)
    ));
    if !exclusive && rng.chance(50) {
        program.push_str(&format!(
            "h({}, T) :- e1(X, T), s1(X, T-1).\n",
            h_args("X").replace(", V", ", 1")
        ));
    }
    // Keep rules.
    let terminated = exclusive || rng.chance(50);
    let stops = [
        "not s1(X, T-1)".to_owned(),
        format!(
            "not s0(X, {}, T-1)",
            if has_v && rng.chance(50) { "V" } else { "_" }
        ),
        "not e1(X, T)".to_owned(),
        format!("not e0(X, {}, T-2)", *rng.pick(&["0", "_"])),
    ];
    let keeps = if exclusive { 1 } else { 1 + rng.below(2) };
    for _ in 0..keeps {
        let mut body = vec![format!("h({}, T-1)", h_args("X"))];
        for _ in 0..if exclusive { 0 } else { rng.below(3) } {
            body.push(rng.pick(&stops).clone());
        }
        if terminated {
            body.push(format!("not term({}, T-1)", h_args("X")));
        }
        program.push_str(&format!("h({}, T) :- {}.\n", h_args("X"), body.join(", ")));
    }
    if terminated {
        let condition = match if exclusive { 0 } else { rng.below(3) } {
            0 if h_arity == 2 => format!("e2(X, W, T), h({}, T), {} != W", h_args("X"), second),
            1 => format!("e1(X, T), h({}, T), not e0(X, 1, T)", h_args("X")),
            _ => format!("e0(X, Y, T), h({}, T), Y != 0", h_args("X")),
        };
        program.push_str(&format!("term({}, T) :- {condition}.\n", h_args("X")));
    }
    if !exclusive && rng.chance(20) {
        // No key: the negation reads no argument of h.
        program.push_str(&format!(
            "h({}, T) :- h({}, T-1), not e1(1, T-1).\n",
            h_args("X"),
            h_args("X")
        ));
    }
    // Readers of h: a join, a negation, a ♢2 window, and a recursion through time.
    program.push_str(&format!(
        "j(X, Y, T) :- h({}, T), e0(X, Y, T).\n",
        h_args("X")
    ));
    program.push_str(&format!(
        "n(X, T) :- e1(X, T), not h({}, T).\n",
        h_args("X").replace(", V", ", _")
    ));
    for k in 0..3 {
        program.push_str(&format!(
            "w(X, T) :- h({}, {}).\n",
            h_args("X").replace(", V", ", _"),
            time_term(k)
        ));
    }
    program.push_str("r(X, T) :- n(X, T-1).\nr(X, T) :- r(X, T-1), not w(X, T-1).\n");
    let mut stream = String::new();
    let start = rng.below(3);
    let values = ["0", "1", "a"];
    for t in start..start + 4 + rng.below(12) {
        for _ in 0..rng.below(5) {
            let x = *rng.pick(&values);
            let y = *rng.pick(&values);
            let fact = match rng.below(10) {
                0..=2 => format!("e0({x}, {y}, {t})."),
                3..=5 => format!("e1({x}, {t})."),
                6..=7 => format!("e2({x}, {y}, {t})."),
                8 => {
                    let args = if h_arity == 1 {
                        x.to_owned()
                    } else {
                        format!("{x}, {y}")
                    };
                    format!("h({args}, {t}).")
                }
                _ if terminated => {
                    let args = if h_arity == 1 {
                        x.to_owned()
                    } else {
                        format!("{x}, {y}")
                    };
                    format!("term({args}, {t}).")
                }
                _ => format!("e1({x}, {t})."),
            };
            stream.push_str(&fact);
            stream.push('\n');
        }
    }
    Case {
        seed,
        program,
        stream,
    }
}

/// A random simple fluent over pairs `h(V, M) = X` as the RTEC translation writes it
/// (`h_i`/`h_t` from events a point back, `h_ie`/`h_te` at once), with an initiation
/// that a partial event triggers for every V of M that holds another value
/// (`initiatedAt(voted(_V, M) = null, T) :- happensAt(start(status(M) = null), T).`):
/// `h_ie` and `h_te` are derived from h a point back, in h's SCC, which the persistence
/// operator runs as derived predicates. Sometimes a second derived initiation, a negated
/// outside atom in it, per-value rules or one rule with the value a variable, input facts
/// of h and h_ie, a reader of h_ie outside, a start that copies h_i; `#output` sometimes
/// leaves h_ie, h_te and h_t out (h_t, and h_i where only h reads it, are then filled in
/// the operator: `PersistPlan::slot_copies`).
pub fn rtec_fluent_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut program = String::new();
    let values = ["a", "b", "c"];
    if rng.chance(50) {
        program.push_str("#output h, g, w.\n");
    }
    let per_value = rng.chance(60);
    if per_value {
        // A copy per value (one rule for all would be a window of width 0).
        for x in values {
            program.push_str(&format!("h_i(V, M, {x}, T) :- ev(V, M, {x}, T).\n"));
        }
    } else {
        program.push_str("h_i(V, M, X, T) :- ev(V, M, X, T).\n");
    }
    // A start that copies h_i, without RTEC's `not h_t`: h_i's facts are read as they are.
    let start_unless = if rng.chance(30) {
        ""
    } else {
        ", not h_t(V, M, {x}, T-1)"
    };
    let negated = if rng.chance(40) {
        ", not hold(M, T)"
    } else {
        ""
    };
    program.push_str(&format!(
        "h_ie(V, M, c, T) :- reset(M, T), h(V, M, O, T-1), O != c{negated}.\n"
    ));
    if rng.chance(40) {
        program.push_str("h_ie(V, M, a, T) :- poke(V, M, T), h(V, M, b, T-1).\n");
    }
    // Terminations from an event of their own: h_i is then read by h's rules alone.
    let own_stops = rng.chance(30);
    if per_value {
        for x in values {
            if own_stops {
                program.push_str(&format!("h_t(V, M, {x}, T) :- off(V, M, {x}, T).\n"));
            }
            for y in values.iter().filter(|&&y| y != x) {
                if !own_stops {
                    program.push_str(&format!("h_t(V, M, {x}, T) :- h_i(V, M, {y}, T).\n"));
                }
                program.push_str(&format!("h_te(V, M, {x}, T) :- h_ie(V, M, {y}, T).\n"));
            }
            let unless = start_unless.replace("{x}", x);
            program.push_str(&format!(
                "h(V, M, {x}, T) :- h_i(V, M, {x}, T-1){unless}.\n\
                 h(V, M, {x}, T) :- h_ie(V, M, {x}, T), not h_te(V, M, {x}, T).\n\
                 h(V, M, {x}, T) :- h(V, M, {x}, T-1), not h_t(V, M, {x}, T-1), not h_te(V, M, {x}, T).\n"
            ));
        }
    } else {
        program.push_str(
            "h_t(V, M, X, T) :- h_i(V, M, Y, T), ev(V, M, X, T), X != Y.\n\
             h_te(V, M, X, T) :- h_ie(V, M, Y, T), h(V, M, X, T-1), X != Y.\n\
             h(V, M, X, T) :- h_i(V, M, X, T-1), not h_t(V, M, X, T-1).\n\
             h(V, M, X, T) :- h_ie(V, M, X, T), not h_te(V, M, X, T).\n\
             h(V, M, X, T) :- h(V, M, X, T-1), not h_t(V, M, X, T-1), not h_te(V, M, X, T).\n",
        );
    }
    if rng.chance(30) {
        program.push_str("seen(V, M, T) :- h_ie(V, M, _, T), ev(V, M, _, T).\n");
    }
    program.push_str("g(M, T) :- h(V, M, a, T), ev(V, M, _, T).\n");
    for k in 0..2 {
        program.push_str(&format!("w(V, M, T) :- h(V, M, b, {}).\n", time_term(k)));
    }
    let stream = pair_stream(&mut rng, 6, |rng, v, m, t| match rng.below(15) {
        0..=6 => format!("ev({v}, {m}, {}, {t}).", rng.pick(&values)),
        7..=8 => format!("reset({m}, {t})."),
        9 => format!("hold({m}, {t})."),
        10 => format!("poke({v}, {m}, {t})."),
        11 => format!("h_ie({v}, {m}, {}, {t}).", rng.pick(&values)),
        12 => format!("off({v}, {m}, {}, {t}).", rng.pick(&values)),
        _ => format!("h({v}, {m}, {}, {t}).", rng.pick(&values)),
    });
    Case {
        seed,
        program,
        stream,
    }
}

/// A random Event Calculus fluent over pairs, as Algorithm 3 writes it for
/// `f(V, M) = X`: start rules from an event, an initiation that a partial event (one of M
/// alone, as `start(status(M) = null)` in voting) triggers for every V that holds a
/// value, sometimes a deadline (`fi`, with or without `p`), inertia, and the multi-valued
/// termination; read by a join and a window. The partial event is sometimes read one
/// point back, so that the state is not refined by V there. For the time-stepping
/// operator's triggers, refined keys and start rules against the reference.
pub fn fluent_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut program = String::new();
    let gate = if rng.chance(50) { ", gate(M, T)" } else { "" };
    program.push_str(&format!("f_i(V, M, X, T) :- ev(V, M, X, T){gate}.\n"));
    let reset_offset = if rng.chance(80) { "T" } else { "T-1" };
    let negated = if rng.chance(50) {
        ", not hold(M, T)"
    } else {
        ""
    };
    program.push_str(&format!(
        "f_i(V, M, c, T) :- reset(M, {reset_offset}), f(V, M, Other, T), Other != c{negated}.\n"
    ));
    if rng.chance(70) {
        let d = 1 + rng.below(4);
        let mut body = vec![format!("f_i(V, M, a, T-{d})")];
        for j in 1..d {
            body.push(format!("not f_t(V, M, a, T-{j})"));
        }
        if rng.chance(50) {
            for j in 1..d {
                body.push(format!("not f_i(V, M, a, T-{j})"));
            }
        }
        program.push_str(&format!("f_i(V, M, b, T) :- {}.\n", body.join(", ")));
    }
    program.push_str("f(V, M, X, T) :- f_i(V, M, X, T-1).\n");
    program.push_str("f(V, M, X, T) :- f(V, M, X, T-1), not f_t(V, M, X, T-1).\n");
    program.push_str("f_t(V, M, X, T) :- f_i(V, M, Y, T), f(V, M, X, T), X != Y.\n");
    if rng.chance(30) {
        program.push_str("f_t(V, M, X, T) :- f(V, M, X, T), stop(M, T).\n");
    }
    program.push_str("g(M, T) :- f(V, M, a, T), ev(V, M, _, T).\n");
    for k in 0..2 {
        program.push_str(&format!("w(V, M, T) :- f(V, M, b, {}).\n", time_term(k)));
    }
    let values = ["a", "b", "c"];
    let stream = pair_stream(&mut rng, 5, |rng, v, m, t| match rng.below(12) {
        0..=5 => format!("ev({v}, {m}, {}, {t}).", rng.pick(&values)),
        6..=7 => format!("reset({m}, {t})."),
        8 => format!("hold({m}, {t})."),
        9 => format!("gate({m}, {t})."),
        10 => format!("stop({m}, {t})."),
        _ => format!("f({v}, {m}, {}, {t}).", rng.pick(&values)),
    });
    Case {
        seed,
        program,
        stream,
    }
}

/// A stream over pairs (v, m) of 0–2 and 0–1: from a random start, 6 to 19 time points,
/// fewer than `most` facts at each, each written by `fact(rng, v, m, t)`.
fn pair_stream(
    rng: &mut Rng,
    most: usize,
    mut fact: impl FnMut(&mut Rng, usize, usize, usize) -> String,
) -> String {
    let mut stream = String::new();
    let start = rng.below(3);
    for t in start..start + 6 + rng.below(14) {
        for _ in 0..rng.below(most) {
            let v = rng.below(3);
            let m = rng.below(2);
            stream.push_str(&fact(rng, v, m, t));
            stream.push('\n');
        }
    }
    stream
}

/// A random cyclic component through time whose rules share no key, NetBill's shape: a
/// contract between two agents `c(M, C)` starts from an acceptance unless either agent
/// is suspended at that point, ends at a deadline, and initiates an obligation of one
/// agent; an agent whose contract ends while its obligation holds is suspended, for a
/// while or until released; each fluent held by inertia. Offsets, deadlines, negations
/// and optional rules vary; events of every kind, and facts of the derived predicates,
/// come in the stream. For the loop through time (`render`'s cycle) against the
/// reference.
pub fn cyclic_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut program = String::new();
    let deadline = 1 + rng.below(4);
    let lag = time_term(rng.below(2));
    let block = match rng.below(3) {
        0 => ", not s(M, T), not s(C, T)",
        1 => ", not s(M, T)",
        _ => ", not s(M, T-1), not s(C, T-1)",
    };
    program.push_str(&format!(
        "c_i(M, C, T) :- accept(C, M, T), offer(M, C, {lag}){block}.\n"
    ));
    // The deadline: a contract ends `deadline` points after it started unless stopped.
    let unless: String = (1..deadline)
        .map(|k| format!(", not c_t(M, C, T-{k})"))
        .collect();
    program.push_str(&format!(
        "c_end(M, C, T) :- c_i(M, C, T-{deadline}){unless}.\n"
    ));
    program.push_str("c_t(M, C, T) :- c_end(M, C, T).\n");
    if rng.chance(50) {
        program.push_str("c_t(M, C, T) :- cancel(M, C, T).\n");
    }
    program.push_str(
        "c(M, C, T) :- c_i(M, C, T-1), not c_t(M, C, T-1).\n\
         c(M, C, T) :- c(M, C, T-1), not c_t(M, C, T-1).\n",
    );
    // Obligations keyed by one agent, from the contract's start.
    program.push_str("o_i(C, T) :- c_i(_M, C, T).\n");
    if rng.chance(50) {
        program.push_str("o_i(M, T) :- c_i(M, _C, T), not pay(M, T).\n");
    }
    program.push_str(
        "o_t(A, T) :- pay(A, T).\n\
         o(A, T) :- o_i(A, T-1), not o_t(A, T-1).\n\
         o(A, T) :- o(A, T-1), not o_t(A, T-1).\n",
    );
    // Suspensions keyed by an agent, from a contract that ended with an obligation.
    let obl_at = time_term(rng.below(2));
    program.push_str(&format!("s_i(C, T) :- c_end(_M, C, T), o(C, {obl_at}).\n"));
    if rng.chance(50) {
        program.push_str("s_i(M, T) :- c_end(M, C, T), o(C, T), not o(M, T).\n");
    }
    let hold = 1 + rng.below(3);
    if rng.chance(60) {
        program.push_str(&format!("s_t(A, T) :- s_i(A, T-{hold}), not s_i(A, T).\n"));
    } else {
        program.push_str("s_t(A, T) :- release(A, T).\n");
    }
    program.push_str(
        "s(A, T) :- s_i(A, T-1), not s_t(A, T-1).\n\
         s(A, T) :- s(A, T-1), not s_t(A, T-1).\n",
    );
    if rng.chance(40) {
        program.push_str("busy(M, T) :- c(M, C, T), o(C, T), not s(M, T).\n");
    }
    let stream = pair_stream(&mut rng, 8, |rng, v, m, t| {
        let (a, b) = (v, m + 1);
        match rng.below(12) {
            0..=2 => format!("accept({a}, {b}, {t})."),
            3..=5 => format!("offer({b}, {a}, {t})."),
            6 => format!("pay({a}, {t})."),
            7 => format!("cancel({b}, {a}, {t})."),
            8 => format!("release({a}, {t})."),
            9 => format!("s({b}, {t})."),
            10 => format!("o_i({a}, {t})."),
            _ => format!("c_i({b}, {a}, {t})."),
        }
    });
    Case {
        seed,
        program,
        stream,
    }
}
