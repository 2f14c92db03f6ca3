//! Versions and version constraints as Helm reads them: Masterminds/semver
//! v3 (`NewVersion`, `NewConstraint`, `Constraints.Check`), which
//! `helm dependency build` uses to accept a `file://` dependency (helm
//! `pkg/downloader/manager.go` `tarFromLocalDir`) and Argo CD to tell a
//! chart version from a range (argo-cd `util/versions/version.go`
//! `IsVersion`).

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex::Regex;

/// A version as `semver.NewVersion` accepts it: `v` prefix allowed, minor
/// and patch optional, build metadata ignored when comparing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
}

/// The version part of a constraint (`cvRegex`): `x`, `X` and `*` allowed.
const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";

/// The operators, in the order Go's leftmost-first alternation tries them.
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

fn version_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$")
            .unwrap_or_else(|_| unreachable_regex())
    })
}

/// The fixed patterns above compile; a regex that does not is a bug caught
/// by the unit tests, so it matches nothing rather than aborting a run.
fn unreachable_regex() -> Regex {
    Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable_regex())
}

impl Version {
    /// `semver.NewVersion`.
    #[must_use]
    pub(crate) fn parse(s: &str) -> Option<Version> {
        let m = version_re().captures(s)?;
        let num = |i: usize| -> Option<u64> {
            match m.get(i) {
                Some(g) => g.as_str().trim_start_matches('.').parse().ok(),
                None => Some(0),
            }
        };
        let pre = m.get(5).map_or("", |g| g.as_str()).to_string();
        // Numeric prerelease identifiers have no leading zeros.
        if pre
            .split('.')
            .any(|p| p.len() > 1 && p.starts_with('0') && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        Some(Version {
            major: num(1)?,
            minor: num(2)?,
            patch: num(3)?,
            pre,
        })
    }

    /// `major.minor.patch[-pre]`.
    #[must_use]
    pub(crate) fn text(&self) -> String {
        let mut s = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            s.push('-');
            s.push_str(&self.pre);
        }
        s
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| compare_prerelease(&self.pre, &o.pre))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Version) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// `comparePrerelease`: no prerelease ranks above any; parts compare
/// numerically when both are numbers, numbers rank below words.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(i), Ok(j)) => i.cmp(&j),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            _ => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

/// One comparison of a constraint.
#[derive(Debug, Clone)]
struct Term {
    op: String,
    con: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// A constraint as `semver.NewConstraint` reads it: `||` of groups of terms
/// joined by spaces or commas; `a - b` ranges; `x`, `X`, `*` wildcards.
#[derive(Debug, Clone)]
pub(crate) struct Constraint {
    any_of: Vec<Vec<Term>>,
}

fn regexes() -> &'static (Regex, Regex, Regex, Regex) {
    static RE: OnceLock<(Regex, Regex, Regex, Regex)> = OnceLock::new();
    RE.get_or_init(|| {
        let re = |s: String| Regex::new(&s).unwrap_or_else(|_| unreachable_regex());
        (
            // constraintRegex
            re(format!(r"^\s*({OPS})\s*({CV})\s*$")),
            // constraintRangeRegex
            re(format!(r"\s*({CV})\s+-\s+({CV})\s*")),
            // findConstraintRegex
            re(format!(r"({OPS})\s*({CV})")),
            // validConstraintRegex
            re(format!(
                r"^(\s*({OPS})\s*({CV})\s*)((?:\s+|,\s*)({OPS})\s*({CV})\s*)*$"
            )),
        )
    })
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraint {
    /// `semver.NewConstraint`; `None` is its "improper constraint" error.
    #[must_use]
    pub(crate) fn parse(text: &str) -> Option<Constraint> {
        let (single, range, find, valid) = regexes();
        // rewriteRange: `a - b` is `>= a, <= b`.
        let mut rewritten = text.to_string();
        for m in range.captures_iter(text) {
            let (whole, a, b) = (m.get(0)?.as_str(), m.get(1)?.as_str(), m.get(11)?.as_str());
            rewritten = rewritten.replacen(whole, &format!(">= {a}, <= {b}"), 1);
        }
        let mut any_of = Vec::new();
        for group in rewritten.split("||") {
            if !valid.is_match(group) {
                return None;
            }
            let mut terms = Vec::new();
            for p in find.find_iter(group).map(|m| m.as_str()) {
                terms.push(Self::term(single, p)?);
            }
            any_of.push(terms);
        }
        Some(Constraint { any_of })
    }

    /// `parseConstraint`.
    fn term(single: &Regex, s: &str) -> Option<Term> {
        let m = single.captures(s)?;
        let g = |i: usize| m.get(i).map_or("", |x| x.as_str());
        let (major, minor, patch, pre) = (g(3), g(4), g(5), g(6));
        let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
        let ver = if is_x(major) || major.is_empty() {
            dirty = true;
            format!("0.0.0{pre}")
        } else if is_x(minor.trim_start_matches('.')) || minor.is_empty() {
            dirty = true;
            minor_dirty = true;
            format!("{major}.0.0{pre}")
        } else if is_x(patch.trim_start_matches('.')) || patch.is_empty() {
            dirty = true;
            patch_dirty = true;
            format!("{major}{minor}.0{pre}")
        } else {
            g(2).to_string()
        };
        Some(Term {
            op: g(1).to_string(),
            con: Version::parse(&ver)?,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    /// `Constraints.Check`.
    #[must_use]
    pub(crate) fn check(&self, v: &Version) -> bool {
        self.any_of.iter().any(|all| all.iter().all(|t| t.check(v)))
    }
}

impl Term {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // A prerelease satisfies only a constraint that names one.
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v == c
                }
            }
            "!=" => self.not_equal(v),
            ">" => {
                if !self.dirty || (!self.minor_dirty && !self.patch_dirty) {
                    return v > c;
                }
                match v.major.cmp(&c.major) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    Ordering::Equal => !self.minor_dirty && v.minor > c.minor,
                }
            }
            "<" => v < c,
            ">=" | "=>" => v >= c,
            "<=" | "=<" => {
                if !self.dirty {
                    return v <= c;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            } else if self.minor_dirty {
                return false;
            } else if c.patch != v.patch && !self.patch_dirty {
                return true;
            } else if self.patch_dirty {
                if !v.pre.is_empty() || !c.pre.is_empty() {
                    return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v != c
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v < c {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.con;
        if v < c {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        v.patch == c.patch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(c: &str, v: &str) -> bool {
        let c = Constraint::parse(c).unwrap_or_else(|| panic!("constraint {c}"));
        c.check(&Version::parse(v).unwrap_or_else(|| panic!("version {v}")))
    }

    #[test]
    fn versions_parse_as_new_version_does() {
        assert_eq!(
            Version::parse("v1.2").map(|v| v.text()).as_deref(),
            Some("1.2.0")
        );
        assert_eq!(
            Version::parse("1.2.3-rc.1+b5").map(|v| v.text()).as_deref(),
            Some("1.2.3-rc.1")
        );
        for bad in ["", "1.2.3.4", "latest", "1.0.0-01", ">=1.0"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn constraints_follow_masterminds_semver() {
        // (constraint, version, satisfied)
        let table = [
            ("1.2.3", "1.2.3", true),
            ("1.2.3", "1.2.4", false),
            ("1.2", "1.2.9", true),
            ("1", "1.9.0", true),
            ("1", "2.0.0", false),
            ("*", "7.0.0", true),
            ("*", "1.0.0-rc.1", false),
            (">=1.0.0", "1.0.0", true),
            (">1.0.0", "1.0.0", false),
            (">1", "1.5.0", false),
            (">1", "2.0.0", true),
            (">1.1", "1.1.9", false),
            (">1.1", "1.2.0", true),
            ("<2.0.0", "1.9.9", true),
            ("<=1.2", "1.2.9", true),
            ("<=1.2", "1.3.0", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("~1", "1.9.0", true),
            ("^1.2.3", "1.9.0", true),
            ("^1.2.3", "2.0.0", false),
            ("^0.2.3", "0.2.9", true),
            ("^0.2.3", "0.3.0", false),
            ("^0.0.3", "0.0.4", false),
            ("1.x", "1.4.0", true),
            ("!=1.2.3", "1.2.3", false),
            ("!=1.x", "1.2.3", false),
            ("!=1.x", "2.0.0", true),
            (">=1.0, <2.0", "1.5.0", true),
            (">=1.0 <2.0", "2.0.0", false),
            ("<1.0 || >=2.0", "2.1.0", true),
            ("1.0 - 1.4", "1.4.0", true),
            ("1.0 - 1.4", "1.5.0", false),
            (">=1.0.0-0", "1.0.0-rc.1", true),
        ];
        for (c, v, want) in table {
            assert_eq!(ok(c, v), want, "{c} against {v}");
        }
        // helm: "improper constraint: " for a dependency without a version.
        assert!(Constraint::parse("").is_none());
        assert!(Constraint::parse("latest").is_none());
        assert!(Constraint::parse(">=1.0 garbage").is_none());
    }
}
