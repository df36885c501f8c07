//! The codes of the LARS front end's diagnostics.

stgflow_lang::error_codes! {
    /// LARS syntax, the constructs outside plain LARS, and the checks of the translation.
    pub enum Code {
        E201 => "LARS: syntax",
        E202 => "LARS: a construct outside plain LARS (tuple window, `@` in a head, nested operators, `time_win` other than `(n,0,1,…)`)",
        E203 => "LARS: a time variable not grounded by a positive `time_win(d,0,1,@(T,…))`",
        E204 => "LARS: a time variable used as an atom argument",
        E205 => "LARS: not globally stratified (the cycle through `not` named)",
        E206 => "LARS: a predicate used with two arities",
        E207 => "LARS: a rule expanding to too many TD rules",
    }
}
