//! Repository-relative path arithmetic (`/`-separated, no leading `/`).

/// The non-empty segments of `p`.
#[must_use]
pub(crate) fn split(p: &str) -> Vec<String> {
    p.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Joins `rel` onto directory `base` and normalises `.` and `..`.
/// Returns `None` when the result would leave the repository root, or when
/// `rel` is absolute.
#[must_use]
pub(crate) fn join(base: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut out: Vec<&str> = base
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out.join("/"))
}

/// Normalises a path (removing `.`, empty segments and resolvable `..`).
#[must_use]
pub(crate) fn normalize(p: &str) -> Option<String> {
    join("", p)
}

/// `name` inside the repository-relative directory `dir` (`""` is the root).
#[must_use]
pub(crate) fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The directory part of `p` (`""` for a top-level entry).
#[must_use]
pub(crate) fn parent(p: &str) -> &str {
    match p.rfind('/') {
        Some(i) => &p[..i],
        None => "",
    }
}

/// The last segment of `p`.
#[must_use]
pub(crate) fn file_name(p: &str) -> &str {
    match p.rfind('/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// `p` relative to directory `base`, if `p` is inside it.
#[must_use]
pub(crate) fn strip_dir<'a>(p: &'a str, base: &str) -> Option<&'a str> {
    if base.is_empty() {
        return Some(p);
    }
    let rest = p.strip_prefix(base)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_normalises_and_refuses_escape() {
        assert_eq!(
            join("apps/a", "../b/x.yaml").as_deref(),
            Some("apps/b/x.yaml")
        );
        assert_eq!(join("apps", "./x/./y").as_deref(), Some("apps/x/y"));
        assert_eq!(join("apps", "../../x"), None);
        assert_eq!(join("apps", "/etc/passwd"), None);
        assert_eq!(join("", "").as_deref(), Some(""));
    }

    #[test]
    fn strip_dir_only_matches_whole_segments() {
        assert_eq!(strip_dir("apps/ab/x", "apps/a"), None);
        assert_eq!(strip_dir("apps/a/x", "apps/a"), Some("x"));
        assert_eq!(strip_dir("x", ""), Some("x"));
    }
}
