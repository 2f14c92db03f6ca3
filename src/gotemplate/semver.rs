//! Sprig's `semver` and `semverCompare` over Masterminds/semver v3.3.0 (the
//! version Helm 3.17 builds with): `version.go` `NewVersion`, `Compare`,
//! `comparePrerelease`; `constraints.go` `NewConstraint`, `parseConstraint`,
//! `rewriteRange` and the `constraint*` checks. A version with a prerelease
//! satisfies only constraints that carry one (`>=1.21-0`).

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use regex::Regex;

use super::value::{Host, HostObject, V};

const SEMVER: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Res {
    version: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

fn res() -> Result<&'static Res, String> {
    static RES: OnceLock<Result<Res, String>> = OnceLock::new();
    RES.get_or_init(|| {
        let re = |p: String| Regex::new(&p).map_err(|e| e.to_string());
        Ok(Res {
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

/// A parsed version (`semver.Version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

/// `semver.NewVersion`.
pub(super) fn parse_version(v: &str) -> Result<Version, String> {
    let caps = res()?
        .version
        .captures(v)
        .ok_or_else(|| "Invalid Semantic Version".to_string())?;
    let seg = |i: usize| -> Result<u64, String> {
        caps.get(i).map_or(Ok(0), |m| {
            m.as_str()
                .trim_start_matches('.')
                .parse::<u64>()
                .map_err(|e| format!("Error parsing version segment: {e}"))
        })
    };
    let text = |i: usize| caps.get(i).map_or("", |m| m.as_str()).to_string();
    let pre = text(5);
    // validatePrerelease: numeric identifiers may not have leading zeros.
    for part in pre.split('.').filter(|_| !pre.is_empty()) {
        if part.len() > 1 && part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()) {
            return Err("Version segment starts with 0".into());
        }
    }
    Ok(Version {
        major: seg(1)?,
        minor: seg(2)?,
        patch: seg(3)?,
        pre,
        metadata: text(8),
        original: v.to_string(),
    })
}

impl Version {
    fn compare(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &o.pre),
            })
    }

    /// `Version.String()`.
    fn string(&self) -> String {
        let mut s = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            s.push('-');
            s.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            s.push('+');
            s.push_str(&self.metadata);
        }
        s
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let sa: Vec<&str> = a.split('.').collect();
    let sb: Vec<&str> = b.split('.').collect();
    for i in 0..sa.len().max(sb.len()) {
        let d = compare_pre_part(
            sa.get(i).copied().unwrap_or(""),
            sb.get(i).copied().unwrap_or(""),
        );
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    match (s.parse::<u64>(), o.parse::<u64>()) {
        (Err(_), Err(_)) => {
            if s > o {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(x), Ok(y)) => {
            if x > y {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

struct Constraint {
    con: Version,
    op: String,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "*" | "X")
}

fn parse_constraint(c: &str) -> Result<Constraint, String> {
    if c.is_empty() {
        return Ok(Constraint {
            con: parse_version("0.0.0")?,
            op: String::new(),
            minor_dirty: false,
            patch_dirty: false,
            dirty: true,
        });
    }
    let m = res()?
        .constraint
        .captures(c)
        .ok_or_else(|| format!("improper constraint: {c}"))?;
    let g = |i: usize| m.get(i).map_or("", |x| x.as_str());
    let (mut ver, mut minor_dirty, mut patch_dirty, mut dirty) =
        (g(2).to_string(), false, false, false);
    if is_x(g(3)) || g(3).is_empty() {
        ver = format!("0.0.0{}", g(6));
        dirty = true;
    } else if is_x(g(4).trim_start_matches('.')) || g(4).is_empty() {
        minor_dirty = true;
        dirty = true;
        ver = format!("{}.0.0{}", g(3), g(6));
    } else if is_x(g(5).trim_start_matches('.')) || g(5).is_empty() {
        dirty = true;
        patch_dirty = true;
        ver = format!("{}{}.0{}", g(3), g(4), g(6));
    }
    let con = parse_version(&ver).map_err(|_| "constraint Parser Error".to_string())?;
    Ok(Constraint {
        con,
        op: g(1).to_string(),
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    #[allow(clippy::too_many_lines)]
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        let pre_blocked = !v.pre.is_empty() && c.pre.is_empty();
        let tilde = || {
            if v.compare(c) == Ordering::Less {
                return false;
            }
            if c.major == 0
                && c.minor == 0
                && c.patch == 0
                && !self.minor_dirty
                && !self.patch_dirty
            {
                return true;
            }
            if v.major != c.major {
                return false;
            }
            v.minor == c.minor || self.minor_dirty
        };
        match self.op.as_str() {
            "" | "=" => {
                if pre_blocked {
                    false
                } else if self.dirty {
                    tilde()
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            "!=" => {
                if self.dirty {
                    if pre_blocked {
                        return false;
                    }
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
                v.compare(c) != Ordering::Equal
            }
            ">" => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major > c.major {
                    true
                } else if v.major < c.major || self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == Ordering::Greater
                }
            }
            "<" => !pre_blocked && v.compare(c) == Ordering::Less,
            ">=" | "=>" => !pre_blocked && v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => !pre_blocked && tilde(),
            "^" => {
                if pre_blocked || v.compare(c) == Ordering::Less {
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
                c.patch == v.patch
            }
            _ => false,
        }
    }
}

/// `semver.NewConstraint(c).Check(v)`.
fn check(constraint: &str, v: &Version) -> Result<bool, String> {
    let r = res()?;
    // rewriteRange: `1 - 2` becomes `>= 1, <= 2 `.
    let mut c = constraint.to_string();
    for m in r.range.captures_iter(constraint) {
        let (Some(all), Some(a), Some(b)) = (m.get(0), m.get(1), m.get(11)) else {
            continue;
        };
        c = c.replacen(
            all.as_str(),
            &format!(">= {}, <= {} ", a.as_str(), b.as_str()),
            1,
        );
    }
    let mut any = false;
    for or in c.split("||") {
        if !r.valid.is_match(or) {
            return Err(format!("improper constraint: {or}"));
        }
        let mut parts: Vec<&str> = r.find.find_iter(or).map(|m| m.as_str()).collect();
        if parts.is_empty() {
            parts.push(or);
        }
        let mut all = true;
        for p in parts {
            if !parse_constraint(p)?.check(v) {
                all = false;
            }
        }
        any |= all;
    }
    Ok(any)
}

/// Sprig's `semverCompare constraint version`.
pub(super) fn semver_compare(constraint: &str, version: &str) -> Result<bool, String> {
    // NewConstraint is parsed first, as Sprig does, so its error wins.
    let r = check(constraint, &parse_version("0.0.0")?);
    r?;
    let v = parse_version(version)?;
    check(constraint, &v)
}

/// `*semver.Version` as a template value: `.Major`, `.Minor`, `.Patch`,
/// `.Prerelease`, `.Metadata`, `.Original`, `.String`, `.Compare`,
/// `.LessThan`, `.GreaterThan`, `.Equal`.
#[derive(Debug)]
struct VersionObject(Version);

impl HostObject for VersionObject {
    fn type_name(&self) -> &'static str {
        "*semver.Version"
    }
    fn field(&self, name: &str) -> Option<V> {
        let v = &self.0;
        let int = |n: u64| V::Int(i64::try_from(n).unwrap_or(i64::MAX));
        Some(match name {
            "Major" => int(v.major),
            "Minor" => int(v.minor),
            "Patch" => int(v.patch),
            "Prerelease" => V::Str(v.pre.clone()),
            "Metadata" => V::Str(v.metadata.clone()),
            "Original" => V::Str(v.original.clone()),
            "String" => V::Str(v.string()),
            _ => return None,
        })
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        let other = match args {
            [V::Host(h)] => h.0.field("Original").and_then(|o| match o {
                V::Str(s) => parse_version(&s).ok(),
                _ => None,
            }),
            _ => None,
        };
        let Some(o) = other else {
            return matches!(name, "Compare" | "LessThan" | "GreaterThan" | "Equal")
                .then(|| Err("wrong type for value; expected *semver.Version".to_string()));
        };
        let ord = self.0.compare(&o);
        Some(Ok(match name {
            "Compare" => V::Int(match ord {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }),
            "LessThan" => V::Bool(ord == Ordering::Less),
            "GreaterThan" => V::Bool(ord == Ordering::Greater),
            "Equal" => V::Bool(ord == Ordering::Equal),
            _ => return None,
        }))
    }
    fn value(&self) -> V {
        V::Str(self.0.string())
    }
}

/// Sprig's `semver version`.
pub(super) fn semver_object(version: &str) -> Result<V, String> {
    Ok(V::Host(Host(Arc::new(VersionObject(parse_version(
        version,
    )?)))))
}
