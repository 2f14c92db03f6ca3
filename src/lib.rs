//! gitops-lint: what will this change to an Argo CD repository delete, and
//! what will it wedge?
//!
//! ```text
//! revision ──► source ──► render ──► inventory ──► plan ──► rules ──► report
//!  (git)      (a tree)   (manifests) (apps →      (what a   (findings) (human, json,
//!                                     resources)   sync      sarif, github,
//!                                                  deletes)  markdown, diff)
//!                                                    └──► rendered diff ──┘
//! ```
//!
//! Data flows one way; each stage is one module and nothing reaches back up
//! (`tests/it/architecture.rs` checks it). Below the stages are the Go ports,
//! crates of this workspace that know nothing of Argo CD (the compiler
//! keeps them from reaching back): `goyaml` (go-yaml's loader and emitter,
//! JSON pointers and Go's JSON encoding) and `gotemplate` (Go
//! `text/template`, Sprig and Helm's functions, and in `gotemplate::go` the
//! Go helpers Helm's code shares with them: `strconv.Quote`, Argo CD's and
//! Go's glob dialects, Masterminds semver, Go time). The application's own
//! libraries: `cache` (what is kept between runs, keyed by content),
//! `limits`, `local_files`.

// Libraries of the application: they know nothing of Argo CD's pipeline.
pub(crate) mod cache;
pub mod limits;
pub mod local_files;
pub(crate) mod suggest;

// The pipeline, in the order data flows.

// Stage 1: revisions as trees.
pub mod source;

// Resource identity and sync options, shared by every stage below.
pub mod manifest;

// Findings and rule facts, shared by every stage below.
pub mod finding;

// `.gitops-lint.yaml`.
pub mod config;

// Stage 2: manifests.
pub mod render;

// Stage 3: the inventory.
pub mod argocd;

// Stage 4: what a sync deletes.
pub mod plan;

// After the plan, beside the rules: what the change does to each app's
// rendered manifests (the rules do not read it; the reports show it).
pub(crate) mod rendered_diff;

// Stage 5: findings.
pub mod rules;

// Findings set aside after the rules: acknowledgements, ignores, paths.
pub mod suppress;

// Stage 6: reports.
pub mod report;

// The driver, and the command line above it.
pub mod lint;

pub mod cli;

pub mod demo;

// Entry points of the fuzz targets (`fuzz/`), and their saved crashes
// replayed by `cargo test`.
#[cfg(any(test, feature = "fuzz"))]
#[doc(hidden)]
pub mod fuzz_entry;
