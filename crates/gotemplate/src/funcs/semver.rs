//! Sprig's `semver` and `semverCompare` (`semver.go`), over the crate's
//! Masterminds/semver library.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::go::semver::{Constraint, Version};
use crate::value::{Host, HostObject, V};

/// Sprig's `semverCompare constraint version`.
pub(super) fn semver_compare(constraint: &str, version: &str) -> Result<bool, String> {
    // NewConstraint is parsed first, as Sprig does, so its error wins.
    let c = Constraint::parse(constraint)?;
    Ok(c.check(&Version::parse(version)?))
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
            "String" => V::Str(v.to_string()),
            _ => return None,
        })
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        let other = match args {
            [V::Host(h)] => h.0.field("Original").and_then(|o| match o {
                V::Str(s) => Version::parse(&s).ok(),
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
        V::Str(self.0.to_string())
    }
}

/// Sprig's `semver version`.
pub(super) fn semver_object(version: &str) -> Result<V, String> {
    Ok(V::Host(Host(Arc::new(VersionObject(Version::parse(
        version,
    )?)))))
}
