//! The codes of the LARS front end's diagnostics.

stgflow_lang::error_codes! {
    /// LARS syntax, the constructs outside plain LARS, and the checks of the translation.
    pub enum Code {
        E201 => "LARS: syntax",
        E202 => "LARS: a construct not supported (nested modalities, a tuple window over a derived predicate, `time_win` other than `(n,0,1,…)`)",
        E203 => "LARS: a time variable not grounded by a positive `@(T,…)`",
        E204 => "LARS: a time variable used as an atom argument",
        E205 => "LARS: not globally stratified (the cycle through `not` named)",
        E206 => "LARS: a predicate used with two arities",
        E207 => "LARS: a rule expanding to too many TD rules",
        E208 => "LARS: a head `@(T1, h)` whose time is not a body time plus a constant, or comes before a time the body reads",
    }
}
