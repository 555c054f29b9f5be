//! What can go wrong while creating or building a plugin.

use std::path::PathBuf;

/// A plugin could not be created or built.
#[derive(Debug, thiserror::Error)]
pub enum AuthoringError {
    /// The plugin name breaks the naming rules.
    #[error("{0:?} is not a plugin name: use 1-64 of a-z, 0-9 and '-', starting with a letter")]
    BadName(String),
    /// The language is not one of those supported.
    #[error("unknown language {0:?}: use rust, python or js")]
    UnknownLang(String),
    /// The plugin kind is not one of the three.
    #[error("unknown plugin kind {0:?}: use transform, source or sink")]
    UnknownKind(String),
    /// The project does not say which plugin it exports, or says it twice.
    #[error("{0}")]
    NoExport(String),
    /// The target folder already exists.
    #[error("{0} already exists; choose another name or folder")]
    Exists(PathBuf),
    /// No plugin project was recognised in the folder.
    #[error("{0} holds no plugin: expected Cargo.toml (Rust), plugin.py (Python) or plugin.js (JavaScript)")]
    NotAPlugin(PathBuf),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A tool failed or could not be run.
    #[error(transparent)]
    Tool(#[from] turnpike_wasm_build::BuildError),
    /// `cargo metadata` said something unexpected.
    #[error("could not read the Rust project's metadata: {0}")]
    Metadata(String),
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> AuthoringError {
    let path = path.into();
    move |source| AuthoringError::Io { path, source }
}
