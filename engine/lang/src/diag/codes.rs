//! Diagnostic codes, each layer's in one table: an enum made by [`error_codes!`] whose
//! variants are the codes, each with the one-line summary the README's table shows (a
//! test holds the README against every table). A [`super::Diagnostic`] takes a code of
//! such an enum, never a string, so no code is used that its table does not explain.

/// A diagnostic code: its text (`E001`) and what it means, in a line.
pub trait ErrorCode: Copy + std::fmt::Debug + 'static {
    fn as_str(self) -> &'static str;
    fn summary(self) -> &'static str;
}

/// Declares an enum of diagnostic codes, `CODE => "summary"` each, with `ALL` (every code,
/// in order), `as_str`, `summary` and [`ErrorCode`].
///
/// ```
/// stgflow_lang::error_codes! {
///     /// Codes of an example layer.
///     pub enum Code {
///         E901 => "something is wrong",
///         W901 => "something looks odd",
///     }
/// }
/// assert_eq!(Code::E901.as_str(), "E901");
/// assert_eq!(Code::ALL.len(), 2);
/// ```
#[macro_export]
macro_rules! error_codes {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($code:ident => $summary:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $(
                #[doc = $summary]
                $code,
            )+
        }

        impl $name {
            /// Every code of the table, in order.
            pub const ALL: &'static [$name] = &[$($name::$code,)+];

            /// The code as written in diagnostics: `E001`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$code => stringify!($code),)+
                }
            }

            /// The code written `code` (`E001`), if the table has it.
            pub fn from_code(code: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|c| c.as_str() == code)
            }

            /// What the code means, in a line (the README's table).
            pub const fn summary(self) -> &'static str {
                match self {
                    $($name::$code => $summary,)+
                }
            }
        }

        impl $crate::diag::ErrorCode for $name {
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn summary(self) -> &'static str {
                $name::summary(self)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

crate::error_codes! {
    /// The codes of the TD language: syntax, lowering and validation.
    pub enum Code {
        E001 => "syntax (expected/found, unterminated string, number too large, unknown directive)",
        E002 => "unsafe rule: a head variable not bound by a positive body atom; a counted variable also outside its `#count` or not in it",
        E003 => "a variable of a negated atom or built-in not bound by a positive atom; a variable a `#count` shares with its rule that no positive atom of the count binds",
        E004 => "more than one time variable in a rule",
        E005 => "the time variable used as an object argument",
        E006 => "future dependency (`T+1` in the body, or a head derived at `T+k`)",
        E007 => "a predicate used with different arities",
        E008 => "not temporally stratified: a cycle through negation (or a `#count`) at the same time point",
        E009 => "a malformed time argument (a constant or expression in a rule, a head at `T-k`)",
        E010 => "a fact that is not ground or has no valid time",
        E011 => "arithmetic inside an atom argument",
        W001 => "`#output` names an unknown predicate",
        W002 => "a predicate read once and defined nowhere, one letter away from one the program uses: a typo?",
        W003 => "a rule that can change at every time point without input (it flips a predicate of its own recursion, hands facts round it by positive atoms, or reads the time point): every time point of the timeline costs",
    }
}
