//! The names of the predicates the translation invents (`f_i`, `f_t`, `f_start`,
//! `f__grounded`, …), made so that none is a name of the description: a user's event
//! `gap_start` and the `start` of a fluent `gap` are two predicates. Each invented name is
//! written with its user's part marked ([`INVENTED`]) while the rules are written; once
//! they are, [`resolve`] gives each the plain name where no name of the description takes
//! it (so descriptions without such a clash translate as they always did), else the plain
//! name with its suffix's `_` doubled until it is free.

use hashbrown::{HashMap, HashSet};
use stgflow_lang::syntax::ast;

use super::Translation;
use super::terms::{INVENTED, invented};
use stgflow_lang::ir::Origin;

/// Gives every invented name in `out` its final name (see the module docs); `taken` are
/// the description's own names, besides those its rules use.
pub(super) fn resolve<'a>(out: &mut Translation, taken: impl IntoIterator<Item = &'a str>) {
    let atoms = atoms_of(out);
    let mut used: HashSet<String> = taken.into_iter().map(str::to_owned).collect();
    let plain = atoms.iter().map(|a| &a.predicate.name);
    used.extend(plain.filter(|n| !n.contains(INVENTED)).cloned());
    // In order of first use, so that the names do not depend on a hash's order.
    let mut names: HashMap<String, String> = HashMap::new();
    for atom in &atoms {
        let name = &atom.predicate.name;
        if name.contains(INVENTED) && !names.contains_key(name) {
            let free = free_name(name, &used);
            used.insert(free.clone());
            names.insert(name.clone(), free);
        }
    }
    for atom in atoms {
        if let Some(name) = names.get(&atom.predicate.name) {
            atom.predicate.name.clone_from(name);
        }
    }
    for item in &mut out.program.items {
        if let ast::Item::Output(outputs, _) = item {
            for ident in outputs {
                ident.name = text(&ident.name, &names);
            }
        }
    }
    for (name, _) in &mut out.printed {
        *name = text(name, &names);
    }
    for origin in &mut out.origins {
        if let Origin::Generated { by, .. } = origin {
            *by = text(by, &names);
        }
    }
    for diagnostic in &mut out.diagnostics.0 {
        diagnostic.message = text(&diagnostic.message, &names);
        for label in &mut diagnostic.labels {
            label.message = text(&label.message, &names);
        }
        for note in &mut diagnostic.notes {
            *note = text(note, &names);
        }
        if let Some(help) = &mut diagnostic.help {
            *help = text(help, &names);
        }
    }
}

/// Names background predicates that the description gives at several arities apart, by
/// their arity (`areaType/1` and `areaType/2` in RTEC's maritime files, two predicates
/// to Prolog, are `areaType_1` and `areaType_2`), as invented names: `background` are the
/// background predicates with their arities.
pub(super) fn by_arity(out: &mut Translation, background: &[(String, usize)]) {
    let several = |name: &str| {
        let mut arities = background.iter().filter(|(n, _)| n == name);
        arities.next().is_some() && arities.next().is_some()
    };
    for atom in atoms_of(out) {
        // The last argument is the time.
        let arity = atom.args.len().saturating_sub(1);
        let name = &atom.predicate.name;
        if several(name) && background.iter().any(|(n, a)| n == name && *a == arity) {
            atom.predicate.name = invented(name, &format!("_{arity}"));
        }
    }
}

/// Every atom of the translation: of its rules, facts and domain rules.
fn atoms_of(out: &mut Translation) -> Vec<&mut ast::Atom> {
    let mut atoms = Vec::new();
    for item in &mut out.program.items {
        match item {
            ast::Item::Rule(rule) => {
                atoms.push(&mut rule.head);
                collect(&mut rule.body, &mut atoms);
            }
            ast::Item::Fact(atom) => atoms.push(atom),
            ast::Item::Output(_, _) => {}
        }
    }
    for rule in &mut out.domains {
        atoms.push(&mut rule.head);
        atoms.push(&mut rule.source);
    }
    atoms
}

/// The atoms of `body`, counted ones included.
fn collect<'b>(body: &'b mut [ast::Literal], atoms: &mut Vec<&'b mut ast::Atom>) {
    for literal in body {
        match literal {
            ast::Literal::Positive(atom) | ast::Literal::Negative(atom, _) => atoms.push(atom),
            ast::Literal::Count(count) => collect(&mut count.body, atoms),
            ast::Literal::Builtin(_) => {}
        }
    }
}

/// The plain name of the invented `name` (`f` and `_i`: `f_i`), or, where a name in
/// `used` takes it, the first free one with its suffix's leading `_` doubled (`f__i`,
/// `f___i`, …).
fn free_name(name: &str, used: &HashSet<String>) -> String {
    let (user, suffix) = name.split_once(INVENTED).unwrap_or((name, ""));
    let mut underscores = String::new();
    loop {
        let candidate = format!("{user}{underscores}{suffix}");
        if !used.contains(&candidate) {
            return candidate;
        }
        underscores.push('_');
    }
}

/// `text` with every invented name in it given its final name.
fn text(text: &str, names: &HashMap<String, String>) -> String {
    if !text.contains(INVENTED) {
        return text.to_owned();
    }
    let mut out = text.to_owned();
    // Longest first: a name that ends another (`b·_i` in `ab·_i`) goes after it.
    let mut invented: Vec<(&String, &String)> = names.iter().collect();
    invented.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    for (from, to) in invented {
        out = out.replace(from.as_str(), to);
    }
    // A marked name no atom uses (a message about one never written): its plain form.
    out.replace(INVENTED, "")
}
