//! `sql-source`: streams database tables, or one custom query, into Kafka — Kafka Connect's
//! JDBC source connector rebuilt as a component, over the host's read-only `sql` capability.
//!
//! Modes (`mode`): `bulk` reads everything every cycle, in pages; `incrementing` reads rows
//! above the last value of a strictly increasing column; `timestamp` rows after the last
//! timestamp, never ending a batch inside one timestamp's rows; `timestamp+incrementing` rows
//! after the last (timestamp, incrementing) pair. Each record's position holds every table's
//! cursor, so a restart continues exactly after the last record Kafka acknowledged.
//!
//! Nothing touches the database before the first poll: `create` only checks the configuration
//! (the host may call it to validate). The first poll asks for the dialect and the granted
//! tables (or the columns of the query), then each poll reads the next table that is due, one
//! table per poll, round robin.

mod config;
mod position;
mod query;
mod read;
mod tables;
#[cfg(test)]
mod tests;
mod time;
mod value;

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use turnpike_sdk::prelude::*;
use turnpike_sdk::sql::{self, Dialect, SqlError};

pub use config::Config;
use config::{Initial, Settings};
use position::Positions;
use read::{failed, Limits, Outcome, Reader};
use tables::Plan;
use value::Mapping;

/// The header naming where a record came from: the table as the grant spells it, or `query`.
pub const TABLE_HEADER: &str = "turnpike.table";

/// The sql-source.
pub struct SqlSource {
    settings: Settings,
    positions: Positions,
    /// Known after the first poll.
    db: Option<Database>,
    /// Records read but not yet handed to the host (one timestamp's rows may be more than one
    /// poll may return), each with its position if it moves it.
    pending: VecDeque<(NewRecord, Option<Vec<u8>>)>,
    limits: Limits,
    /// Round robin: the plan tried first at the next read.
    next: usize,
    /// Monotonic milliseconds; a test sets another clock.
    clock: Box<dyn Fn() -> u64>,
}

/// The granted database as last listed.
struct Database {
    dialect: Dialect,
    plans: Vec<Scheduled>,
    listed_at: u64,
}

/// A plan and when it is read next.
struct Scheduled {
    plan: Plan,
    /// Not read before this time on the clock.
    due: u64,
    /// `timestamp.initial` as a timestamp text, once known (kept until a record carries it).
    initial: Option<String>,
}

impl Source for SqlSource {
    type Config = Config;

    fn create(config: Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        let settings = config.validate()?;
        let query = settings.query.is_some();
        let positions = match position.filter(|p| !p.is_empty()) {
            Some(bytes) => Positions::load(&bytes, settings.mode, query)?,
            None => Positions::new(settings.mode, query),
        };
        let start = Instant::now();
        let clock = Box::new(move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX));
        Ok(SqlSource { settings, positions, db: None, pending: VecDeque::new(), limits: Limits::default(), next: 0, clock })
    }

    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError> {
        if max == 0 {
            return Ok(());
        }
        if self.pending.is_empty() {
            self.read_next(u32::try_from(max).unwrap_or(u32::MAX))?;
        }
        let take = max.min(self.pending.len());
        for (record, position) in self.pending.drain(..take) {
            match position {
                Some(p) => out.emit(record, p),
                None => out.emit_unpositioned(record),
            }
        }
        Ok(())
    }
}

impl SqlSource {
    /// Replaces the clock (tests).
    #[cfg(test)]
    pub(crate) fn set_clock(&mut self, clock: impl Fn() -> u64 + 'static) {
        self.clock = Box::new(clock);
    }

    /// Reads due tables, in turn, until one gives rows; those go to `pending`. A table whose
    /// read came back short waits `poll.interval.ms`. State changes only after a read
    /// succeeds, so a failed poll (retried by the host) reads the same again.
    fn read_next(&mut self, max: u32) -> Result<(), RecordError> {
        let now = (self.clock)();
        self.discover(now)?;
        let n = self.settings.batch_max_rows.min(max);
        let mapping = Mapping { numeric: self.settings.numeric, timestamps: self.settings.timestamps };
        let Some(db) = self.db.as_mut() else { return Ok(()) };
        let count = db.plans.len();
        for step in 0..count {
            let i = (self.next + step) % count;
            let scheduled = &mut db.plans[i];
            if scheduled.due > now {
                continue;
            }
            let cursor = self.positions.get(&scheduled.plan.name);
            if self.settings.mode.uses_timestamp() && cursor.is_none() && scheduled.initial.is_none() {
                scheduled.initial = initial_text(&self.settings, db.dialect, &scheduled.plan)?;
            }
            let mut reader = Reader { mode: self.settings.mode, plan: &scheduled.plan, cursor, initial: scheduled.initial.as_deref(), limits: &mut self.limits };
            let outcome = reader.read(n)?;
            scheduled.due = if outcome.done { now.saturating_add(self.settings.poll_interval_ms) } else { now };
            let emitted = !outcome.cursors.is_empty();
            queue(&mut self.positions, &mut self.pending, mapping, &scheduled.plan, outcome);
            if emitted {
                self.next = i + 1;
                return Ok(());
            }
        }
        Ok(())
    }

    /// Lists the granted tables (or the query's columns) at the first poll, and the tables
    /// again every `table.poll.interval.ms`, keeping the schedule of tables already known.
    fn discover(&mut self, now: u64) -> Result<(), RecordError> {
        let refresh = self.settings.table_poll_interval_ms;
        let stale = match &self.db {
            None => true,
            Some(db) => self.settings.query.is_none() && refresh > 0 && now.saturating_sub(db.listed_at) >= refresh,
        };
        if !stale {
            return Ok(());
        }
        let first = self.db.is_none();
        let dialect = match &self.db {
            Some(db) => db.dialect,
            None => sql::dialect().map_err(|e| call_failed("asking the database's dialect", e))?,
        };
        let plans = match &self.settings.query {
            Some(q) => {
                let probe = query::columns_of(&query::from_query(q));
                let set = sql::query(&probe.text, &probe.params, 1).map_err(|e| failed("the query", &probe.text, e))?;
                vec![tables::query_plan(&self.settings, dialect, q, set.columns()).map_err(RecordError::fatal)?]
            }
            None => {
                let granted = sql::tables().map_err(|e| call_failed("listing the granted tables", e))?;
                tables::table_plans(&self.settings, dialect, &granted, first).map_err(RecordError::fatal)?
            }
        };
        let mut known: BTreeMap<String, Scheduled> = self.db.take().map(|db| db.plans).unwrap_or_default().into_iter().map(|s| (s.plan.name.clone(), s)).collect();
        let plans = plans
            .into_iter()
            .map(|plan| match known.remove(&plan.name) {
                Some(old) => Scheduled { plan, due: old.due, initial: old.initial },
                None => Scheduled { plan, due: now, initial: None },
            })
            .collect();
        self.db = Some(Database { dialect, plans, listed_at: now });
        Ok(())
    }
}

/// A failed call other than a query, with what it was for.
fn call_failed(what: &str, e: SqlError) -> RecordError {
    let mut error = RecordError::from(e);
    error.message = format!("{what}: {}", error.message);
    error
}

/// Where a timestamp mode starts without a stored position: `timestamp.initial` as a
/// timestamp text of the column's kind (the database's clock for `-1`), or from the first row.
fn initial_text(settings: &Settings, dialect: Dialect, plan: &Plan) -> Result<Option<String>, RecordError> {
    Ok(match settings.initial {
        None => None,
        Some(Initial::At(ms)) => Some(time::format_ms(ms, plan.ts_kind)),
        Some(Initial::Now) => {
            let now = query::now(dialect);
            let set = sql::query(&now.text, &now.params, 1).map_err(|e| failed(&plan.label, &now.text, e))?;
            let text = set.row(0).and_then(|r| r.text(0)).ok_or_else(|| RecordError::fatal(format!("{}: `{}` returned no time", plan.label, now.text)))?;
            Some(time::fit(text, plan.ts_kind))
        }
    })
}

/// Turns a read's rows into records, each positioned at every table's cursor after it.
fn queue(positions: &mut Positions, pending: &mut VecDeque<(NewRecord, Option<Vec<u8>>)>, mapping: Mapping, plan: &Plan, outcome: Outcome) {
    let set = &outcome.set;
    let columns = set.columns();
    // From this result's own columns: a column added to the table shows in the next records.
    let keys = value::keys(columns);
    let key_columns: Option<Vec<usize>> = if plan.key.is_empty() { None } else { plan.key.iter().map(|k| set.column_index(k)).collect() };
    for (row, cursor) in set.rows().zip(outcome.cursors) {
        let mut record = NewRecord::new().value(value::object(&row, columns, &keys, 0..columns.len(), mapping)).header(TABLE_HEADER, plan.name.as_str());
        if let Some(indices) = &key_columns {
            record = record.key(value::object(&row, columns, &keys, indices.iter().copied(), mapping));
        }
        if let Some(topic) = &plan.topic {
            record = record.topic(topic.as_str());
        }
        let position = cursor.map(|c| {
            positions.set(&plan.name, c);
            positions.encode()
        });
        pending.push_back((record, position));
    }
    if let Some(end) = outcome.end {
        positions.set(&plan.name, end);
    }
}

export_source!(SqlSource);
