//! The source's position: every table's cursor in one JSON document, because the host keeps
//! only the position of the last record it stored, and that one record must say where every
//! table stands.
//!
//! ```json
//! {"v":1,"mode":"timestamp+incrementing","tables":{"public.orders":{"ts":"2026-12-01T13:45:00.123456","inc":"42"}}}
//! {"v":1,"mode":"bulk","tables":{"public.items":{"after":"1000"},"public.logs":{"offset":2000}}}
//! {"v":1,"mode":"timestamp","query":{"ts":"2026-12-01T13:45:00Z"}}
//! ```
//! Cursor texts are the values exactly as the database gave them, so they go back into the
//! next query unchanged. A table without an entry starts from its beginning.

use std::collections::BTreeMap;

use serde::Deserialize;
use turnpike_sdk::ConfigError;

use crate::config::Mode;
use crate::value::push_string;

/// The format this version writes and reads.
const VERSION: u64 = 1;

/// Where one table (or the query) stands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Cursor {
    /// Timestamp modes: the timestamp of the last row read.
    #[serde(default)]
    pub ts: Option<String>,
    /// Incrementing modes: the incrementing value of the last row read.
    #[serde(default)]
    pub inc: Option<String>,
    /// Bulk with a one-column key: the key of the last row read in this pass.
    #[serde(default)]
    pub after: Option<String>,
    /// Bulk without one: the rows of this pass already read.
    #[serde(default)]
    pub offset: Option<u64>,
}

impl Cursor {
    fn is_empty(&self) -> bool {
        *self == Cursor::default()
    }

    /// Whether the cursor is one `mode` writes.
    fn fits(&self, mode: Mode) -> bool {
        let bulk = self.after.is_some() || self.offset.is_some();
        match mode {
            Mode::Bulk => self.ts.is_none() && self.inc.is_none() && !(self.after.is_some() && self.offset.is_some()),
            Mode::Incrementing => self.inc.is_some() && self.ts.is_none() && !bulk,
            Mode::Timestamp => self.ts.is_some() && self.inc.is_none() && !bulk,
            Mode::TimestampIncrementing => self.ts.is_some() && self.inc.is_some() && !bulk,
        }
    }

    fn push_json(&self, out: &mut String) {
        out.push('{');
        let field = |out: &mut String, name: &str, value: &str, quoted: bool| {
            if !out.ends_with('{') {
                out.push(',');
            }
            push_string(out, name);
            out.push(':');
            if quoted {
                push_string(out, value);
            } else {
                out.push_str(value);
            }
        };
        for (name, value) in [("ts", &self.ts), ("inc", &self.inc), ("after", &self.after)] {
            if let Some(v) = value {
                field(out, name, v.as_str(), true);
            }
        }
        if let Some(n) = self.offset {
            field(out, "offset", n.to_string().as_str(), false);
        }
        out.push('}');
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    v: u64,
    mode: String,
    #[serde(default)]
    tables: Option<BTreeMap<String, Cursor>>,
    #[serde(default)]
    query: Option<Cursor>,
}

/// Every cursor, and how to write them.
#[derive(Debug, Clone)]
pub(crate) struct Positions {
    mode: Mode,
    /// Reading a query (one cursor, under [`QUERY`]) rather than tables.
    query: bool,
    cursors: BTreeMap<String, Cursor>,
}

/// The name the query's cursor and records go by.
pub(crate) const QUERY: &str = "query";

impl Positions {
    pub(crate) fn new(mode: Mode, query: bool) -> Self {
        Self { mode, query, cursors: BTreeMap::new() }
    }

    /// Reads a stored position; one this configuration cannot continue from is a config error
    /// saying how to start over, never a silent restart from the beginning.
    pub(crate) fn load(bytes: &[u8], mode: Mode, query: bool) -> Result<Self, ConfigError> {
        let shown = String::from_utf8_lossy(bytes);
        let reset = "reset the connector's stored source position to start over (or run it under a new connector name)";
        let stored: Stored = serde_json::from_slice(bytes).map_err(|e| ConfigError::new(format!("the stored position {shown:?} is not one sql-source writes ({e}): {reset}")))?;
        if stored.v != VERSION {
            return Err(ConfigError::new(format!("the stored position has format version {}; this sql-source reads version {VERSION}: {reset}", stored.v)));
        }
        if !stored.mode.eq_ignore_ascii_case(mode.name()) {
            let message = format!("the stored position was written in mode {}, which this configuration's mode {} cannot continue from: {reset}, or set mode back to {}", stored.mode, mode.name(), stored.mode);
            return Err(ConfigError::at("mode", message));
        }
        let cursors = match (stored.tables, stored.query, query) {
            (tables, None, false) => tables.unwrap_or_default(),
            (None, query_cursor, true) => query_cursor.into_iter().map(|c| (QUERY.to_owned(), c)).collect(),
            (_, _, true) => return Err(ConfigError::at("query", format!("the stored position is for tables, and this configuration reads a query: {reset}"))),
            (_, _, false) => return Err(ConfigError::at("query", format!("the stored position is for a query, and this configuration reads tables: {reset}"))),
        };
        if let Some((name, _)) = cursors.iter().find(|(_, c)| !c.fits(mode)) {
            return Err(ConfigError::at("mode", format!("the stored cursor of {name} does not fit mode {}: {reset}", mode.name())));
        }
        Ok(Self { mode, query, cursors })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Cursor> {
        self.cursors.get(name)
    }

    /// Sets a table's cursor; an empty one (a finished bulk pass) removes it.
    pub(crate) fn set(&mut self, name: &str, cursor: Cursor) {
        if cursor.is_empty() {
            self.cursors.remove(name);
        } else {
            self.cursors.insert(name.to_owned(), cursor);
        }
    }

    /// The position as stored: deterministic (tables in name order), written by hand so it
    /// cannot fail.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = format!("{{\"v\":{VERSION},\"mode\":");
        push_string(&mut out, self.mode.name());
        if self.query {
            out.push_str(",\"query\":");
            self.cursors.get(QUERY).cloned().unwrap_or_default().push_json(&mut out);
        } else {
            out.push_str(",\"tables\":{");
            for (i, (name, cursor)) in self.cursors.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(&mut out, name);
                out.push(':');
                cursor.push_json(&mut out);
            }
            out.push('}');
        }
        out.push('}');
        out.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(ts: Option<&str>, inc: Option<&str>) -> Cursor {
        Cursor { ts: ts.map(str::to_owned), inc: inc.map(str::to_owned), ..Cursor::default() }
    }

    #[test]
    fn positions_round_trip_every_table() {
        let mut p = Positions::new(Mode::TimestampIncrementing, false);
        p.set("public.orders", cursor(Some("2026-12-01T13:45:00.123456"), Some("42")));
        p.set("public.a\"b", cursor(Some("2026-01-01T00:00:00"), Some("1")));
        let bytes = p.encode();
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            r#"{"v":1,"mode":"timestamp+incrementing","tables":{"public.a\"b":{"ts":"2026-01-01T00:00:00","inc":"1"},"public.orders":{"ts":"2026-12-01T13:45:00.123456","inc":"42"}}}"#
        );
        let back = Positions::load(&bytes, Mode::TimestampIncrementing, false).expect("loads");
        assert_eq!(back.get("public.orders"), p.get("public.orders"));
        assert_eq!(back.encode(), bytes);
    }

    #[test]
    fn bulk_and_query_positions_have_their_own_shape() {
        let mut p = Positions::new(Mode::Bulk, false);
        p.set("items", Cursor { after: Some("1000".into()), ..Cursor::default() });
        p.set("logs", Cursor { offset: Some(2000), ..Cursor::default() });
        assert_eq!(String::from_utf8_lossy(&p.encode()), r#"{"v":1,"mode":"bulk","tables":{"items":{"after":"1000"},"logs":{"offset":2000}}}"#);
        p.set("logs", Cursor::default());
        assert!(p.get("logs").is_none(), "a finished pass forgets its cursor");
        let mut q = Positions::new(Mode::Timestamp, true);
        q.set(QUERY, cursor(Some("2026-12-01T13:45:00Z"), None));
        let bytes = q.encode();
        assert_eq!(String::from_utf8_lossy(&bytes), r#"{"v":1,"mode":"timestamp","query":{"ts":"2026-12-01T13:45:00Z"}}"#);
        assert!(Positions::load(&bytes, Mode::Timestamp, true).is_ok());
        assert_eq!(Positions::load(&bytes, Mode::Timestamp, false).err().and_then(|e| e.key).as_deref(), Some("query"));
    }

    #[test]
    fn a_position_of_another_mode_asks_for_a_reset() {
        let stored = br#"{"v":1,"mode":"timestamp","tables":{"t":{"ts":"2026-01-01T00:00:00"}}}"#;
        let e = Positions::load(stored, Mode::Incrementing, false).err().expect("refused");
        assert_eq!(e.key.as_deref(), Some("mode"));
        assert!(e.message.contains("written in mode timestamp") && e.message.contains("reset the connector's stored source position"), "{}", e.message);
        let mislabeled = br#"{"v":1,"mode":"incrementing","tables":{"t":{"ts":"2026-01-01T00:00:00"}}}"#;
        assert!(Positions::load(mislabeled, Mode::Incrementing, false).is_err(), "a cursor without inc does not fit");
        assert!(Positions::load(br#"{"v":2,"mode":"bulk","tables":{}}"#, Mode::Bulk, false).err().expect("refused").message.contains("version 2"));
        assert!(Positions::load(b"1234", Mode::Bulk, false).is_err(), "another plugin's position");
    }
}
