//! Expansion tests over real git repositories.
