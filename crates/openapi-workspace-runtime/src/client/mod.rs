//! The client's half: what the hooks of the clients progenitor writes call, for what progenitor
//! does not do itself. The generated client re-exports each module it uses under its own name
//! (`events`, `items`, `multipart`, `styles`; `form` by its path); every client sends through [`retry`].

pub mod errors;
pub mod events;
pub mod form;
pub mod items;
pub mod multipart;
pub mod options;
pub mod pages;
pub mod retry;
pub mod retry_budget;
pub mod styles;
pub mod tokens;
