//! The bounds on hostile input shared by templates, globs and the
//! application: the wording that tells gitops-lint's own limits from Go's
//! errors, and the cutting of text that could otherwise grow without bound.

use std::borrow::Cow;

/// Said when one of gitops-lint's limits stops an evaluation (a budget of
/// template work, a cap on parameter sets, brace alternatives of a glob):
/// Argo CD has no such limit and would go on, so hitting one makes the
/// result unknown, never an error of Argo CD's.
pub const BEYOND_LIMITS: &str = "(beyond what gitops-lint evaluates)";

/// `s` cut to at most `max` bytes (at a character boundary), with what
/// was left out said: `… (N bytes more) …` between its head and its tail.
#[must_use]
pub fn bounded_text(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let floor = |mut i: usize| {
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while !s.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let head = floor(max * 3 / 4);
    let tail = ceil(s.len() - max / 4);
    Cow::Owned(format!(
        "{} … ({} bytes more) … {}",
        &s[..head],
        tail - head,
        &s[tail..]
    ))
}
