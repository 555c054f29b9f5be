//! Plugin authoring: `turnpike plugin new` (a template that builds as generated) and
//! `turnpike plugin build` (the right toolchain for the language), for Rust, Python and
//! JavaScript.
//!
//! The WIT contract and the Python and JavaScript SDKs are compiled into this crate, so the
//! `turnpike` binary can set up and build a plugin anywhere; each build writes them into the
//! project's `.turnpike/` folder (generated, not for editing). Toolchains for Python
//! (componentize-py) and JavaScript (componentize-js) are installed on first use, pinned, into
//! a cache shared by every project (see [`toolchain`]).

mod build;
mod embedded;
mod error;
mod lang;
mod templates;
pub mod toolchain;

pub use build::{build, Built};
pub use error::AuthoringError;
pub use lang::Lang;
pub use templates::new_plugin;
