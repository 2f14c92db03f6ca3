//! Settings a rule alone reads, from top-level keys of its own. The rule
//! declares them beside its check (a [`RuleSettingsSpec`]: the keys, and
//! how to read them with the [`Checker`]); `Config::parse` hands each rule
//! its keys and keeps what it read until the rule takes it back with
//! [`super::Config::rule_settings`]. `Config` itself holds the keys more
//! than one part of the pipeline reads.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::check::Checker;
use crate::finding::RuleMeta;

/// What a configuration may name of the rules: their facts (for
/// `rules.select`, `rules.ignore` and `rules.severity`) and the settings
/// they read (`rules::catalog()` builds it).
pub(crate) struct RuleCatalog {
    /// Every rule's facts.
    pub(crate) metas: Vec<&'static RuleMeta>,
    /// The settings of the rules that have some.
    pub(crate) settings: Vec<&'static RuleSettingsSpec>,
}

/// A rule's settings: the top-level keys it owns and how they are read.
pub struct RuleSettingsSpec {
    /// The top-level keys, as the file spells them.
    pub(crate) keys: &'static [&'static str],
    /// Reads the settings from the file's top-level mapping, where one of
    /// `keys` at least is given, reporting each problem on the checker.
    pub(crate) read: fn(&mut Checker<'_>, &Map<String, Value>) -> Arc<dyn RuleSettings>,
}

/// Settings a rule has read, kept in `Config` without their type until the
/// rule takes them back.
pub(crate) trait RuleSettings: Any + fmt::Debug + Send + Sync {
    /// The settings, to be taken back at their type.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` holds the same settings.
    fn same_as(&self, other: &dyn RuleSettings) -> bool;
}

impl<T: Any + fmt::Debug + PartialEq + Send + Sync> RuleSettings for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn RuleSettings) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

/// The settings read from one file, one entry per rule whose keys it gives.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadSettings(pub(super) Vec<Arc<dyn RuleSettings>>);

impl ReadSettings {
    /// The settings of type `T`, if the file gave them.
    pub(super) fn get<T: RuleSettings>(&self) -> Option<&T> {
        self.0
            .iter()
            .find_map(|s| (**s).as_any().downcast_ref::<T>())
    }
}

impl PartialEq for ReadSettings {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| (**a).same_as(&**b))
    }
}
