//! Plain LARS on both sides of Algorithm 2: a generator of random valid LARS programs and
//! Laser streams ([`case`]), a direct interpreter of the LARS semantics ([`interpret`]:
//! Definition 10 evaluated on windows, time point by time point, stratum by stratum,
//! knowing nothing about TD), and [`run_translated`], which compiles the program with
//! `stgflow-lars` and runs the translation on any evaluation path.
//!
//! The interpreter is the independent check that the translation is right: it evaluates
//! `time_win(n,0,1,…)` over the clipped window [max(t0, t−n), t] directly, binds `@`
//! time variables by enumerating the window, and negates by testing, so an error in the
//! translation (an off-by-one offset, a missing clipping rule, a wrong ⊥) shows up as a
//! difference. Built-ins use the engine's own `compare`/`arith`: their semantics are not
//! what is under test.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use hashbrown::{HashMap, HashSet};
use stgflow_eval::eval::{arith, compare};
use stgflow_io::drive::Timeline;
use stgflow_io::stream::{FactReader, Schema};
use stgflow_lang::syntax::ast::CmpOp;
use stgflow_lang::value::Value;
use stgflow_lars::TupleReading;
use stgflow_lars::ast::{Atom, Extended, Literal, Modality, Program, Rule, Term, Time};
use stgflow_lars::stream::LaserStream;

use crate::Engine;
use crate::generate::Rng;

/// A generated LARS program and Laser stream.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub program: String,
    pub stream: String,
}

const INPUTS: [(&str, usize); 3] = [("e", 1), ("f", 2), ("s", 0)];
const CONSTANTS: [&str; 3] = ["a", "b", "1"];
const VARS: [&str; 3] = ["A", "B", "C"];
const TIME_VARS: [&str; 2] = ["T", "U"];

struct Derived {
    name: String,
    arity: usize,
}

/// Generates a valid (safe, globally stratified) plain LARS program and a stream.
pub fn case(seed: u64) -> Case {
    case_for(seed, true)
}

/// [`case`], with modalities over the whole stream (`diamond(a)`, `box(a)`, `@(T, a)` and
/// `@(3, a)` outside a window) only where `whole_stream` is set: they are recursion
/// through time, under which Algorithm 4's graph grows with the stream.
pub fn case_for(seed: u64, whole_stream: bool) -> Case {
    let mut rng = Rng::new(seed);
    let derived: Vec<Derived> = (0..1 + rng.below(4))
        .map(|i| Derived {
            name: format!("d{i}"),
            arity: rng.below(3),
        })
        .collect();
    let mut program = String::new();
    for (i, head) in derived.iter().enumerate() {
        for _ in 0..1 + rng.below(2) {
            let text = if rng.chance(15) {
                head_at_rule(&mut rng, &derived, i, head)
            } else {
                rule(&mut rng, &derived, i, head, whole_stream)
            };
            program.push_str(&text);
            program.push('\n');
        }
    }
    let stream = stream(&mut rng, &derived);
    Case {
        seed,
        program,
        stream,
    }
}

/// Programs of the shape of Laser's micro-benchmarks: one to three rules, each a window
/// (♢, or `@` with its time in the head, sizes 0..4) over an input predicate, and a
/// stream as [`case`]'s (atoms repeated within and across time points, some of the rule
/// heads' predicates).
pub fn window_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut derived = Vec::new();
    let mut program = String::new();
    for i in 0..1 + rng.below(3) {
        let name = format!("d{i}");
        let n = rng.below(5);
        let (text, arity) = match rng.below(5) {
            0 => (format!("{name}(A) :- time_win({n},0,1,diamond(e(A)))"), 1),
            1 => (
                format!("{name}(A,B) :- time_win({n},0,1,diamond(f(A,B)))"),
                2,
            ),
            2 => (format!("{name}(T,A) :- time_win({n},0,1,@(T,e(A)))"), 2),
            3 => (format!("{name}(T,A,B) :- time_win({n},0,1,@(T,f(A,B)))"), 3),
            _ => (format!("{name} :- time_win({n},0,1,diamond(s))"), 0),
        };
        program.push_str(&text);
        program.push('\n');
        derived.push(Derived { name, arity });
    }
    let stream = stream(&mut rng, &derived);
    Case {
        seed,
        program,
        stream,
    }
}

/// Predicates a literal of rule `i` may read: positively inputs and d0..=di (di itself
/// only without MATH, so nothing derives unboundedly), negatively inputs and d0..di-1.
fn candidates(
    derived: &[Derived],
    i: usize,
    negative: bool,
    with_math: bool,
) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = INPUTS.to_vec();
    for (j, d) in derived.iter().enumerate() {
        let ok = if negative {
            j < i
        } else {
            j < i || (j == i && !with_math)
        };
        if ok {
            out.push((&d.name, d.arity));
        }
    }
    out
}

/// One random LARS rule. Over 100 lines: its literals' kinds in the order they are
/// written, each a few lines.
fn rule(
    rng: &mut Rng,
    derived: &[Derived],
    i: usize,
    head: &Derived,
    whole_stream: bool,
) -> String {
    let with_math = rng.chance(25);
    let mut bound: Vec<String> = Vec::new();
    let mut grounded: Vec<&str> = Vec::new();
    let mut body: Vec<String> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let (pred, arity) = *rng.pick(&candidates(derived, i, false, with_math));
        let args: Vec<String> = (0..arity)
            .map(|_| {
                if rng.chance(80) {
                    rng.pick(&VARS).to_string()
                } else {
                    rng.pick(&CONSTANTS).to_string()
                }
            })
            .collect();
        let atom = atom_text(pred, &args);
        bound.extend(args.iter().filter(|a| VARS.contains(&a.as_str())).cloned());
        let d = rng.below(4);
        let choice = rng.below(14);
        let choice = if !whole_stream && matches!(choice, 5..=7 | 9) {
            10
        } else {
            choice
        };
        let input = INPUTS.iter().any(|(p, _)| *p == pred);
        let n = 1 + rng.below(4);
        body.push(match choice {
            // Tuple windows over the stream's predicates: the last n atoms.
            12 if input => match rng.below(3) {
                0 => format!("tuple_win({n},{atom})"),
                1 if rng.chance(50) => format!("tuple_win({n},diamond({atom}))"),
                1 => format!("tuple_win({n},box({atom}))"),
                _ => {
                    let t = *rng.pick(&TIME_VARS);
                    if !grounded.contains(&t) {
                        grounded.push(t);
                    }
                    format!("tuple_win({n},0,1,@({t},{atom}))")
                }
            },
            0 => atom,
            1 => format!("time_win({d},0,1,diamond({atom}))"),
            2 => format!("time_win({d},0,1,box({atom}))"),
            3 if !grounded.is_empty() => format!("@({},{atom})", rng.pick(&grounded)),
            // A window over a bare atom, modalities over the whole stream, `@` at a
            // time point written as a number.
            4 => format!("time_win({d},0,1,{atom})"),
            5 => format!("diamond({atom})"),
            6 => format!("box({atom})"),
            7 => format!("@({},{atom})", rng.below(5)),
            8 => format!("time_win({d},0,1,@({},{atom}))", rng.below(5)),
            9 => {
                // `@(T, a)` outside a window grounds T over the whole stream.
                let t = *rng.pick(&TIME_VARS);
                if !grounded.contains(&t) {
                    grounded.push(t);
                }
                format!("@({t},{atom})")
            }
            _ => {
                let t = *rng.pick(&TIME_VARS);
                if !grounded.contains(&t) {
                    grounded.push(t);
                }
                format!("time_win({d},0,1,@({t},{atom}))")
            }
        });
    }
    bound.sort();
    bound.dedup();
    if rng.chance(35) {
        let (pred, arity) = *rng.pick(&candidates(derived, i, true, with_math));
        let args: Vec<String> = (0..arity)
            .map(|_| {
                if !bound.is_empty() && rng.chance(80) {
                    rng.pick(&bound).clone()
                } else {
                    rng.pick(&CONSTANTS).to_string()
                }
            })
            .collect();
        let atom = atom_text(pred, &args);
        let d = rng.below(4);
        let choice = rng.below(8);
        let choice = if !whole_stream && matches!(choice, 3 | 4) {
            0
        } else {
            choice
        };
        let inner = match choice {
            0 => atom.clone(),
            1 => format!("time_win({d},0,1,diamond({atom}))"),
            2 => format!("time_win({d},0,1,box({atom}))"),
            3 => format!("diamond({atom})"),
            4 => format!("box({atom})"),
            _ if !grounded.is_empty() => {
                let t = rng.pick(&grounded);
                if rng.chance(50) {
                    format!("@({t},{atom})")
                } else {
                    format!("time_win({d},0,1,@({t},{atom}))")
                }
            }
            _ => atom.clone(),
        };
        // `not` inside a modality, or around the literal.
        let input = INPUTS.iter().any(|(p, _)| *p == pred);
        body.push(match rng.below(5) {
            4 if input => format!("not(tuple_win({},diamond({atom})))", 1 + rng.below(4)),
            0 => format!("time_win({d},0,1,diamond(not({atom})))"),
            1 => format!("time_win({d},0,1,box(not({atom})))"),
            _ => format!("not({inner})"),
        });
    }
    let values: Vec<String> = bound
        .iter()
        .cloned()
        .chain(grounded.iter().map(|t| (*t).to_owned()))
        .collect();
    let operand = |rng: &mut Rng| -> String {
        if !values.is_empty() && rng.chance(70) {
            rng.pick(&values).clone()
        } else {
            rng.below(4).to_string()
        }
    };
    if rng.chance(30) {
        let op = *rng.pick(&["=", "!=", "<", "<=", ">", ">="]);
        let (lhs, rhs) = (operand(rng), operand(rng));
        body.push(format!("COMP({op},{lhs},{rhs})"));
    }
    let mut head_values = values.clone();
    if with_math {
        let op = *rng.pick(&["+", "-", "*", "/"]);
        let (lhs, rhs) = (operand(rng), operand(rng));
        let result = if rng.chance(70) || values.is_empty() {
            head_values.push("R".to_owned());
            "R".to_owned()
        } else {
            rng.pick(&values).clone()
        };
        body.push(format!("MATH({op},{result},{lhs},{rhs})"));
    }
    let head_args: Vec<String> = (0..head.arity)
        .map(|_| {
            if !head_values.is_empty() && rng.chance(85) {
                rng.pick(&head_values).clone()
            } else {
                rng.pick(&CONSTANTS).to_string()
            }
        })
        .collect();
    // Shuffle the body: the translation must not depend on literal order (except which
    // positive window grounds a time variable, which it takes as written).
    let mut shuffled = Vec::new();
    while !body.is_empty() {
        shuffled.push(body.remove(rng.below(body.len())));
    }
    format!(
        "{} :- {}",
        atom_text(&head.name, &head_args),
        shuffled.join(" and ")
    )
}

/// A rule with `@` in its head: every atom read at the head's time U (`@(U, h) :-
/// time_win(d,0,1,@(U,a)) and @(U,b) and not(@(U,c))`), or the head at U + k, k at least
/// the window's size, with atoms read at the evaluation time too.
fn head_at_rule(rng: &mut Rng, derived: &[Derived], i: usize, head: &Derived) -> String {
    let d = rng.below(4);
    let mut body = Vec::new();
    let mut bound: Vec<String> = Vec::new();
    let atom = |rng: &mut Rng, negative: bool, bound: &mut Vec<String>| {
        let (pred, arity) = *rng.pick(&candidates(derived, i, negative, true));
        let args: Vec<String> = (0..arity)
            .map(|_| match (negative, bound.is_empty()) {
                (true, false) if rng.chance(80) => rng.pick(bound).clone(),
                (false, _) if rng.chance(80) => rng.pick(&VARS).to_string(),
                _ => rng.pick(&CONSTANTS).to_string(),
            })
            .collect();
        if !negative {
            bound.extend(args.iter().filter(|a| VARS.contains(&a.as_str())).cloned());
        }
        atom_text(pred, &args)
    };
    let first = atom(rng, false, &mut bound);
    body.push(format!("time_win({d},0,1,@(U,{first}))"));
    let later = rng.chance(50);
    if rng.chance(50) {
        let more = atom(rng, false, &mut bound);
        body.push(if later && rng.chance(50) {
            format!("time_win({d},0,1,diamond({more}))")
        } else if later {
            more
        } else {
            format!("@(U,{more})")
        });
    }
    if rng.chance(40) {
        let negated = atom(rng, true, &mut bound);
        body.push(format!("not(@(U,{negated}))"));
    }
    let time = if later {
        let k = d + rng.below(3);
        body.push(format!("MATH(+,T1,U,{k})"));
        "T1"
    } else {
        "U"
    };
    let values: Vec<String> = bound.iter().cloned().chain(["U".to_owned()]).collect();
    let head_args: Vec<String> = (0..head.arity)
        .map(|_| {
            if rng.chance(85) {
                rng.pick(&values).clone()
            } else {
                rng.pick(&CONSTANTS).to_string()
            }
        })
        .collect();
    format!(
        "@({time},{}) :- {}",
        atom_text(&head.name, &head_args),
        body.join(" and ")
    )
}

fn atom_text(pred: &str, args: &[String]) -> String {
    if args.is_empty() {
        pred.to_owned()
    } else {
        format!("{pred}({})", args.join(","))
    }
}

fn stream(rng: &mut Rng, derived: &[Derived]) -> String {
    let start = rng.below(3) as u64;
    let end = start + 4 + rng.below(9) as u64;
    let mut text = format!("#timeline {start} {end}\n");
    let first = start + rng.below(3) as u64;
    for t in first..=end {
        let mut atoms = Vec::new();
        for (pred, arity) in INPUTS {
            for _ in 0..rng.below(3) {
                let args: Vec<String> = (0..arity)
                    .map(|_| rng.pick(&CONSTANTS).to_string())
                    .collect();
                atoms.push(atom_text(pred, &args));
            }
        }
        if rng.chance(10) {
            let d = &derived[rng.below(derived.len())];
            let args: Vec<String> = (0..d.arity)
                .map(|_| rng.pick(&CONSTANTS).to_string())
                .collect();
            atoms.push(atom_text(&d.name, &args));
        }
        let _ = writeln!(text, "{t}: {}", atoms.join(" "));
    }
    text
}

/// A ground atom.
type Fact = (String, Vec<Value>);

/// Bindings of object variables and time variables.
#[derive(Clone, Debug, Default)]
struct Binding {
    values: HashMap<String, Value>,
    times: HashMap<String, u64>,
}

impl Binding {
    fn value(&self, term: &Term) -> Option<Value> {
        match term {
            Term::Const(value, _) => Some(*value),
            Term::Var(v) => self.values.get(&v.name).copied().or_else(|| {
                self.times
                    .get(&v.name)
                    .and_then(|t| i64::try_from(*t).ok())
                    .map(Value::Int)
            }),
        }
    }

    fn is_bound(&self, name: &str) -> bool {
        self.values.contains_key(name) || self.times.contains_key(name)
    }
}

/// What holds at each time point of the timeline.
struct Interpretation {
    start: u64,
    facts: BTreeMap<u64, HashSet<Fact>>,
    /// The stream's atoms in stream order, with their times (for tuple windows).
    stream: Vec<(u64, Fact)>,
    reading: TupleReading,
}

impl Interpretation {
    fn holds(&self, t: u64, fact: &Fact) -> bool {
        self.facts.get(&t).is_some_and(|f| f.contains(fact))
    }

    /// The clipped window [max(t0, t-d), t].
    fn window(&self, t: u64, d: u32) -> std::ops::RangeInclusive<u64> {
        t.saturating_sub(u64::from(d)).max(self.start)..=t
    }

    /// Extensions of `binding` under which `atom` holds at `t`.
    fn matches(&self, t: u64, atom: &Atom, binding: &Binding) -> Vec<Binding> {
        let mut out = Vec::new();
        let Some(facts) = self.facts.get(&t) else {
            return out;
        };
        for (name, args) in facts {
            if *name == atom.predicate.name && args.len() == atom.args.len() {
                out.extend(unify(atom, args, binding));
            }
        }
        out
    }

    /// The atoms of the stream (of every predicate) in a tuple window of `n` at `t`, in
    /// stream order: the last `n` given at or before `t` (LARS's window), or in Laser's
    /// reading every atom of the last time point with atoms and whole time points before it
    /// while their atoms up to it number at most `n`.
    fn last_atoms(&self, t: u64, n: u32) -> &[(u64, Fact)] {
        let given = self.stream.partition_point(|(at, _)| *at <= t);
        if self.reading == TupleReading::Exact || given == 0 {
            return &self.stream[given.saturating_sub(n as usize)..given];
        }
        let first_of = |time: u64| self.stream.partition_point(|(at, _)| *at < time);
        let now = first_of(self.stream[given - 1].0);
        let mut from = now;
        while from > 0 {
            let earlier = first_of(self.stream[from - 1].0);
            if now - earlier > n as usize {
                break;
            }
            from = earlier;
        }
        &self.stream[from..given]
    }

    /// Extensions of `binding` under which the extended atom holds at `t`.
    fn extended(&self, t: u64, e: &Extended, binding: &Binding) -> Vec<Binding> {
        let (size, modality, atom) = match e {
            Extended::Atom(atom) => return self.matches(t, atom, binding),
            Extended::Tuples {
                size,
                modality,
                atom,
                ..
            } => {
                let mut out = Vec::new();
                let last = self.last_atoms(t, *size);
                // The window's timeline is [t', t], t' the time of its oldest atom.
                let oldest = last.first().map(|(at, _)| *at);
                let window: Vec<(u64, &[Value])> = last
                    .iter()
                    .filter(|(_, (name, args))| {
                        *name == atom.predicate.name && args.len() == atom.args.len()
                    })
                    .map(|(at, (_, args))| (*at, &args[..]))
                    .collect();
                if let Some(Modality::Box) = modality {
                    // At every time point of the window's timeline.
                    let Some(oldest) = oldest else {
                        return out;
                    };
                    for (at, args) in &window {
                        if *at != t {
                            continue;
                        }
                        let Some(b) = unify(atom, args, binding) else {
                            continue;
                        };
                        let every = (oldest..=t).all(|u| {
                            window
                                .iter()
                                .any(|(at, other)| *at == u && *other == &args[..])
                        });
                        if every && !out.iter().any(|o: &Binding| o.values == b.values) {
                            out.push(b);
                        }
                    }
                    return out;
                }
                for (at, args) in window {
                    let time = match modality {
                        None if at != t => continue,
                        Some(Modality::At(Time::Var(time))) => Some(time),
                        _ => None,
                    };
                    if let Some(time) = time {
                        if binding
                            .times
                            .get(&time.name)
                            .is_some_and(|&bound| bound != at)
                        {
                            continue;
                        }
                    }
                    let Some(mut b) = unify(atom, args, binding) else {
                        continue;
                    };
                    if let Some(time) = time {
                        b.times.insert(time.name.clone(), at);
                    }
                    if !out
                        .iter()
                        .any(|o: &Binding| o.values == b.values && o.times == b.times)
                    {
                        out.push(b);
                    }
                }
                return out;
            }
            Extended::Window {
                size,
                modality,
                atom,
                ..
            } => (size, modality, atom),
        };
        // `None`: the whole stream so far.
        let window = match size {
            Some(d) => self.window(t, *d),
            None => self.start..=t,
        };
        match modality {
            Modality::Diamond => {
                let mut out = Vec::new();
                for at in window {
                    out.extend(self.matches(at, atom, binding));
                }
                out
            }
            Modality::Box => self
                .matches(t, atom, binding)
                .into_iter()
                .filter(|b| {
                    window
                        .clone()
                        .all(|at| ground(atom, b).is_some_and(|fact| self.holds(at, &fact)))
                })
                .collect(),
            Modality::At(Time::Const(at, _)) if window.contains(at) => {
                self.matches(*at, atom, binding)
            }
            Modality::At(Time::Const(..)) => Vec::new(),
            Modality::At(Time::Var(time)) => match binding.times.get(&time.name) {
                Some(&at) if window.contains(&at) => self.matches(at, atom, binding),
                Some(_) => Vec::new(),
                None => {
                    let mut out = Vec::new();
                    for at in window {
                        for mut b in self.matches(at, atom, binding) {
                            b.times.insert(time.name.clone(), at);
                            out.push(b);
                        }
                    }
                    out
                }
            },
        }
    }
}

/// `binding` extended so that `atom`'s arguments equal `args`, if it can be.
fn unify(atom: &Atom, args: &[Value], binding: &Binding) -> Option<Binding> {
    let mut extended = binding.clone();
    for (term, value) in atom.args.iter().zip(args) {
        match term {
            Term::Const(c, _) if c == value => {}
            Term::Var(v) => match extended.values.get(&v.name) {
                Some(known) if known != value => return None,
                Some(_) => {}
                None => {
                    extended.values.insert(v.name.clone(), *value);
                }
            },
            Term::Const(..) => return None,
        }
    }
    Some(extended)
}

fn ground(atom: &Atom, binding: &Binding) -> Option<Fact> {
    let args: Option<Vec<Value>> = atom.args.iter().map(|t| binding.value(t)).collect();
    Some((atom.predicate.name.clone(), args?))
}

fn vars_of(literal: &Literal) -> Vec<&str> {
    let mut out = Vec::new();
    let mut terms: Vec<&Term> = Vec::new();
    match literal {
        Literal::Positive(e) | Literal::Negative(e, _) => {
            terms.extend(e.atom().args.iter());
            if let Some(time) = e.time_var() {
                out.push(time.name.as_str());
            }
        }
        Literal::Compare { lhs, rhs, .. } => terms.extend([lhs, rhs]),
        Literal::Math { lhs, rhs, .. } => terms.extend([lhs, rhs]),
    }
    out.extend(
        terms
            .into_iter()
            .filter_map(Term::var)
            .map(|v| v.name.as_str()),
    );
    out
}

/// Whether `literal` can be evaluated under `binding`: positive atoms, windows and `@`
/// always (they bind), the rest once their variables are.
fn ready(literal: &Literal, binding: &Binding) -> bool {
    match literal {
        Literal::Positive(_) => true,
        _ => vars_of(literal).iter().all(|v| binding.is_bound(v)),
    }
}

/// All bindings under which the body of `rule` holds at `t`.
fn body(interpretation: &Interpretation, t: u64, rule: &Rule) -> Vec<Binding> {
    let mut states: Vec<(Binding, Vec<usize>)> =
        vec![(Binding::default(), (0..rule.body.len()).collect())];
    let mut done = Vec::new();
    while let Some((binding, pending)) = states.pop() {
        if pending.is_empty() {
            done.push(binding);
            continue;
        }
        // Positive literals first (in order), then whatever has become evaluable.
        let pick = pending
            .iter()
            .position(|&l| {
                matches!(rule.body[l], Literal::Positive(_)) && ready(&rule.body[l], &binding)
            })
            .or_else(|| pending.iter().position(|&l| ready(&rule.body[l], &binding)));
        let Some(pick) = pick else {
            continue;
        };
        let mut rest = pending.clone();
        let literal = &rule.body[rest.remove(pick)];
        match literal {
            Literal::Positive(e) => {
                for b in interpretation.extended(t, e, &binding) {
                    states.push((b, rest.clone()));
                }
            }
            Literal::Negative(e, _) => {
                if interpretation.extended(t, e, &binding).is_empty() {
                    states.push((binding, rest));
                }
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                if let (Some(a), Some(b)) = (binding.value(lhs), binding.value(rhs)) {
                    if compare(*op, a, b) {
                        states.push((binding, rest));
                    }
                }
            }
            Literal::Math {
                op,
                result,
                lhs,
                rhs,
                ..
            } => {
                let Some(value) = binding
                    .value(lhs)
                    .zip(binding.value(rhs))
                    .and_then(|(a, b)| arith(*op, a, b))
                else {
                    continue;
                };
                match (binding.value(result), result) {
                    (Some(known), _) => {
                        if compare(CmpOp::Eq, known, value) {
                            states.push((binding, rest));
                        }
                    }
                    (None, Term::Var(v)) => {
                        let mut b = binding;
                        b.values.insert(v.name.clone(), value);
                        states.push((b, rest));
                    }
                    (None, Term::Const(..)) => {}
                }
            }
        }
    }
    done
}

/// Global strata of the derived predicates (the program must be stratified).
fn strata(program: &Program) -> Vec<Vec<&Rule>> {
    let mut stratum: HashMap<&str, usize> = program
        .rules
        .iter()
        .map(|r| (r.head.predicate.name.as_str(), 0))
        .collect();
    for _ in 0..=program.rules.len() {
        for rule in &program.rules {
            let mut level = stratum[rule.head.predicate.name.as_str()];
            for literal in &rule.body {
                let (e, negative) = match literal {
                    Literal::Positive(e) => (e, false),
                    Literal::Negative(e, _) => (e, true),
                    _ => continue,
                };
                if let Some(&s) = stratum.get(e.atom().predicate.name.as_str()) {
                    level = level.max(s + usize::from(negative));
                }
            }
            stratum.insert(&rule.head.predicate.name, level);
        }
    }
    let top = stratum.values().copied().max().unwrap_or(0);
    (0..=top)
        .map(|s| {
            program
                .rules
                .iter()
                .filter(|r| stratum[r.head.predicate.name.as_str()] == s)
                .collect()
        })
        .collect()
}

/// Evaluates `program` over the Laser `stream` by the LARS semantics; returns the facts of
/// the rule heads' predicates, as `points` lines (`d0(a,3).`).
pub fn interpret(program: &Program, stream: &str) -> Result<BTreeSet<String>, String> {
    interpret_reading(program, stream, TupleReading::Laser)
}

/// [`interpret`] with tuple windows read as `reading` says.
pub fn interpret_reading(
    program: &Program,
    stream: &str,
    reading: TupleReading,
) -> Result<BTreeSet<String>, String> {
    let mut timeline: Option<(u64, u64)> = None;
    let mut input: BTreeMap<u64, HashSet<Fact>> = BTreeMap::new();
    let mut stream_atoms: Vec<(u64, Fact)> = Vec::new();
    let stream_text = stream;
    let stream = &mut stream_atoms;
    for line in stream_text.lines() {
        if let Some(rest) = line.strip_prefix("#timeline") {
            let bounds: Vec<u64> = rest
                .split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect();
            if let [start, end] = bounds[..] {
                timeline = Some((start, end));
            }
            continue;
        }
        let Some((t, atoms)) = line.split_once(':') else {
            continue;
        };
        let t: u64 = t.trim().parse().map_err(|e| format!("{line}: {e}"))?;
        let facts = input.entry(t).or_default();
        for atom in atoms.split_whitespace() {
            let (name, args) = match atom.split_once('(') {
                Some((name, rest)) => (
                    name,
                    rest.trim_end_matches(')')
                        .split(',')
                        .map(Value::parse_loose)
                        .collect(),
                ),
                None => (atom, Vec::new()),
            };
            stream.push((t, (name.to_owned(), args.clone())));
            facts.insert((name.to_owned(), args));
        }
    }
    let (start, end) = timeline.ok_or("the stream declares no timeline")?;
    let mut interpretation = Interpretation {
        start,
        facts: BTreeMap::new(),
        stream: stream_atoms
            .into_iter()
            .filter(|(t, _)| (start..=end).contains(t))
            .collect(),
        reading,
    };
    let heads: BTreeSet<&str> = program
        .rules
        .iter()
        .map(|r| r.head.predicate.name.as_str())
        .collect();
    let strata = strata(program);
    // What the rules derived, per time point: only these are printed (as Laser prints), not
    // the stream's atoms of a head's predicate. A head `@(T1, h)` may derive for a later
    // time point, which then starts with it.
    let mut derived: BTreeMap<u64, HashSet<Fact>> = BTreeMap::new();
    for t in start..=end {
        let mut now = input.get(&t).cloned().unwrap_or_default();
        now.extend(derived.get(&t).into_iter().flatten().cloned());
        interpretation.facts.insert(t, now);
        for rules in &strata {
            loop {
                let mut new = Vec::new();
                for rule in rules {
                    for binding in body(&interpretation, t, rule) {
                        let fact = ground(&rule.head, &binding).ok_or("unbound head variable")?;
                        let at = match &rule.head_time {
                            None => t,
                            Some(Time::Const(at, _)) => *at,
                            Some(Time::Var(var)) => {
                                let value = binding.value(&Term::Var(var.clone()));
                                match value {
                                    Some(Value::Int(at)) => {
                                        u64::try_from(at).map_err(|_| "a head time before 0")?
                                    }
                                    _ => return Err("a head time that is not an integer".into()),
                                }
                            }
                        };
                        if derived.entry(at).or_default().insert(fact.clone()) && at <= t {
                            new.push((at, fact));
                        }
                    }
                }
                if new.is_empty() {
                    break;
                }
                for (at, fact) in new {
                    interpretation.facts.entry(at).or_default().insert(fact);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for (t, facts) in derived.range(start..=end) {
        for (name, args) in facts {
            debug_assert!(heads.contains(name.as_str()));
            let mut line = format!("{name}(");
            for value in args {
                let _ = write!(line, "{value},");
            }
            let _ = write!(line, "{t}).");
            out.insert(line);
        }
    }
    Ok(out)
}

/// Compiles `program_text` with the LARS front end and runs the translation over the
/// Laser `stream` on `engine`, printing the rule heads' predicates in `points` mode.
pub fn run_translated(
    program_text: &str,
    stream: &str,
    engine: &Engine,
) -> Result<BTreeSet<String>, String> {
    run_translated_reading(program_text, stream, engine, TupleReading::Laser)
}

/// [`run_translated`] with tuple windows read as `reading` says.
pub fn run_translated_reading(
    program_text: &str,
    stream: &str,
    engine: &Engine,
    reading: TupleReading,
) -> Result<BTreeSet<String>, String> {
    let compiled = stgflow_lars::compile_str_reading("generated.lars", program_text, reading);
    if compiled.has_errors() {
        return Err(compiled.render_diagnostics(false));
    }
    let program = &compiled.program;
    let analysis = compiled.analysis.as_ref().ok_or("no analysis")?;
    crate::evaluate(
        program,
        analysis,
        Box::new(laser_reader(stream, program)),
        Timeline::default(),
        engine,
    )
}

/// What `--mode laser` prints for `program_text` over the Laser `stream` on `engine`:
/// Laser's lines, a sink that counts each fact's changes
/// (`stgflow_io::sink::Sink::counts_holding`).
pub fn laser_output(program_text: &str, stream: &str, engine: &Engine) -> Result<String, String> {
    let compiled = stgflow_lars::compile_str("generated.lars", program_text);
    if compiled.has_errors() {
        return Err(compiled.render_diagnostics(false));
    }
    let program = &compiled.program;
    let analysis = compiled.analysis.as_ref().ok_or("no analysis")?;
    let mode =
        stgflow_io::sink::Mode::Snapshot(std::sync::Arc::new(stgflow_lars::output::LaserOutput));
    crate::written(
        program,
        analysis,
        Box::new(laser_reader(stream, program)),
        Timeline::default(),
        engine,
        mode,
    )
}

/// A reader of the Laser `stream` for `program`.
fn laser_reader<'a>(stream: &'a str, program: &stgflow_lang::ir::Program) -> FactReader<&'a [u8]> {
    FactReader::new(
        stream.as_bytes(),
        "stream.laser",
        std::sync::Arc::new(LaserStream),
        Schema::new(program),
    )
}
