//! A standalone workspace: its files, and writing them to disk formatted.

mod cli_crate;
pub(crate) mod files;
pub(crate) mod rustfmt;
pub(crate) mod standalone;
pub(crate) mod xtask;
