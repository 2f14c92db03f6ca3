//! `ApplicationSet` expansion: generators and templates evaluated offline.
