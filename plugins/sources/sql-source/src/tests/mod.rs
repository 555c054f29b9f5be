//! The source against a small in-memory database (`engine`) behind the SDK's fake: each mode
//! end to end, positions and restarts, records, errors. The SQL text of each mode per dialect
//! is tested in `query.rs`, the position format in `position.rs`, the type mapping in
//! `value.rs`.

mod config;
mod engine;
mod incremental;
mod records;
mod timestamp;

use std::cell::Cell;
use std::rc::Rc;

use serde_json::Value;
use turnpike_sdk::sql::{Dialect, ValueKind};
use turnpike_sdk::testing::{self, Sourced};
use turnpike_sdk::{ConfigError, RecordError};

use crate::SqlSource;
use engine::{col, Engine};

/// A clock the test moves (milliseconds).
pub(crate) fn clock() -> Rc<Cell<u64>> {
    Rc::new(Cell::new(0))
}

/// A source from `config` and a stored `position`, on `clock`.
pub(crate) fn source(config: &str, position: Option<&[u8]>, clock: &Rc<Cell<u64>>) -> SqlSource {
    let mut s: SqlSource = match testing::create_source(config, position) {
        Ok(s) => s,
        Err(e) => panic!("config {config}: {e}"),
    };
    let c = clock.clone();
    s.set_clock(move || c.get());
    s
}

/// Why `config` is refused.
pub(crate) fn refused(config: &str) -> ConfigError {
    match testing::create_source::<SqlSource>(config, None) {
        Ok(_) => panic!("config {config} was accepted"),
        Err(e) => e,
    }
}

/// One poll, as the host makes it, that must succeed.
pub(crate) fn poll(s: &mut SqlSource, max: u32) -> Vec<Sourced> {
    testing::poll(s, max).unwrap_or_else(|e| panic!("poll failed: {e}"))
}

/// One poll that must fail.
pub(crate) fn poll_error(s: &mut SqlSource) -> RecordError {
    match testing::poll(s, 100) {
        Ok(polled) => panic!("the poll succeeded with {} records", polled.len()),
        Err(e) => e,
    }
}

/// A record's value as JSON.
pub(crate) fn json(p: &Sourced) -> Value {
    serde_json::from_slice(p.record.value.as_deref().unwrap_or_default()).unwrap_or_else(|e| panic!("not JSON: {e}"))
}

/// `name` of each record's value, as text.
pub(crate) fn field(polled: &[Sourced], name: &str) -> Vec<String> {
    polled
        .iter()
        .map(|p| match &json(p)[name] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The position the host stores after `polled`: that of its last record carrying one.
pub(crate) fn stored(polled: &[Sourced]) -> Option<Vec<u8>> {
    polled.iter().rev().find_map(|p| p.position.clone())
}

/// Bytes as text, for comparing positions.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `public.events (id int8 primary key, ts timestamp not null, v text)`, row `i` with id
/// `i + 1` at `ts[i]`.
pub(crate) fn events(dialect: Dialect, ts: &[&str]) -> Engine {
    let columns = vec![col("id", ValueKind::Integer, "int8", false), col("ts", ValueKind::Timestamp, "timestamp", false), col("v", ValueKind::Text, "text", true)];
    let mut e = Engine::new(dialect).table("public.events", columns, &["id"]);
    for (i, t) in ts.iter().enumerate() {
        let id = (i + 1).to_string();
        e.insert("public.events", &[Some(&id), Some(t), Some("x")]);
    }
    e
}
