//! Why a call failed, as the plugin and the operator see it ([`SqlError`]), and how the
//! backends tell the retry loop what to do with a failure ([`Fault`]).

/// Why a call failed. Messages say what to fix where that is known and never contain the
/// password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    /// Refused by the host before reaching the database (not one query, a table outside the
    /// grant, a parameter that does not fit), or a config that cannot work.
    #[error("{0}")]
    Refused(String),
    /// The database rejected the statement: SQLSTATE (PostgreSQL) or error number (MySQL).
    #[error("the database refused the statement ({code}): {message}")]
    QueryFailed { code: String, message: String },
    /// Could not reach / sign in / lost the connection, after the retries. The message never
    /// contains the password.
    #[error("{0}")]
    Unavailable(String),
}

/// How one attempt on a session failed.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Retrying cannot help, and the session is still good for the next call.
    Final(SqlError),
    /// Retrying cannot help, and the session must be dropped (signing in failed, the driver
    /// closed the connection, rows were left unread).
    Fatal(SqlError),
    /// The connection failed or never came up: drop it, wait, reconnect and try again until
    /// the retry budget is spent. The text says what happened, for the final message.
    Connection(String),
}

/// An error and its sources, `outer: inner: innermost`, skipping a source whose text the
/// outer message already repeats (drivers often print their cause inside their own text).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let piece = inner.to_string();
        if !piece.is_empty() && !text.contains(&piece) {
            text.push_str(": ");
            text.push_str(&piece);
        }
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer failed")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("wrapper: {0}")]
    struct Repeating(#[source] std::io::Error);

    #[test]
    fn chain_names_every_cause_once() {
        let refused = || std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        assert_eq!(chain(&Outer(refused())), "outer failed: connection refused");
        assert_eq!(chain(&Repeating(refused())), "wrapper: connection refused");
        let failure = SqlError::QueryFailed { code: "42P01".into(), message: "relation \"x\" does not exist".into() };
        assert_eq!(failure.to_string(), "the database refused the statement (42P01): relation \"x\" does not exist");
    }
}
