//! Structured logging into the host's log. The host adds the connector and plugin names, and
//! rate-limits each instance. Off WebAssembly (in tests) lines go to stderr.

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Very detailed.
    Trace,
    /// For debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

/// Logs `message` with `fields` (key/value pairs).
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::turnpike::plugin::log as host;
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        let fields: Vec<(String, String)> = fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        host::log(level, message, &fields);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message} {fields:?}");
}

/// Logs at info level.
pub fn info(message: &str) {
    log(Level::Info, message, &[]);
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message, &[]);
}

/// Logs at error level.
pub fn error(message: &str) {
    log(Level::Error, message, &[]);
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(Level::Debug, message, &[]);
}
