//! Engine tests against documented Argo CD template examples.
