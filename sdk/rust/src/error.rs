//! Errors a plugin reports on purpose.

use std::fmt;

/// How the host should treat a record error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// This record cannot be processed; the connector's error policy applies to it alone.
    InvalidRecord,
    /// Transient; the host may retry.
    Retriable,
    /// The plugin cannot go on; the host fails the connector.
    Fatal,
}

/// A record the plugin could not process, with a message for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// How the host should treat it.
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
}

impl RecordError {
    /// The record is bad (the usual case).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::InvalidRecord, message: message.into() }
    }

    /// A transient failure worth retrying.
    pub fn retriable(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Retriable, message: message.into() }
    }

    /// The plugin cannot continue.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Fatal, message: message.into() }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RecordError {}

/// A configuration the plugin refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The offending key (dotted path), if one.
    pub key: Option<String>,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl ConfigError {
    /// An error about one key.
    pub fn at(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: Some(key.into()), message: message.into() }
    }

    /// An error about the configuration as a whole.
    pub fn new(message: impl Into<String>) -> Self {
        Self { key: None, message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{k}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

use crate::bindings::turnpike::plugin::types as wit;

impl RecordError {
    /// The error as the contract carries it.
    pub(crate) fn into_wit(self) -> wit::PluginError {
        let kind = match self.kind {
            ErrorKind::InvalidRecord => wit::ErrorKind::InvalidRecord,
            ErrorKind::Retriable => wit::ErrorKind::Retriable,
            ErrorKind::Fatal => wit::ErrorKind::Fatal,
        };
        wit::PluginError { kind, message: self.message }
    }

    /// The error from the contract's form.
    pub(crate) fn from_wit(e: wit::PluginError) -> Self {
        let kind = match e.kind {
            wit::ErrorKind::InvalidRecord => ErrorKind::InvalidRecord,
            wit::ErrorKind::Retriable => ErrorKind::Retriable,
            wit::ErrorKind::Fatal => ErrorKind::Fatal,
        };
        Self { kind, message: e.message }
    }
}

impl ConfigError {
    /// The error as the contract carries it.
    pub(crate) fn into_wit(self) -> wit::ConfigError {
        wit::ConfigError { key: self.key, message: self.message }
    }
}
