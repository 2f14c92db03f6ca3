//! Versions and version constraints as Masterminds/semver v3.3.0 reads them
//! (the version Helm 3.17 and Sprig build with): `version.go` `NewVersion`,
//! `Compare`, `comparePrerelease`, `String`; `constraints.go`
//! `NewConstraint`, `rewriteRange`, `parseConstraint` and the
//! `constraint*` checks.
//!
//! Helm uses it for a chart's `version` and `kubeVersion`, for `file://`
//! dependencies (`pkg/downloader/manager.go` `tarFromLocalDir`) and for
//! `--kube-version` (`chartutil.ParseKubeVersion`); Sprig's `semver` and
//! `semverCompare` expose it to templates; Argo CD tells a chart version
//! from a range with it (`util/versions/version.go` `IsVersion`). Errors
//! carry the library's own text.

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;

/// `semVerRegex`.
const SEMVER: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
/// `cvRegex`: the version part of a constraint, `x`, `X` and `*` allowed.
const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
/// The operators, in the order Go's leftmost-first alternation tries them.
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Patterns {
    version: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

fn patterns() -> Result<&'static Patterns, String> {
    static PATTERNS: OnceLock<Result<Patterns, String>> = OnceLock::new();
    PATTERNS
        .get_or_init(|| {
            let re = |p: String| Regex::new(&p).map_err(|e| e.to_string());
            Ok(Patterns {
                version: re(format!("^{SEMVER}$"))?,
                constraint: re(format!(r"^\s*({OPS})\s*({CV})\s*$"))?,
                range: re(format!(r"\s*({CV})\s+-\s+({CV})\s*"))?,
                find: re(format!(r"({OPS})\s*({CV})"))?,
                valid: re(format!(
                    r"^(\s*({OPS})\s*({CV})\s*)((?:\s+|,\s*)({OPS})\s*({CV})\s*)*$"
                ))?,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A parsed version (`semver.Version`). Two versions are equal when they
/// compare equal: build metadata is kept but not compared, as `Equal` does.
#[derive(Debug, Clone)]
pub struct Version {
    /// The major version.
    pub major: u64,
    /// The minor version.
    pub minor: u64,
    /// The patch version.
    pub patch: u64,
    /// The prerelease, without its `-`.
    pub pre: String,
    /// The build metadata, without its `+`.
    pub metadata: String,
    /// The text it was parsed from.
    pub original: String,
}

impl Version {
    /// `semver.NewVersion`: `v` prefix allowed, minor and patch optional.
    ///
    /// # Errors
    /// `Invalid Semantic Version`, an out-of-range segment, or a numeric
    /// prerelease identifier with a leading zero.
    pub fn parse(v: &str) -> Result<Version, String> {
        let caps = patterns()?
            .version
            .captures(v)
            .ok_or_else(|| "Invalid Semantic Version".to_string())?;
        let segment = |i: usize| -> Result<u64, String> {
            caps.get(i).map_or(Ok(0), |m| {
                let digits = m.as_str().trim_start_matches('.');
                // The regex admits digits only, so range is the one failure.
                digits.parse::<u64>().map_err(|_| {
                    format!(
                        "Error parsing version segment: strconv.ParseUint: parsing {digits:?}: value out of range"
                    )
                })
            })
        };
        let text = |i: usize| caps.get(i).map_or("", |m| m.as_str()).to_string();
        let pre = text(5);
        // validatePrerelease: numeric identifiers have no leading zeros.
        if pre
            .split('.')
            .any(|p| p.len() > 1 && p.starts_with('0') && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err("Version segment starts with 0".into());
        }
        Ok(Version {
            major: segment(1)?,
            minor: segment(2)?,
            patch: segment(3)?,
            pre,
            metadata: text(8),
            original: v.to_string(),
        })
    }

    /// `Version.Compare`: prereleases rank below their release, metadata
    /// is ignored.
    #[must_use]
    pub fn compare(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &o.pre),
            })
    }
}

/// `Version.String`: `major.minor.patch[-pre][+metadata]`.
impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl PartialEq for Version {
    fn eq(&self, o: &Version) -> bool {
        self.compare(o) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Ord for Version {
    fn cmp(&self, o: &Version) -> Ordering {
        self.compare(o)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Version) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// `comparePrerelease`, part by part (`comparePrePart`): a missing part
/// ranks lowest, numbers compare numerically and rank below words.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = (
            pa.get(i).copied().unwrap_or(""),
            pb.get(i).copied().unwrap_or(""),
        );
        let o = if x == y {
            Ordering::Equal
        } else if x.is_empty() {
            Ordering::Less
        } else if y.is_empty() {
            Ordering::Greater
        } else {
            match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(i), Ok(j)) => i.cmp(&j),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One comparison of a constraint (`constraint`).
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
pub struct Constraint {
    any_of: Vec<Vec<Term>>,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraint {
    /// `semver.NewConstraint`.
    ///
    /// # Errors
    /// `improper constraint: …` (with the `||` group or term at fault) or
    /// `constraint Parser Error`.
    pub fn parse(text: &str) -> Result<Constraint, String> {
        let p = patterns()?;
        // rewriteRange: `a - b` is `>= a, <= b `.
        let mut rewritten = text.to_string();
        for m in p.range.captures_iter(text) {
            let (Some(whole), Some(a), Some(b)) = (m.get(0), m.get(1), m.get(11)) else {
                continue;
            };
            rewritten = rewritten.replacen(
                whole.as_str(),
                &format!(">= {}, <= {} ", a.as_str(), b.as_str()),
                1,
            );
        }
        let mut any_of = Vec::new();
        for group in rewritten.split("||") {
            if !p.valid.is_match(group) {
                return Err(format!("improper constraint: {group}"));
            }
            let mut parts: Vec<&str> = p.find.find_iter(group).map(|m| m.as_str()).collect();
            if parts.is_empty() {
                parts.push(group);
            }
            let terms = parts
                .into_iter()
                .map(|t| Term::parse(p, t))
                .collect::<Result<_, _>>()?;
            any_of.push(terms);
        }
        Ok(Constraint { any_of })
    }

    /// `Constraints.Check`.
    #[must_use]
    pub fn check(&self, v: &Version) -> bool {
        self.any_of.iter().any(|all| all.iter().all(|t| t.check(v)))
    }
}

impl Term {
    /// `parseConstraint`; the empty term is `>=0.0.0` with wildcards.
    fn parse(p: &Patterns, c: &str) -> Result<Term, String> {
        if c.is_empty() {
            return Ok(Term {
                op: String::new(),
                con: Version::parse("0.0.0")?,
                dirty: true,
                minor_dirty: false,
                patch_dirty: false,
            });
        }
        let m = p
            .constraint
            .captures(c)
            .ok_or_else(|| format!("improper constraint: {c}"))?;
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
        Ok(Term {
            op: g(1).to_string(),
            con: Version::parse(&ver).map_err(|_| "constraint Parser Error".to_string())?,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    /// The `constraint*` function of the operator. A prerelease version
    /// satisfies only a term that names a prerelease, except a `!=` term
    /// without wildcards (`constraintNotEqual` checks it only when dirty).
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        let pre_blocked = !v.pre.is_empty() && c.pre.is_empty();
        if pre_blocked && (self.dirty || self.op != "!=") {
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
                if !self.dirty {
                    return v > c;
                }
                match v.major.cmp(&c.major) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    Ordering::Equal if self.minor_dirty => false,
                    Ordering::Equal if self.patch_dirty => v.minor > c.minor,
                    Ordering::Equal => v > c,
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

    /// `constraintNotEqual`.
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

    /// `constraintTilde`.
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

    /// `constraintCaret`.
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

    fn satisfies(c: &str, v: &str) -> bool {
        let c = Constraint::parse(c).unwrap_or_else(|e| panic!("constraint {c}: {e}"));
        c.check(&Version::parse(v).unwrap_or_else(|e| panic!("version {v}: {e}")))
    }

    #[test]
    fn versions_parse_as_new_version_does() {
        let v = Version::parse("v1.2").map(|v| v.to_string());
        assert_eq!(v.as_deref(), Ok("1.2.0"));
        let v = Version::parse("1.2.3-rc.1+b5").map(|v| v.to_string());
        assert_eq!(v.as_deref(), Ok("1.2.3-rc.1+b5"));
        for bad in ["", "1.2.3.4", "latest", ">=1.0"] {
            assert_eq!(
                Version::parse(bad).map(|v| v.to_string()),
                Err("Invalid Semantic Version".to_string()),
                "{bad}"
            );
        }
        assert_eq!(
            Version::parse("1.0.0-01").map(|v| v.to_string()),
            Err("Version segment starts with 0".to_string())
        );
        assert_eq!(
            Version::parse("99999999999999999999.0.0").map(|v| v.to_string()),
            Err("Error parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": value out of range".to_string())
        );
    }

    #[test]
    fn comparison_ignores_metadata_and_ranks_prereleases_below_releases() {
        let v = |s: &str| Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(v("1.0.0+a"), v("1.0.0+b"));
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert!(v("1.0.0-rc.1") < v("1.0.0-rc.1.1"));
        assert!(v("1.0.0-2") < v("1.0.0-10"));
        assert!(v("1.0.0-10") < v("1.0.0-alpha"));
        assert!(v("1.0.0-alpha") < v("1.0.0-beta"));
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
            // constraintNotEqual checks prereleases only for wildcards.
            ("!=1.2.3", "1.0.0-rc.1", true),
            ("!=1.x", "2.0.0-rc.1", false),
            (">=1.0, <2.0", "1.5.0", true),
            (">=1.0 <2.0", "2.0.0", false),
            ("<1.0 || >=2.0", "2.1.0", true),
            ("1.0 - 1.4", "1.4.0", true),
            ("1.0 - 1.4", "1.5.0", false),
            (">=1.0.0-0", "1.0.0-rc.1", true),
            (">=1.21-0", "1.29.0-eks.1", true),
        ];
        for (c, v, want) in table {
            assert_eq!(satisfies(c, v), want, "{c} against {v}");
        }
    }

    #[test]
    fn improper_constraints_carry_the_library_text() {
        let err = |c: &str| Constraint::parse(c).err();
        // helm's error for a dependency without a version.
        assert_eq!(err("").as_deref(), Some("improper constraint: "));
        assert_eq!(
            err("latest").as_deref(),
            Some("improper constraint: latest")
        );
        assert_eq!(
            err(">=1.0 garbage").as_deref(),
            Some("improper constraint: >=1.0 garbage")
        );
        assert_eq!(
            err(">=1 || x.y").as_deref(),
            Some("improper constraint:  x.y")
        );
    }
}
