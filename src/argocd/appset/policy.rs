//! The effective `applicationsSync` policy of an ApplicationSet: its own
//! `spec.syncPolicy` against the controller's `--policy` and
//! `--enable-policy-override` (AC `applicationset/utils/policy.go`
//! `DefaultPolicy`).

use goyaml::json::Pointer as _;
use serde_json::Value;

use super::{AppSetError, AppSetSettings};

/// What the ApplicationSet controller may do to the Applications it generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppSetPolicy {
    /// The effective policy name: `sync`, `create-only`, `create-update` or `create-delete`.
    pub(crate) applications_sync: String,
    /// Whether the effective policy came from the controller flag (an
    /// AppSet-level value was ignored or absent) or from the ApplicationSet.
    pub(crate) decided_by: PolicySource,
    /// Existing Applications are updated when the template output changes.
    pub(crate) allows_update: bool,
    /// Applications no longer generated are deleted.
    pub(crate) allows_delete: bool,
    /// `spec.syncPolicy.preserveResourcesOnDeletion: true`: generated apps get
    /// no resources finalizer, so deleting one orphans its resources.
    pub(crate) preserve_resources_on_deletion: bool,
    /// `spec.syncPolicy.applicationsSync` as written, when the controller ignores it.
    pub(crate) ignored_appset_value: Option<String>,
}

/// Where the effective policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PolicySource {
    /// Neither the controller nor the ApplicationSet sets one: `sync`.
    Default,
    /// The controller's `--policy` (the AppSet value is absent or not allowed to override it).
    Controller,
    /// The ApplicationSet's `spec.syncPolicy.applicationsSync`.
    ApplicationSet,
}

const POLICIES: &[&str] = &["create-only", "create-update", "create-delete", "sync"];

/// Computes the effective policy.
///
/// # Errors
/// An `applicationsSync` value outside the CRD's enum (the API server rejects
/// the object), or a controller policy the controller refuses to start with.
pub(crate) fn effective(
    appset: &Value,
    settings: &AppSetSettings,
) -> Result<AppSetPolicy, AppSetError> {
    let controller = settings.controller_policy.clone().unwrap_or_default();
    if !controller.is_empty() && !POLICIES.contains(&controller.as_str()) {
        return Err(AppSetError(format!(
            "controller policy `{controller}` is not one of sync, create-only, create-update, create-delete"
        )));
    }
    // The flag's default is `policy == ""`, read when the flag is defined: an
    // explicit `--enable-policy-override` wins either way.
    let allow_override = settings.policy_override.unwrap_or(controller.is_empty());
    let sync_policy = appset.at("/spec/syncPolicy");
    let own = match sync_policy.and_then(|p| p.get("applicationsSync")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if POLICIES.contains(&s.as_str()) => Some(s.clone()),
        Some(other) => {
            return Err(AppSetError(format!(
                "spec.syncPolicy.applicationsSync {other} is not one of sync, create-only, create-update, create-delete; the API server rejects this ApplicationSet"
            )))
        }
    };
    let (name, decided_by, ignored) = match (&own, allow_override) {
        (Some(o), true) => (o.clone(), PolicySource::ApplicationSet, None),
        (_, _) if controller.is_empty() => ("sync".to_string(), PolicySource::Default, own.clone()),
        (_, _) => (controller.clone(), PolicySource::Controller, own.clone()),
    };
    let preserve = match sync_policy.and_then(|p| p.get("preserveResourcesOnDeletion")) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(AppSetError(format!(
                "spec.syncPolicy.preserveResourcesOnDeletion must be a boolean, found {other}"
            )))
        }
    };
    Ok(AppSetPolicy {
        allows_update: name == "sync" || name == "create-update",
        allows_delete: name == "sync" || name == "create-delete",
        applications_sync: name,
        decided_by,
        preserve_resources_on_deletion: preserve,
        ignored_appset_value: ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(policy: Option<&str>, over: Option<bool>) -> AppSetSettings {
        AppSetSettings {
            controller_policy: policy.map(str::to_string),
            policy_override: over,
            ..AppSetSettings::default()
        }
    }

    fn appset(sync: Option<&str>) -> Value {
        match sync {
            Some(s) => json!({"spec": {"syncPolicy": {"applicationsSync": s}}}),
            None => json!({"spec": {}}),
        }
    }

    #[test]
    fn default_is_sync_and_appset_value_is_honoured_without_controller_flag() {
        let p = effective(&appset(None), &settings(None, None)).expect("valid");
        assert!(p.allows_delete && p.allows_update);
        assert_eq!(p.decided_by, PolicySource::Default);
        let p = effective(&appset(Some("create-update")), &settings(None, None)).expect("valid");
        assert!(!p.allows_delete && p.allows_update);
        assert_eq!(p.decided_by, PolicySource::ApplicationSet);
        let p = effective(&appset(Some("create-only")), &settings(None, None)).expect("valid");
        assert!(!p.allows_delete && !p.allows_update);
        let p = effective(&appset(Some("create-delete")), &settings(None, None)).expect("valid");
        assert!(p.allows_delete && !p.allows_update);
    }

    #[test]
    fn controller_policy_wins_unless_override_enabled() {
        let p = effective(
            &appset(Some("create-update")),
            &settings(Some("sync"), None),
        )
        .expect("valid");
        assert!(
            p.allows_delete,
            "controller --policy=sync ignores the AppSet's create-update"
        );
        assert_eq!(p.ignored_appset_value.as_deref(), Some("create-update"));
        let p = effective(
            &appset(Some("create-update")),
            &settings(Some("sync"), Some(true)),
        )
        .expect("valid");
        assert!(!p.allows_delete);
        let p = effective(&appset(None), &settings(Some("create-only"), None)).expect("valid");
        assert!(!p.allows_delete && !p.allows_update);
        assert_eq!(p.decided_by, PolicySource::Controller);
    }

    #[test]
    fn invalid_values_are_errors() {
        assert!(effective(&appset(Some("delete-all")), &settings(None, None)).is_err());
        assert!(effective(&appset(None), &settings(Some("nope"), None)).is_err());
    }
}
