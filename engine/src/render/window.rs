//! Window operators: ⊞d♢ and ⊞d□ in O(1) work per change of the windowed predicate
//! (DESIGN §4), instead of d+1 delayed copies (♢) or a (d+1)-way join (□).
//!
//! The input must be **consolidated and 0/1**: a fact holding on [a, b) is exactly +1 at a
//! and −1 at b. The predicates' collections are `distinct` outputs, so they are.
//!
//! * ♢d p holds at t when p held somewhere in [t−d, t]: on [a, b+d). Delaying only the
//!   retractions by d gives that; overlapping intervals then count 2, so `distinct`.
//! * □d p holds at t when p held at every point of [t−d, t]: on [a+d, b) when b > a+d.
//!   Delaying only the insertions by d gives that — but when b ≤ a+d the −1 at b comes
//!   before the +1 at a+d and the count goes negative in between. `distinct` would turn
//!   that −1 into a fact; `threshold(count > 0)` is the right closure. Both closures are
//!   [`super::zero_one`], which counts over totally ordered time points and keeps only
//!   positive counts.
//!
//! Both clip at the start of the timeline as the literal rules do: time points before the
//! first one hold nothing.

use super::Coll;
use crate::plan::Window;

/// When a change of the windowed predicate takes effect in the window: ♢ delays the
/// retractions by d, □ the insertions.
fn retime(window: Window) -> impl Fn(u64, isize) -> u64 + Clone + 'static {
    move |time, diff| match window {
        Window::Diamond(d) if diff < 0 => time + u64::from(d),
        Window::Box(d) if diff > 0 => time + u64::from(d),
        _ => time,
    }
}

/// Lowers a window over the 0/1 collection `source`, united with `own` (input facts of the
/// window's own predicate), if any: [`super::zero_one::zero_one_by`] delays each change of
/// `source` as it buffers it, in the same operator as the closure.
pub fn lower<'s>(
    source: Coll<'s, u64>,
    own: Option<Coll<'s, u64>>,
    window: Window,
) -> Coll<'s, u64> {
    super::zero_one::zero_one_by(source, own, retime(window))
}
