//! What is kept between runs.

mod store;

pub(crate) use store::*;
