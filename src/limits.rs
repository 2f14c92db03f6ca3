//! The wording shared by messages about gitops-lint's own limits on
//! hostile input, so a reader tells them from Argo CD's errors, and the
//! cutting of text that could otherwise grow without bound.

// Templates and globs (the gotemplate crate) hit the same limits and say
// so in the same words.
pub use gotemplate::limits::{bounded_text, BEYOND_LIMITS};

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
