//! The codes of the Event Calculus front end's diagnostics.

stgflow_lang::error_codes! {
    /// EC syntax, the meaning of clauses, and the checks of the translation.
    pub enum Code {
        E501 => "EC: syntax (incl. `;`, `!`)",
        E503 => "EC: an unknown clause head (with \"did you mean\"), or RTEC's Prolog pre-processing",
        E504 => "EC: a clause of the wrong shape (`F` without `=V`, `fi` delay < 1)",
        E505 => "EC: a list or arithmetic as an argument",
        E506 => "EC: not a condition of a time-point rule (incl. a `findall` without the `length` of its list, and a predicate no background fact or rule defines)",
        E507 => "EC: not a condition of a `holdsFor` rule (incl. RTEC's `\\+ I=[]` checks)",
        E508 => "EC: an event or fluent used with two arities",
        E509 => "EC: a name used as event and fluent",
        E510 => "EC: a fluent defined as simple and as statically determined, or declared input and defined",
        E511 => "EC: a list of intervals used before it is defined (or too many disjuncts)",
        E512 => "EC: `fi` relating two fluents",
        E513 => "EC: `initially` not ground",
        E514 => "EC: a file that a directive loads (`:- ['areas.prolog'].`, `consult`) cannot be read",
        W502 => "EC: `holdsFor(…, [])` ignored",
        W503 => "EC: an RTEC bookkeeping declaration ignored (`index`, `cachingOrder`, …)",
        W504 => "EC: an initiation's head variable no condition binds (or no grounding names the pair: never computed)",
        W505 => "EC: `p` without `fi`",
        W506 => "EC: an output event",
        W507 => "EC: background facts that nothing reads",
        W508 => "EC: a definition of RTEC's interval manipulation (`intDurGreater`, `union_all`, …) not read",
    }
}
