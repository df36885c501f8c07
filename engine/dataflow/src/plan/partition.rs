//! How a program's evaluation splits over workers with nothing exchanged between them
//! (the runtime's partitioned replay, `runtime::replay`):
//!
//! * **By time.** What holds at t depends on the input of at most `horizon` time points
//!   before t when no predicate recurses through time: the longest chain of offsets
//!   through the rules. A worker can then evaluate a range of time points from its input
//!   and the `horizon` points before it, alone. Recursion through time (inertia) makes
//!   the horizon unbounded.
//! * **By key.** Every fact is kept on one shard when each predicate has an argument its
//!   facts are sharded by (or is held whole on every shard) and every rule derives its
//!   head from facts of the head's own key: the head's key variable sits at the key
//!   position of each sharded atom of the body, and a positive one is sharded. Inertia
//!   keyed by its fluent, windows by their first argument. A rule that joins two sharded
//!   atoms on different variables (NetBill's contract between a merchant and a consumer,
//!   each suspended on its own) cannot: the program then has no key, and the reason says
//!   which rule.

use stgflow_lang::ir::{Atom, Literal, PredId, Program, Rule, Term};
use stgflow_lang::stratify::ordered_sccs;

/// Where a predicate's facts live when a program runs sharded by key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shard {
    /// On the shard of the argument at this position.
    Arg(usize),
    /// Whole on every shard (computed or fed on each).
    Everywhere,
}

/// How `program` splits (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// The time points before t whose input what holds at t may depend on; `None`:
    /// unbounded (recursion through time).
    pub horizon: Option<u64>,
    /// Per predicate, where its facts live, when the program shards by key.
    pub keys: Result<Vec<Shard>, String>,
}

/// Nodes of the key search tried before giving up (a program of many predicates whose
/// rules constrain each other loosely).
const SEARCH_BUDGET: usize = 100_000;

impl Partitioning {
    pub fn of(program: &Program) -> Partitioning {
        Partitioning {
            horizon: horizon(program),
            keys: keys(program),
        }
    }

    /// What `check --dump plan` says of it: one line each.
    pub fn describe(&self, program: &Program) -> String {
        let by_time = match self.horizon {
            Some(h) => {
                format!("% split by time: yes, each part warmed up by {h} time points before it")
            }
            None => "% split by time: no, a predicate recurses through time".to_owned(),
        };
        let by_key = match &self.keys {
            Ok(keys) => {
                let mut parts: Vec<String> = keys
                    .iter()
                    .enumerate()
                    .map(|(p, shard)| match shard {
                        Shard::Arg(i) => format!("{}/{}", program.pred_name(p), i + 1),
                        Shard::Everywhere => format!("{} everywhere", program.pred_name(p)),
                    })
                    .collect();
                parts.sort();
                format!("% split by key: {}", parts.join(" "))
            }
            Err(why) => format!("% split by key: no, {why}"),
        };
        format!("{by_time}\n{by_key}\n")
    }
}

/// The longest chain of offsets from the input to any predicate; `None` where a cycle
/// goes through an offset above 0.
fn horizon(program: &Program) -> Option<u64> {
    let n = program.predicates.len();
    let mut reach = vec![0u64; n];
    // Longest paths by relaxation: a graph without a cycle through a positive offset
    // settles within n rounds; one that does not settle has such a cycle.
    for _ in 0..=n {
        let mut changed = false;
        for rule in &program.rules {
            let head = rule.head.pred;
            for atom in rule.body.iter().filter_map(Literal::atom) {
                let via = reach[atom.pred] + u64::from(atom.offset);
                if via > reach[head] {
                    reach[head] = via;
                    changed = true;
                }
            }
        }
        if !changed {
            return Some(reach.into_iter().max().unwrap_or(0));
        }
    }
    None
}

/// The atoms of a rule's body with whether each is positive (a counting rule's atoms
/// are read like negated ones, but must be local all the same).
fn body_atoms(rule: &Rule) -> impl Iterator<Item = (&Atom, bool)> {
    rule.body.iter().filter_map(|literal| match literal {
        Literal::Positive(atom) => Some((atom, true)),
        Literal::Negative(atom) => Some((atom, false)),
        _ => None,
    })
}

/// Whether `rule` derives each fact of its head on the head's shard alone, from facts
/// there, under `key`; `Err`: why not.
fn local(rule: &Rule, key: &[Option<Shard>]) -> Result<(), &'static str> {
    let Some(head_key) = key[rule.head.pred] else {
        return Ok(());
    };
    let atoms = || body_atoms(rule).filter(|(atom, _)| key[atom.pred].is_some());
    match head_key {
        Shard::Everywhere => {
            if atoms().all(|(atom, _)| key[atom.pred] == Some(Shard::Everywhere)) {
                Ok(())
            } else {
                Err("a predicate held everywhere is derived from sharded facts")
            }
        }
        Shard::Arg(i) => {
            let Some(Term::Var(x)) = rule.head.args.get(i) else {
                return Err("the head's key is not a variable");
            };
            let mut sharded_positive = false;
            for (atom, positive) in atoms() {
                if let Some(Shard::Arg(j)) = key[atom.pred] {
                    if atom.args.get(j) != Some(&Term::Var(*x)) {
                        return Err("it reads facts of another key than its head's");
                    }
                    sharded_positive |= positive;
                }
            }
            // With every atom assigned, a head derived from facts held everywhere would
            // be derived on every shard.
            let decided = body_atoms(rule).all(|(atom, _)| key[atom.pred].is_some());
            if decided && !sharded_positive && rule.count.is_none() {
                return Err("its head is sharded but no sharded fact starts it");
            }
            if decided && !sharded_positive {
                return Err("it counts facts held everywhere into a sharded head");
            }
            Ok(())
        }
    }
}

/// A key for every predicate under which every rule is local (see [`local`]), found by
/// a search over the predicates from the outputs back to the input, each trying its
/// arguments in order, then being held everywhere (a derived predicate) — but a stream's
/// facts sharded.
fn keys(program: &Program) -> Result<Vec<Shard>, String> {
    let n = program.predicates.len();
    let edges = program
        .rules
        .iter()
        .flat_map(|rule| body_atoms(rule).map(move |(atom, _)| (atom.pred, rule.head.pred)));
    let mut order: Vec<PredId> = ordered_sccs(n, edges).into_iter().flatten().collect();
    order.reverse();
    let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (r, rule) in program.rules.iter().enumerate() {
        rules_of[rule.head.pred].push(r);
        for (atom, _) in body_atoms(rule) {
            rules_of[atom.pred].push(r);
        }
    }
    for rules in &mut rules_of {
        rules.dedup();
    }
    // Stream facts are sharded (held everywhere, every shard would read them all and do
    // the same work); facts without arguments and the program's own (background
    // knowledge) are few, and are best held everywhere.
    let derived = program.derived();
    let mut background = vec![false; n];
    for fact in &program.facts {
        background[fact.pred] = true;
    }
    let choices: Vec<Vec<Shard>> = (0..n)
        .map(|p| {
            let args = (0..program.predicates[p].arity).map(Shard::Arg);
            if derived[p] {
                args.chain([Shard::Everywhere]).collect()
            } else if background[p] || program.predicates[p].arity == 0 {
                [Shard::Everywhere].into_iter().chain(args).collect()
            } else {
                args.collect()
            }
        })
        .collect();
    let mut search = Search {
        program,
        order: &order,
        choices: &choices,
        rules_of: &rules_of,
        key: vec![None; n],
        budget: SEARCH_BUDGET,
        blame: None,
    };
    if search.assign(0) {
        return Ok(search
            .key
            .into_iter()
            .map(|k| k.unwrap_or(Shard::Everywhere))
            .collect());
    }
    Err(match search.blame {
        Some((r, why)) if search.budget > 0 => {
            let rule = &program.rules[r];
            format!(
                "rule r{r} ({}): {why}",
                program.display_rule(rule).to_string().trim_end_matches('.')
            )
        }
        _ => "no key found".to_owned(),
    })
}

struct Search<'a> {
    program: &'a Program,
    order: &'a [PredId],
    /// Each predicate's keys to try, in order.
    choices: &'a [Vec<Shard>],
    rules_of: &'a [Vec<usize>],
    key: Vec<Option<Shard>>,
    budget: usize,
    /// The rule that failed deepest in the search, and why: what the reason names.
    blame: Option<(usize, &'static str)>,
}

impl Search<'_> {
    fn assign(&mut self, at: usize) -> bool {
        let Some(&p) = self.order.get(at) else {
            return true;
        };
        for &choice in &self.choices[p] {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            self.key[p] = Some(choice);
            let failed = self.rules_of[p].iter().find_map(|&r| {
                local(&self.program.rules[r], &self.key)
                    .err()
                    .map(|e| (r, e))
            });
            match failed {
                None if self.assign(at + 1) => return true,
                None => {}
                Some(blame) => self.blame = Some(blame),
            }
        }
        self.key[p] = None;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partitioning(text: &str) -> Partitioning {
        let compiled = stgflow_lang::compile_str("test.tdl", text);
        assert!(compiled.analysis.is_some(), "{text} compiles");
        Partitioning::of(&compiled.program)
    }

    #[test]
    fn a_window_splits_by_time_and_by_key() {
        let windowed = "q(A, B, T) :- p(A, B, T).\nq(A, B, T) :- p(A, B, T-1).\nq(A, B, T) :- p(A, B, T-10).\n";
        let split = partitioning(windowed);
        assert_eq!(split.horizon, Some(10));
        assert_eq!(split.keys, Ok(vec![Shard::Arg(0), Shard::Arg(0)]));
    }

    #[test]
    fn offsets_add_up_along_a_chain() {
        let chain = "q(X, T) :- p(X, T-3).\nr(X, T) :- q(X, T-4), not p(X, T-1).\n";
        assert_eq!(partitioning(chain).horizon, Some(7));
    }

    #[test]
    fn inertia_splits_by_its_fluent_only() {
        let inertia = "holds(F, V, T) :- init(F, V, T-1).\nholds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\nterm(F, V, T) :- init(F, W, T), holds(F, V, T), V != W.\n";
        let split = partitioning(inertia);
        assert_eq!(split.horizon, None);
        let keys = split.keys.expect("inertia has a key");
        assert!(keys.iter().all(|k| *k == Shard::Arg(0)), "{keys:?}");
    }

    #[test]
    fn a_join_on_two_keys_has_none_and_says_which_rule() {
        let join = "c(M, C, T) :- offer(M, C, T), not s(M, T-1), not s(C, T-1).\ns(A, T) :- c(A, B, T-1).\ns(B, T) :- c(A, B, T-2).\n";
        let split = partitioning(join);
        let why = split.keys.expect_err("no single key");
        assert!(why.contains("rule r"), "{why}");
    }

    #[test]
    fn background_facts_are_held_everywhere() {
        let program = "role(a, buyer, 0).\nok(X, T) :- act(X, R, T), role(X, R, T).\nbig(T) :- tick(T).\nflag(X, T) :- ok(X, T), big(T).\n";
        let split = partitioning(program);
        let keys = split.keys.expect("a key");
        let compiled = stgflow_lang::compile_str("test.tdl", program).program;
        let tick = compiled.pred_id("tick").expect("tick");
        assert_eq!(keys[tick], Shard::Everywhere);
    }
}
