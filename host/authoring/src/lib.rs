//! Plugin authoring: `turnpike plugin new` (a template that builds as generated) and
//! `turnpike plugin build` (the right toolchain for the language), for Rust, Python and
//! JavaScript.
//!
//! The WIT contract, the three SDKs and the example plugins (which are the templates) are
//! compiled into this crate (`build.rs`), so the `turnpike` binary can set up and build a
//! plugin anywhere: a new project gets its SDK copied in, and each Python or JavaScript build
//! writes the contract and the SDK into the project's `.turnpike/` folder (generated, not for
//! editing), so a plugin always builds against the contract of the host that built it. Toolchains for Python
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
pub use lang::{Kind, Lang};
pub use templates::new_plugin;
