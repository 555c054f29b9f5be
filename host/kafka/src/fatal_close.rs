//! Closing a client after a fatal error. librdkafka (2.12) never finishes destroying a
//! consumer in that state: its main thread waits for a group handler that does not end. The
//! close runs on a thread of its own, which is left behind, so whoever drops the client
//! goes on (a task ends and reports the error; a reader thread can still be joined).

/// Drops `client` on a new thread, left behind. If no thread can start, the client is
/// dropped here, with the refused closure.
pub(crate) fn close_left_behind<T: Send + 'static>(client: T, what: &'static str) {
    if let Err(e) = std::thread::Builder::new().name("turnpike-fatal-close".into()).spawn(move || drop(client)) {
        tracing::error!(error = %e, "could not start a thread to close the {what} after its fatal error; closed here");
    }
}
