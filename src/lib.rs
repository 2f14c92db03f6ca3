//! gitops-lint: what will this change to an Argo CD repository delete, and
//! what will it wedge?
//!
//! ```text
//! revision ──► source ──► render ──► inventory ──► plan ──► rules ──► report
//!  (git)      (a tree)   (manifests) (apps →      (what a   (findings) (human, json,
//!                                     resources)   sync      sarif, github,
//!                                                  deletes)  markdown)
//! ```
//!
//! Data flows one way; each stage is one module and nothing reaches back up.

pub mod acknowledge;
pub mod argocd;
pub mod cli;
pub mod config;
pub mod demo;
pub mod finding;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod lint;
pub mod manifest;
pub mod plan;
pub mod render;
pub mod report;
pub mod rules;
pub mod source;
pub mod yaml;
pub mod yaml_emit;
