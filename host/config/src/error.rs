//! Configuration errors, written for the person who wrote the file or the request.

use std::fmt;

/// One problem with a configuration, tied to the key it concerns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// Dotted path of the offending key, e.g. `connectors[0].output_topic`.
    pub key: String,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl Problem {
    /// A problem with `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not valid YAML, or a key or value does not fit the schema. The message
    /// carries the key path and the line and column.
    #[error("{origin}: {message}")]
    Syntax {
        /// Where the text came from (a file path, or "request body").
        origin: String,
        /// The parser's message, naming the key and the position.
        message: String,
    },
    /// The configuration parses but breaks one or more rules; every problem is listed.
    #[error("{origin}: {}", list(.problems))]
    Invalid {
        /// Where the text came from.
        origin: String,
        /// Every problem found, each naming its key.
        problems: Vec<Problem>,
    },
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(Problem::to_string).collect::<Vec<_>>().join("; ")
}
