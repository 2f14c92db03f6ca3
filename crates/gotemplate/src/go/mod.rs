//! Ports of Go's standard library and of the small Go libraries that both
//! the template functions and Helm's own code call: one implementation of
//! each, used by every caller in the workspace.
//!
//! - [`quote`]: `strconv.Quote` (Go's escapes and `IsPrint`);
//! - [`glob`]: Argo CD's `util/glob` (gobwas/glob), and in [`glob::go`]
//!   `path.Match`, git pathspecs and doublestar;
//! - [`semver`]: Masterminds/semver v3 versions and constraints;
//! - [`time`]: Go's `time` layouts, parsing and durations.

pub mod glob;
pub mod quote;
pub mod semver;
pub mod time;
