//! The counting operator: a counting rule over one atom and nothing else,
//!
//! ```text
//! h(G…, N, T) :- N = #count { C… : p(X…, T-k) }.
//! ```
//!
//! (what the lowering of `#count` writes for a count over one atom: voting's
//! `#count { V : voted(V, M, aye, T-1) }`), kept rather than evaluated. Per *group* (the
//! values of the head's terms but the count, as the reference evaluator groups them) it
//! holds the distinct values of the counted variables among the facts of p that match the
//! atom, each with the number of facts that give it; the count is how many there are. A
//! change of p costs a lookup of its group and one of its counted values, and a group's
//! fact changes where its count does (a group with nothing to count has none). The
//! time-stepping operator counted a group's facts again at every time point at which one
//! of them changed: voting's 1,800 votes per motion at each of its 100 time points.
//!
//! **Input.** One tagged stream: tag [`SOURCE`] the facts of p that match the atom,
//! delayed by k in front, and tag [`OWN`] h's own input facts, which hold beside the
//! counted ones. Both are exchanged by the hash of their group, so a group's facts meet on
//! one worker.
//!
//! **Output.** h's changes, tagged with its id, at each time point once it is complete.

use differential_dataflow::Hashable;
use hashbrown::HashMap;
use hashbrown::hash_map::Entry;

use super::stepping::{TimeStepped, Update, next_time, operate};
use super::{Coll, Facts, records};
use crate::render::AtomMatcher;
use stgflow_lang::ir::{PredId, Program, Rule, Term};
use stgflow_lang::value::{Row, Value};

/// The tag of p's facts.
pub const SOURCE: u32 = 0;
/// The tag of h's own input facts.
pub const OWN: u32 = 1;

/// Renders the operator for the counting rule `rule` (of `pred`, a count over one atom)
/// over `counted`, the atom's predicate, and `own`, `pred`'s own input facts (see the
/// module docs). The facts that do not match the atom are dropped as they come, before
/// the atom's delay.
pub fn render<'s>(
    program: &Program,
    pred: PredId,
    rule: usize,
    counted: Coll<'s, u64>,
    own: Option<Coll<'s, u64>>,
) -> Facts<'s, u64> {
    let shape = Shape::of(&program.rules[rule]);
    let offset = (program.rules[rule].body.iter().find_map(|l| l.atom())).map_or(0, |a| a.offset);
    let matching = shape.clone();
    let counted = records::flat_map(counted, move |row| {
        matching.matches(&row).then_some((SOURCE, row))
    });
    let counted = match offset {
        0 => counted,
        k => records::delay(counted, u64::from(k)),
    };
    let source = match own {
        Some(own) => counted.concat(records::map(own, |row| (OWN, row))),
        None => counted,
    };
    let route = shape.clone();
    let state = State {
        tag: pred as u32,
        shape,
        groups: HashMap::new(),
        own: HashMap::new(),
        stash: super::zero_one::Stash::default(),
        before: HashMap::new(),
        own_before: HashMap::new(),
        changed: Vec::new(),
        last_processed: None,
    };
    operate(
        source,
        "Count",
        move |((tag, row), _, _): &Update| route.group_of(*tag, row).hashed(),
        state,
    )
}

/// The counting rule, read for the operator.
#[derive(Clone, Debug)]
struct Shape {
    /// What the atom asks of a fact: its constants, its variables written twice alike.
    atom: AtomMatcher,
    /// Per head variable but the count, in order: where its value is in a fact of p.
    group: Vec<usize>,
    /// Where the counted variables' values are in a fact of p.
    counted: Vec<usize>,
    /// The head position of the count.
    count_at: usize,
}

impl Shape {
    /// `rule`'s shape; the planner has checked that it counts over one atom that binds
    /// every head variable but the count, which the head has once.
    fn of(rule: &Rule) -> Shape {
        let count = rule.count.as_ref();
        let atom = rule.body.iter().find_map(|l| l.atom());
        let args = atom.map_or(&[][..], |a| &a.args[..]);
        let at = |term: &Term| args.iter().position(|t| t == term).unwrap_or(0);
        let is_count = |term: &Term| count.is_some_and(|c| *term == Term::Var(c.result));
        let group = (rule.head.args.iter())
            .filter(|term| !is_count(term))
            .map(at)
            .collect();
        let counted = (count.map_or(&[][..], |c| &c.counted[..]).iter())
            .map(|&v| at(&Term::Var(v)))
            .collect();
        let unbound = vec![false; rule.vars.len()];
        Shape {
            atom: atom.map_or_else(AtomMatcher::nothing, |a| AtomMatcher::new(a, &unbound)),
            group,
            counted,
            count_at: rule.head.args.iter().position(is_count).unwrap_or(0),
        }
    }

    /// Whether a fact of p matches the atom.
    fn matches(&self, fact: &[Value]) -> bool {
        self.atom.matches(fact)
    }

    /// The group of a fact with tag `tag`: from a fact of p, the values of the head's
    /// variables but the count; from one of h, its values but the count.
    fn group_of(&self, tag: u32, fact: &[Value]) -> Row {
        if tag == OWN {
            return (fact.iter().enumerate())
                .filter(|(i, _)| *i != self.count_at)
                .map(|(_, v)| *v)
                .collect();
        }
        let value = |&i: &usize| fact.get(i).copied().unwrap_or(Value::Int(0));
        self.group.iter().map(value).collect()
    }

    /// The counted variables' values in a fact of p.
    fn counted_of(&self, fact: &[Value]) -> Row {
        (self.counted.iter())
            .map(|&i| fact.get(i).copied().unwrap_or(Value::Int(0)))
            .collect()
    }

    /// h's fact for `group` counted `n` times.
    fn head(&self, group: &[Value], n: usize) -> Row {
        let n = Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let (before, after) = group.split_at(self.count_at.min(group.len()));
        (before.iter().copied())
            .chain(std::iter::once(n))
            .chain(after.iter().copied())
            .collect()
    }

    /// The count a fact of h says.
    fn count_in(&self, fact: &[Value]) -> Option<usize> {
        match fact.get(self.count_at) {
            Some(Value::Int(n)) => usize::try_from(*n).ok(),
            _ => None,
        }
    }
}

/// A group's distinct counted values, each with the number of facts of p that give it.
type Counted = HashMap<Row, isize>;

/// Adds `diff` to `row`'s count in `counts`, where no count is 0.
fn count(counts: &mut HashMap<Row, isize>, row: Row, diff: isize) {
    match counts.entry(row) {
        Entry::Occupied(mut count) => {
            *count.get_mut() += diff;
            if *count.get() == 0 {
                count.remove();
            }
        }
        Entry::Vacant(count) => {
            if diff != 0 {
                count.insert(diff);
            }
        }
    }
}

struct State {
    /// h's id: the output's tag.
    tag: u32,
    shape: Shape,
    groups: HashMap<Row, Counted>,
    /// h's own input facts, with their counts (none 0).
    own: HashMap<Row, isize>,
    stash: super::zero_one::Stash<(u32, Row)>,
    /// At the time point being taken: the count of each group it changed before it.
    before: HashMap<Row, usize>,
    /// At the time point being taken: whether each own fact it changed held before it.
    own_before: HashMap<Row, bool>,
    /// Facts of h whose holding may have changed at the time point being taken.
    changed: Vec<Row>,
    last_processed: Option<u64>,
}

impl State {
    /// The count of `group` now.
    fn count(&self, group: &[Value]) -> usize {
        self.groups.get(group).map_or(0, HashMap::len)
    }

    /// Whether h's fact `fact` holds, now or (`before`) before the time point being taken.
    fn holds(&self, fact: &Row, before: bool) -> bool {
        let own = match self.own_before.get(fact) {
            Some(&held) if before => held,
            _ => self.own.get(fact).is_some_and(|&c| c > 0),
        };
        own || self.shape.count_in(fact).is_some_and(|n| {
            let group = self.shape.group_of(OWN, fact);
            let count = match self.before.get(&group) {
                Some(&count) if before => count,
                _ => self.count(&group),
            };
            n > 0 && n == count
        })
    }
}

impl TimeStepped for State {
    fn stash(&mut self) -> &mut super::zero_one::Stash<(u32, Row)> {
        &mut self.stash
    }

    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        next_time(self.stash.first_time(), false, self.last_processed, limit)
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut changes = self.stash.take(t);
        for ((tag, fact), diff) in changes.drain(..) {
            if tag == OWN {
                let held = self.own.get(&fact).is_some_and(|&c| c > 0);
                self.own_before.entry(fact.clone()).or_insert(held);
                count(&mut self.own, fact, diff);
                continue;
            }
            let group = self.shape.group_of(SOURCE, &fact);
            let counted = self.groups.entry(group.clone()).or_default();
            let n = counted.len();
            count(counted, self.shape.counted_of(&fact), diff);
            let now = counted.len();
            if now == 0 {
                self.groups.remove(&group);
            }
            if now != n {
                self.before.entry(group).or_insert(n);
            }
        }
        self.stash.give_back(changes);
        let mut changed = std::mem::take(&mut self.changed);
        for (group, &n) in &self.before {
            let now = self.count(group);
            changed.extend(
                [n, now]
                    .into_iter()
                    .filter(|&c| c > 0)
                    .map(|c| self.shape.head(group, c)),
            );
        }
        changed.extend(self.own_before.keys().cloned());
        changed.sort_unstable();
        changed.dedup();
        for fact in changed.drain(..) {
            let (was, is) = (self.holds(&fact, true), self.holds(&fact, false));
            if was != is {
                out.push(((self.tag, fact), t, if is { 1 } else { -1 }));
            }
        }
        self.changed = changed;
        self.before.clear();
        self.own_before.clear();
        self.last_processed = Some(t);
    }
}
