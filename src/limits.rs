//! The wording shared by messages about gitops-lint's own limits on
//! hostile input, so a reader tells them from Argo CD's errors.

/// Said when one of gitops-lint's limits stops an evaluation (a budget of
/// template work, a cap on parameter sets, brace alternatives of a glob):
/// Argo CD has no such limit and would go on, so hitting one makes the
/// result unknown, never an error of Argo CD's.
pub(crate) const BEYOND_LIMITS: &str = "(beyond what gitops-lint evaluates)";
