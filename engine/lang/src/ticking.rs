//! A rule that can change at every time point without input (W003): it flips a
//! predicate of its own recursion through a negation, hands facts round its recursion by
//! positive atoms (`red(L, T) :- green(L, T-1).` with `green(L, T) :- red(L, T-1), …`), or
//! stamps or divides the time point (`S = T`, `T mod 7 = 0`), while every positive atom it
//! needs can hold between events.
//! Every engine then evaluates every time point of the timeline, so a log stamped in epoch
//! milliseconds costs its length, not its events; the warning says which rule does it,
//! and that `--tick` coarsens the stamps.
//!
//! The test is a sufficient one, made to stay quiet on the programs that change only near
//! events (inertia, windows, deadlines, a comparison the time point crosses once): a rule
//! it names does change at every time point where the facts it reads hold.

use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::ir::{Atom, Expr, Literal, Program, Rule, Term, VarId};
use crate::stratify::{edges, ordered_sccs};
use crate::syntax::ast::ArithOp;

/// Warns about each rule of `program` that can change the output at time points where no
/// input arrives, however far from the last event.
pub fn ticking(program: &Program) -> Diagnostics {
    let n = program.predicates.len();
    let sccs = ordered_sccs(n, edges(program).iter().map(|e| (e.from, e.to)));
    let mut component = vec![0; n];
    for (index, scc) in sccs.iter().enumerate() {
        for &p in scc {
            component[p] = index;
        }
    }
    let lasting = lasting(program);
    let round = positive_rounds(program, &component, &lasting);
    let mut diagnostics = Diagnostics::default();
    for rule in &program.rules {
        let own = |atom: &Atom| component[atom.pred] == component[rule.head.pred];
        let name = |atom: &Atom| program.pred_name(atom.pred).to_owned();
        let label = match circulates(rule, &lasting, &own, &round) {
            Some(atom) => format!(
                "reads `{}` a time point or more back, which its own recursion derives: facts can go round it at every time point",
                name(atom)
            ),
            None => match flips(rule, &lasting, &own, &name) {
                Some(label) => label,
                None => continue,
            },
        };
        let head = program.pred_name(rule.head.pred);
        let mut diagnostic = Diagnostic::warning(
            Code::W003,
            format!("`{head}` can change at every time point without input: every time point of the timeline costs"),
        )
        .with_help("with sparse time stamps (epoch milliseconds), `run --tick N` takes N input units as one time point")
        .with_note("the facts it reads can hold between events, so nothing but the timeline's length bounds how often it changes");
        if let Some(span) = rule.origin.span() {
            diagnostic = diagnostic.with_label(span, label);
        }
        diagnostics.push(diagnostic);
    }
    diagnostics
}

/// A rule that, between events, flips a lasting predicate of its own recursion through a
/// negation, or stamps the time point or takes it modulo: its label, if it does.
fn flips(
    rule: &Rule,
    lasting: &[bool],
    own: &dyn Fn(&Atom) -> bool,
    name: &dyn Fn(&Atom) -> String,
) -> Option<String> {
    // Positive atoms of its own recursion would end with it: a rule that flips must start
    // again from lasting facts outside it.
    if !holds_between_events(rule, |atom| lasting[atom.pred] && !own(atom)) {
        return None;
    }
    let negated = rule.body.iter().find_map(|literal| match literal {
        Literal::Negative(atom) if own(atom) && lasting[atom.pred] => Some(atom),
        _ => None,
    });
    match negated {
        Some(atom) => Some(format!(
            "reads `{}` negated, which it derives itself: it can flip at every time point",
            name(atom)
        )),
        None if stamps_time(rule) => Some(
            "the time point as a value (stamped, or taken modulo): it can differ at every time point"
                .to_owned(),
        ),
        None => None,
    }
}

/// The atom by which a rule moves facts round its own recursion through time without
/// input: an atom a time point or more back on a cycle of positive atoms (`round`, see
/// [`positive_rounds`]), while each of its other positive atoms holds between events.
fn circulates<'r>(
    rule: &'r Rule,
    lasting: &[bool],
    own: &dyn Fn(&Atom) -> bool,
    round: &[usize],
) -> Option<&'r Atom> {
    let head = &rule.head;
    let carried = |atom: &Atom| atom.offset > 0 && own(atom);
    if !holds_between_events(rule, |atom| lasting[atom.pred] || carried(atom)) {
        return None;
    }
    rule.body.iter().find_map(|literal| match literal {
        Literal::Positive(atom)
            if carried(atom) && moves(rule, atom) && round[atom.pred] == round[head.pred] =>
        {
            Some(atom)
        }
        _ => None,
    })
}

/// Whether a positive atom of the rule's own recursion can hand its facts on to the head
/// as something else than the same fact one time point later (which holds it still): a
/// fact of another predicate, of its own further back, or with arguments that can differ;
/// never where a constant of the atom differs from the head's (a deadline's `v0` that
/// becomes `timeout` goes round no further).
fn moves(rule: &Rule, atom: &Atom) -> bool {
    let head = &rule.head;
    let still = atom.pred == head.pred && atom.offset == 1 && atom.args == head.args;
    !still && (atom.pred != head.pred || unifiable(&atom.args, &head.args))
}

/// The components of the graph of the program's positive atoms that move facts
/// ([`moves`]) within a recursion, by rules that need no input besides (their other
/// positive atoms are lasting): a rule whose head and atom share one can hand a fact round
/// and round (`a(X, T) :- b(X, T-1).` with `b(X, T) :- a(X, T-1).`). An atom with a
/// constant is left out: it takes one value of the facts, as an Event Calculus deadline
/// (`status(M, proposed, T-10)`) does, which rarely comes round again.
fn positive_rounds(program: &Program, component: &[usize], lasting: &[bool]) -> Vec<usize> {
    let n = program.predicates.len();
    let mut edges = Vec::new();
    for rule in &program.rules {
        let own = |atom: &Atom| component[atom.pred] == component[rule.head.pred];
        if !holds_between_events(rule, |atom| lasting[atom.pred] || own(atom)) {
            continue;
        }
        for literal in &rule.body {
            if let Literal::Positive(atom) = literal {
                let constant = atom.args.iter().any(|a| matches!(a, Term::Const(_)));
                if own(atom) && !constant && moves(rule, atom) {
                    edges.push((atom.pred, rule.head.pred));
                }
            }
        }
    }
    let mut round = (0..n).collect::<Vec<_>>();
    for (index, scc) in ordered_sccs(n, edges.iter().copied()).iter().enumerate() {
        // A predicate alone on no edge to itself goes round nothing.
        let cycle = scc.len() > 1 || edges.iter().any(|&(a, b)| a == scc[0] && b == scc[0]);
        for &p in scc {
            round[p] = if cycle { n + index } else { p };
        }
    }
    round
}

/// Whether two atoms' arguments can be equal: no position holds two different constants.
fn unifiable(a: &[Term], b: &[Term]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|pair| match pair {
            (Term::Const(x), Term::Const(y)) => x == y,
            _ => true,
        })
}

/// Which predicates can hold at time points no input reaches (the least fixpoint): those
/// with a rule whose positive atoms all can, or that carries its own fact forward in time
/// (`on(X, T) :- on(X, T-1), …`); a rule without positive atoms holds anywhere.
fn lasting(program: &Program) -> Vec<bool> {
    let mut lasting = vec![false; program.predicates.len()];
    loop {
        let mut grew = false;
        for rule in &program.rules {
            let head = &rule.head;
            let carried = |atom: &Atom| {
                lasting[atom.pred]
                    || (atom.offset > 0 && atom.pred == head.pred && atom.args == head.args)
            };
            if !lasting[head.pred] && holds_between_events(rule, carried) {
                lasting[head.pred] = true;
                grew = true;
            }
        }
        if !grew {
            return lasting;
        }
    }
}

/// Whether `rule` can fire between events: each positive atom is `lasting`, and none is
/// read beside its own negation at another time point (`start(X, T) :- on(X, T), not
/// on(X, T-1)`), which holds only where that fact changes.
fn holds_between_events(rule: &Rule, lasting: impl Fn(&Atom) -> bool) -> bool {
    // The negated atoms once: a long window's rule has thousands of positive ones.
    let negated: Vec<&Atom> = (rule.body.iter())
        .filter_map(|literal| match literal {
            Literal::Negative(atom) => Some(atom),
            _ => None,
        })
        .collect();
    let edge = |atom: &Atom| {
        (negated.iter()).any(|other| {
            other.pred == atom.pred && other.args == atom.args && other.offset != atom.offset
        })
    };
    rule.body.iter().all(|literal| match literal {
        Literal::Positive(atom) => lasting(atom) && !edge(atom),
        _ => true,
    })
}

/// Whether the rule's result can differ at each time point through the time as a value:
/// a variable computed from it in the head or a negated atom, or the time taken modulo
/// in a comparison. A comparison the time point crosses once (`T - S >= 10`) changes once.
fn stamps_time(rule: &Rule) -> bool {
    let mut stamped: Vec<VarId> = Vec::new();
    let timed = |expr: &Expr, stamped: &[VarId]| {
        let mut vars = Vec::new();
        expr.vars(&mut vars);
        expr.reads_time() || vars.iter().any(|v| stamped.contains(v))
    };
    let mut modulo = false;
    for literal in &rule.body {
        match literal {
            Literal::Assign { var, expr, .. } if timed(expr, &stamped) => stamped.push(*var),
            Literal::Compare { lhs, rhs, .. } => {
                modulo |= [lhs, rhs]
                    .into_iter()
                    .any(|e| modulo_of(e, &|e| timed(e, &stamped)));
            }
            _ => {}
        }
    }
    let uses = |atom: &Atom| {
        (atom.args.iter()).any(|arg| matches!(arg, Term::Var(v) if stamped.contains(v)))
    };
    let negated = rule
        .body
        .iter()
        .any(|literal| matches!(literal, Literal::Negative(atom) if uses(atom)));
    modulo || negated || uses(&rule.head)
}

/// Whether `expr` takes something `timed` modulo.
fn modulo_of(expr: &Expr, timed: &dyn Fn(&Expr) -> bool) -> bool {
    match expr {
        Expr::Binary(ArithOp::Mod, lhs, _) if timed(lhs) => true,
        Expr::Binary(_, lhs, rhs) => modulo_of(lhs, timed) || modulo_of(rhs, timed),
        Expr::Call(_, args) => args.iter().any(|a| modulo_of(a, timed)),
        Expr::Var(_) | Expr::Time | Expr::Const(_) => false,
    }
}

#[cfg(test)]
mod tests {
    fn warnings(text: &str) -> Vec<String> {
        let compiled = crate::compile_str("t.tdl", text);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        (compiled.diagnostics.iter())
            .filter(|d| d.code == "W003")
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn a_rule_that_flips_on_its_own_is_named() {
        assert_eq!(warnings("p(T) :- not p(T-1).").len(), 1);
        // Through a second predicate, and driven by a fact that persists.
        let text = "on(X, T) :- start(X, T).\n\
                    on(X, T) :- on(X, T-1), not stop(X, T).\n\
                    blink(X, T) :- on(X, T), not dark(X, T).\n\
                    dark(X, T) :- blink(X, T-1).\n";
        let found = warnings(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("`blink`"), "{found:?}");
    }

    /// Facts that go round a recursion through time by positive atoms alone: two
    /// predicates handing a fact to each other, or one holding it every other point.
    #[test]
    fn a_recursion_that_moves_facts_round_without_input_is_named() {
        let pair = "a(X, T) :- e(X, T).\na(X, T) :- b(X, T-1).\nb(X, T) :- a(X, T-1).\n";
        assert_eq!(warnings(pair).len(), 2);
        let other = "p(X, T) :- e(X, T).\np(X, T) :- p(X, T-2).\n";
        assert_eq!(warnings(other).len(), 1);
        let swapped = "p(X, Y, T) :- e(X, Y, T).\np(X, Y, T) :- p(Y, X, T-1).\n";
        assert_eq!(warnings(swapped).len(), 1);
    }

    #[test]
    fn a_rule_stamping_the_time_of_a_lasting_fact_is_named() {
        let text = "on(X, T) :- start(X, T).\n\
                    on(X, T) :- on(X, T-1), not stop(X, T).\n\
                    even(X, T) :- on(X, T), T mod 2 = 0.\n\
                    stamp(X, S, T) :- on(X, T), S = T.\n";
        assert_eq!(warnings(text).len(), 2);
    }

    /// Inertia, windows, and time read at an event's own time point change only near
    /// events; a negated predicate of the recursion that holds only at events (the Event
    /// Calculus's `broken`) does not flip it.
    #[test]
    fn programs_that_change_only_near_events_are_not_named() {
        for text in [
            "on(X, T) :- start(X, T).\non(X, T) :- on(X, T-1), not stop(X, T).\n",
            "q(X, T) :- p(X, T-3).\nseen(X, T) :- p(X, T), T > 100.\n",
            "quiet(T) :- not busy(T).\nbusy(T) :- e(_, T).\n",
            "holds(F, T) :- init(F, T).\n\
             holds(F, T) :- holds(F, T-1), not broken(F, T-1).\n\
             broken(F, T) :- ends(F, T), holds(F, T).\n",
            // LARS's □ since the timeline's start: ends once, when the atom is missing.
            "tick(T) :- 0 = 0.\nstart(T) :- tick(T), not tick(T-1).\n\
             box(X, T) :- a(X, T), start(T).\n\
             box(X, T) :- box(X, T-1), not stop(X, T).\n\
             stop(X, T) :- box(X, T-1), not a(X, T).\n",
            // A deadline: the value the recursion reads is not the one it derives.
            "s(F, V, T) :- init(F, V, T).\ns(F, late, T) :- s(F, v0, T-10), not s(F, v1, T-1).\n",
            "on(X, T) :- start(X, T).\non(X, T) :- on(X, T-1), not stop(X, T).\n\
             late(X, T) :- on(X, T), S = T - 100, S > 0.\n",
            // The Event Calculus's deadline started at a fluent's start (RTEC's `fi`).
            "on(X, T) :- start(X, T).\non(X, T) :- on(X, T-1), not stop(X, T).\n\
             rise(X, T) :- on(X, T), not on(X, T-1).\n\
             due(X, T) :- rise(X, T-3), not undue(X, T-1).\nundue(X, T) :- due(X, T).\n",
        ] {
            assert_eq!(warnings(text), Vec::<String>::new(), "{text}");
        }
    }
}
