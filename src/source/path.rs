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
        // Not `format!`: walks of large trees join every path they list.
        let mut p = String::with_capacity(dir.len() + 1 + name.len());
        p.push_str(dir);
        p.push('/');
        p.push_str(name);
        p
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

/// The order of a walk that lists each directory by name, depth first:
/// `a` and `b` compared segment by segment, as `a.split('/')` and
/// `b.split('/')` compare, without splitting either (a scan sorts the
/// thousands of files of a large fleet this way).
#[must_use]
pub(crate) fn walk_order(a: &str, b: &str) -> std::cmp::Ordering {
    // Up to the first byte that differs, both have the same segments. There,
    // a `/` ends a segment that the other path's continues, so it sorts
    // first; two bytes within a segment compare as bytes. A path that runs
    // out first is a prefix of the other, segment by segment.
    let rank = |c: u8| if c == b'/' { 0 } else { u16::from(c) + 1 };
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => rank(a[i]).cmp(&rank(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_order_is_the_order_of_the_segments() {
        let paths = [
            "",
            "a",
            "a/",
            "a//b",
            "a/b",
            "a-b",
            "a-b/c",
            "a/b/c",
            "a.yaml",
            "a/b.yaml",
            "ab",
            "ab/c",
            "a0",
            "a/\u{0}",
            "a\u{0}",
            "b",
            "B",
            "a/b-c",
            "a/b/c-d",
            "apps/svc-0001.yaml",
            "apps/svc-0001/x",
            "apps/svc-00010",
            "\u{e9}t\u{e9}",
            "z/\u{ff}",
        ];
        for a in paths {
            for b in paths {
                assert_eq!(
                    walk_order(a, b),
                    a.split('/').cmp(b.split('/')),
                    "{a:?} against {b:?}"
                );
            }
        }
    }

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
