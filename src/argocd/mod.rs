//! Building the inventory at one revision: find `Application`s, follow
//! app-of-apps, expand `ApplicationSet` generators, decide which apps render
//! from this repository, and render them.
//!
//! Knows nothing of diffing two revisions.

pub mod appset;
