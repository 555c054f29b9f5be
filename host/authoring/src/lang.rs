//! The languages a plugin can be written in, and the kinds of plugin.

use std::path::Path;

use crate::AuthoringError;

/// A plugin's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Rust, with the `turnpike-sdk` crate; built by cargo for `wasm32-wasip2`.
    Rust,
    /// Python, with the `turnpike` package; built by componentize-py.
    Python,
    /// JavaScript, with the `turnpike-sdk` package; bundled by esbuild, built by componentize-js.
    Js,
}

impl Lang {
    /// Parses `rust`, `python` (`py`) or `js` (`javascript`).
    pub fn parse(s: &str) -> Result<Self, AuthoringError> {
        match s.to_ascii_lowercase().as_str() {
            "rust" | "rs" => Ok(Lang::Rust),
            "python" | "py" => Ok(Lang::Python),
            "js" | "javascript" => Ok(Lang::Js),
            _ => Err(AuthoringError::UnknownLang(s.to_owned())),
        }
    }

    /// The language of the plugin project in `dir`, from the file that defines it.
    pub fn detect(dir: &Path) -> Result<Self, AuthoringError> {
        if dir.join("Cargo.toml").is_file() {
            Ok(Lang::Rust)
        } else if dir.join("plugin.py").is_file() {
            Ok(Lang::Python)
        } else if dir.join("plugin.js").is_file() {
            Ok(Lang::Js)
        } else {
            Err(AuthoringError::NotAPlugin(dir.to_owned()))
        }
    }

    /// The name users write.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
        }
    }

    /// How a generated project runs its own tests, natively.
    pub fn native_test_command(self) -> &'static str {
        match self {
            Lang::Rust => "cargo test",
            Lang::Python => "python3 -m unittest",
            Lang::Js => "npm install && npm test",
        }
    }
}

/// What a plugin does: the world it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A single-message transform (`transform-plugin`).
    Transform,
    /// A source (`source-plugin`).
    Source,
    /// A sink (`sink-plugin`).
    Sink,
}

impl Kind {
    /// Parses `transform`, `source` or `sink`.
    pub fn parse(s: &str) -> Result<Self, AuthoringError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "transform" => Ok(Kind::Transform),
            "source" => Ok(Kind::Source),
            "sink" => Ok(Kind::Sink),
            _ => Err(AuthoringError::UnknownKind(s.trim().to_owned())),
        }
    }

    /// The name users write, and the first word of the world's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Transform => "transform",
            Kind::Source => "source",
            Kind::Sink => "sink",
        }
    }
}
