//! The wording shared by messages about gitops-lint's own limits on
//! hostile input, so a reader tells them from Argo CD's errors, and the
//! cutting of text that could otherwise grow without bound.

use std::borrow::Cow;

/// Said when one of gitops-lint's limits stops an evaluation (a budget of
/// template work, a cap on parameter sets, brace alternatives of a glob):
/// Argo CD has no such limit and would go on, so hitting one makes the
/// result unknown, never an error of Argo CD's.
pub(crate) const BEYOND_LIMITS: &str = "(beyond what gitops-lint evaluates)";

/// The first `shown` of `items` joined by `sep`, then ` and N more` for
/// the rest: a list in a message stays short however many it counts.
pub(crate) fn first_and_more<I>(items: I, shown: usize, sep: &str) -> String
where
    I: ExactSizeIterator<Item = String>,
{
    let total = items.len();
    let named: Vec<String> = items.take(shown).collect();
    let mut out = named.join(sep);
    if total > shown {
        out.push_str(&format!(" and {} more", total - shown));
    }
    out
}

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
