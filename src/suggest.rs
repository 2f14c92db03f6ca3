//! "Did you mean" answers: the names a mistyped or partial name was
//! probably meant to be (rules, configuration keys, revisions, apps).

/// The closest of `known` to `word`, if close enough to be a likely typo.
#[must_use]
pub(crate) fn did_you_mean<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| s.replace(['_', '-'], "").to_ascii_lowercase();
    let w = norm(word);
    known
        .iter()
        .map(|k| (edit_distance(&w, &norm(k)), *k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Every name of `known` close to `word`, closest first (at most five):
/// likely typos as for [`did_you_mean`], and names that contain `word` or
/// are contained in it (`payments` for `payments-eu`).
#[must_use]
pub(crate) fn close_names<'a>(word: &str, known: &[&'a str]) -> Vec<&'a str> {
    let norm = |s: &str| s.replace(['_', '-'], "").to_ascii_lowercase();
    let w = norm(word);
    let mut scored: Vec<(usize, &'a str)> = known
        .iter()
        .filter_map(|k| {
            let n = norm(k);
            let d = edit_distance(&w, &n);
            let related = !w.is_empty() && !n.is_empty() && (n.contains(&w) || w.contains(&n));
            (d <= (k.len() / 3).max(1) || related).then_some((d, *k))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, k)| k).collect()
}

/// Levenshtein distance, for "did you mean" suggestions (small strings only).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
