//! A standalone workspace: its files, and writing them to disk formatted.

pub mod files;
pub mod standalone;
