//! A `targetRevision` resolved as the repo-server resolves it
//! (`util/versions`).

use gotemplate::go::semver::{Constraint, Version};

/// `versions.IsVersion`.
pub(super) fn is_version(rev: &str) -> bool {
    Version::parse(rev).is_ok()
}

/// `versions.MaxVersion` with no tag prefix: the highest version among
/// `tags` that satisfies `revision`, returned as written in the tags.
///
/// # Errors
/// Neither a version nor a constraint, or nothing matches.
pub(crate) fn max_version(revision: &str, tags: &[String]) -> Result<String, String> {
    if let Ok(v) = Version::parse(revision) {
        return Ok(v.original);
    }
    let constraint = match Constraint::parse(revision) {
        Ok(c) => c,
        Err(e) => {
            if tags.iter().any(|t| t == revision) {
                return Ok(revision.to_string());
            }
            return Err(format!("failed to determine semver constraint: {e}"));
        }
    };
    let mut best: Option<Version> = None;
    for tag in tags {
        let Ok(v) = Version::parse(tag) else {
            continue;
        };
        if constraint.check(&v)
            && best
                .as_ref()
                .is_none_or(|b| v.compare(b) == std::cmp::Ordering::Greater)
        {
            best = Some(v);
        }
    }
    best.map(|v| v.original).ok_or_else(|| {
        format!(
            "version matching constraint not found in {} tags",
            tags.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn ranges_resolve_as_max_version_does() {
        let t = tags(&["1.0.0", "1.2.0", "1.10.1", "2.0.0", "2.1.0-rc.1", "junk"]);
        assert_eq!(max_version("1.x", &t).as_deref(), Ok("1.10.1"));
        assert_eq!(max_version(">=1.0, <2.0", &t).as_deref(), Ok("1.10.1"));
        assert_eq!(max_version("*", &t).as_deref(), Ok("2.0.0"));
        assert_eq!(max_version("~1.2", &t).as_deref(), Ok("1.2.0"));
        // A version is a pin: returned as written, without the tags.
        assert_eq!(max_version("v3.0", &t).as_deref(), Ok("v3.0"));
        assert!(max_version("^3", &t).is_err());
        // Not a constraint: string equality with a tag.
        assert_eq!(max_version("junk", &t).as_deref(), Ok("junk"));
        assert!(max_version("other junk!", &t).is_err());
    }
}
