//! One read of one table: the query its mode sends from its cursor, how many of the rows to
//! emit, the cursor after each, and whether the table is caught up.
//!
//! The grant's `max_rows` may return fewer rows than asked without saying so, and "fewer than
//! asked" is how a read knows it is caught up. So a short result is trusted only once a full
//! result of that size has been seen; before that, one `SELECT 1 … LIMIT 1` asks whether rows
//! lie beyond it. Without that check a cap below `batch.max.rows` would silently end every
//! bulk pass early and, in timestamp mode, cut a timestamp's rows in two.

use turnpike_sdk::sql::{self, Row, RowSet, SqlError};
use turnpike_sdk::{log, RecordError};

use crate::config::Mode;
use crate::position::Cursor;
use crate::query::{Lower, Statement};
use crate::tables::Plan;

/// Rows one timestamp may have in timestamp mode. They are read by one query, so the grant's
/// `max_rows` (and the plugin's memory) bound this in practice.
pub(crate) const TIE_LIMIT: u32 = 1_000_000;

/// What one read gave.
pub(crate) struct Outcome {
    pub set: RowSet,
    /// The cursor after each row to emit (rows from the first); `None`: a row inside one
    /// timestamp's rows, which does not move the position.
    pub cursors: Vec<Option<Cursor>>,
    /// The cursor to hold after the read when no emitted row carries it (a bulk pass that
    /// ended on an empty page starts over).
    pub end: Option<Cursor>,
    /// Caught up (or the bulk pass finished): the table waits `poll.interval.ms`.
    pub done: bool,
}

/// What is known of the grant's `max_rows`, across tables.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    /// The largest result seen full: shorter results of at most this many asked are complete.
    pub proven: u32,
    warned: bool,
}

/// A read of `plan`, from `cursor` (or `initial`, a timestamp text, without one).
pub(crate) struct Reader<'a> {
    pub mode: Mode,
    pub plan: &'a Plan,
    pub cursor: Option<&'a Cursor>,
    pub initial: Option<&'a str>,
    pub limits: &'a mut Limits,
}

/// A failed statement as the operator sees it: which table, what the database said, and the
/// statement (never its parameters, which are data).
pub(crate) fn failed(label: &str, statement: &str, e: SqlError) -> RecordError {
    let mut error = RecordError::from(e);
    error.message = format!("{label}: {}; statement: {statement}", error.message);
    error
}

/// Where a read continues after `cursor`.
fn after(mode: Mode, cursor: &Cursor) -> Option<Lower<'_>> {
    match (mode, cursor.ts.as_deref(), cursor.inc.as_deref(), cursor.after.as_deref()) {
        (Mode::Incrementing, _, Some(inc), _) => Some(Lower::After(inc)),
        (Mode::TimestampIncrementing, Some(ts), Some(inc), _) => Some(Lower::TsIncAfter(ts, inc)),
        (Mode::Timestamp, Some(ts), _, _) => Some(Lower::TsAfter(ts)),
        (Mode::Bulk, _, _, Some(key)) => Some(Lower::After(key)),
        _ => None,
    }
}

impl Reader<'_> {
    pub(crate) fn read(&mut self, n: u32) -> Result<Outcome, RecordError> {
        match self.mode {
            Mode::Bulk if self.plan.keyset => self.bulk_by_key(n),
            Mode::Bulk => self.bulk_by_offset(n),
            Mode::Incrementing | Mode::TimestampIncrementing => self.unique(n),
            Mode::Timestamp => self.timestamp(n),
        }
    }

    /// Where this read starts.
    fn lower(&self) -> Lower<'_> {
        match self.cursor.and_then(|c| after(self.mode, c)) {
            Some(lower) => lower,
            None => self.initial.map_or(Lower::Start, Lower::TsAtLeast),
        }
    }

    fn run(&self, statement: &Statement, max_rows: u32) -> Result<RowSet, RecordError> {
        sql::query(&statement.text, &statement.params, max_rows).map_err(|e| failed(&self.plan.label, &statement.text, e))
    }

    /// Whether rows lie beyond a result of `got` rows where `asked` were asked: a full result
    /// says yes (read on), a short one no, unless the grant's cap may have cut it and `probe`
    /// finds a row beyond.
    fn more(&mut self, got: usize, asked: u32, probe: Statement) -> Result<bool, RecordError> {
        if got >= asked as usize {
            self.limits.proven = self.limits.proven.max(asked);
            return Ok(true);
        }
        if got == 0 || asked <= self.limits.proven {
            return Ok(false);
        }
        let cut = !self.run(&probe, 1)?.is_empty();
        if cut && !std::mem::replace(&mut self.limits.warned, true) {
            log::warn(&format!(
                "{}: a query returned {got} rows where {asked} were asked, and more exist: the connector's database.max_rows is below what sql-source asks for; \
                 lower batch.max.rows to at most {got} (or raise max_rows) to save a query per batch",
                self.plan.label
            ));
        }
        Ok(cut)
    }

    fn column(&self, set: &RowSet, name: &str, option: &str) -> Result<usize, RecordError> {
        set.column_index(name).ok_or_else(|| RecordError::fatal(format!("{}: the result has no column {name:?} ({option})", self.plan.label)))
    }

    fn null(&self, column: &str, option: &str) -> RecordError {
        RecordError::fatal(format!("{}: a row has NULL in {column:?} ({option}), so it has no place in the order rows are read in", self.plan.label))
    }

    /// Each row's timestamp: the first non-NULL of the timestamp columns.
    fn timestamps(&self, set: &RowSet) -> Result<Vec<String>, RecordError> {
        let columns: Vec<usize> = self.plan.ts.iter().map(|c| self.column(set, c, "timestamp.column.name")).collect::<Result<_, _>>()?;
        set.rows().map(|row| first_text(&row, &columns).map(str::to_owned).ok_or_else(|| self.null(&self.plan.ts.join(", "), "timestamp.column.name"))).collect()
    }

    /// Incrementing and timestamp+incrementing: the cursor is unique, so any batch boundary
    /// is safe.
    fn unique(&mut self, n: u32) -> Result<Outcome, RecordError> {
        let plan = self.plan;
        let set = self.run(&plan.shape.rows(self.lower(), n, 0), n)?;
        let inc_name = plan.inc.as_deref().unwrap_or_default();
        let inc = self.column(&set, inc_name, "incrementing.column.name")?;
        let ts = if self.mode.uses_timestamp() { Some(self.timestamps(&set)?) } else { None };
        let mut cursors = Vec::with_capacity(set.len());
        for row in set.rows() {
            let value = row.text(inc).ok_or_else(|| self.null(inc_name, "incrementing.column.name"))?;
            let ts = ts.as_ref().and_then(|t| t.get(row.index()).cloned());
            cursors.push(Some(Cursor { ts, inc: Some(value.to_owned()), ..Cursor::default() }));
        }
        let mode = self.mode;
        let done = match cursors.last().and_then(Option::as_ref).and_then(|c| after(mode, c)) {
            Some(lower) => !self.more(cursors.len(), n, plan.shape.any(lower, 0))?,
            None => true,
        };
        Ok(Outcome { set, cursors, end: None, done })
    }

    /// Timestamp only: rows of one timestamp are never split across batches, since the next
    /// read starts after the cursor's timestamp. A read asks for one row more than it emits;
    /// if that row shares the last timestamp, the rows of that timestamp are left for the next
    /// read, and if every row shares it, all rows of that timestamp are read at once.
    fn timestamp(&mut self, n: u32) -> Result<Outcome, RecordError> {
        let plan = self.plan;
        let ask = n.saturating_add(1);
        let set = self.run(&plan.shape.rows(self.lower(), ask, 0), ask)?;
        let ts = self.timestamps(&set)?;
        let Some(last) = ts.last().cloned() else {
            return Ok(Outcome { set, cursors: Vec::new(), end: None, done: true });
        };
        // Rows come in timestamp order: the last timestamp's rows are the tail.
        let tail_start = ts.iter().position(|t| *t == last).unwrap_or(0);
        let cut = self.more(ts.len(), ask, plan.shape.any(Lower::TsAtLeast(&last), (ts.len() - tail_start) as u64))?;
        if !cut {
            return Ok(Outcome { cursors: ts_cursors(&ts, ts.len()), set, end: None, done: true });
        }
        if tail_start > 0 {
            return Ok(Outcome { cursors: ts_cursors(&ts, tail_start), set, end: None, done: false });
        }
        self.one_timestamp(&last)
    }

    /// Every row of timestamp `t`, in one query; fails if one query cannot hold them.
    fn one_timestamp(&mut self, t: &str) -> Result<Outcome, RecordError> {
        let plan = self.plan;
        let set = self.run(&plan.shape.rows(Lower::TsEqual(t), TIE_LIMIT, 0), TIE_LIMIT)?;
        let rows = set.len();
        if rows > 0 && !self.run(&plan.shape.any(Lower::TsEqual(t), rows as u64), 1)?.is_empty() {
            return Err(RecordError::fatal(format!(
                "{}: more than {rows} rows share the timestamp {t} ({}), and one query returns at most {rows} here (the connector's database.max_rows). \
                 Timestamp mode cannot end a batch inside one timestamp without losing rows: use mode timestamp+incrementing, or raise database.max_rows",
                plan.label,
                plan.ts.join(", ")
            )));
        }
        let mut cursors: Vec<Option<Cursor>> = vec![None; rows];
        if let Some(last) = cursors.last_mut() {
            *last = Some(Cursor { ts: Some(t.to_owned()), ..Cursor::default() });
        }
        // No rows: they went away since the last read; read again.
        Ok(Outcome { set, cursors, end: None, done: false })
    }

    /// Bulk with a one-column key: pages by `key > last`, each page a separate query.
    fn bulk_by_key(&mut self, n: u32) -> Result<Outcome, RecordError> {
        let plan = self.plan;
        let key = plan.key.first().map(String::as_str).unwrap_or_default();
        let set = self.run(&plan.shape.rows(self.lower(), n, 0), n)?;
        let column = self.column(&set, key, "the primary key")?;
        let mut cursors = Vec::with_capacity(set.len());
        for row in set.rows() {
            let value = row.text(column).ok_or_else(|| self.null(key, "the primary key"))?;
            cursors.push(Some(Cursor { after: Some(value.to_owned()), ..Cursor::default() }));
        }
        let done = match cursors.last().and_then(Option::as_ref).and_then(|c| c.after.as_deref()) {
            Some(last) => !self.more(cursors.len(), n, plan.shape.any(Lower::After(last), 0))?,
            None => true,
        };
        Ok(finish_pass(set, cursors, done))
    }

    /// Bulk without a one-column key: pages by `LIMIT`/`OFFSET`, ordered by the key when
    /// there is one.
    fn bulk_by_offset(&mut self, n: u32) -> Result<Outcome, RecordError> {
        let plan = self.plan;
        let offset = self.cursor.and_then(|c| c.offset).unwrap_or(0);
        let set = self.run(&plan.shape.rows(Lower::Start, n, offset), n)?;
        let got = set.len();
        let cursors = (1..=got as u64).map(|i| Some(Cursor { offset: Some(offset + i), ..Cursor::default() })).collect();
        let done = !self.more(got, n, plan.shape.any(Lower::Start, offset + got as u64))?;
        Ok(finish_pass(set, cursors, done))
    }
}

/// The first non-NULL text among `columns`.
fn first_text<'r>(row: &Row<'r>, columns: &[usize]) -> Option<&'r str> {
    columns.iter().find_map(|&i| row.text(i))
}

/// Timestamp cursors of the first `count` rows: only the last row of each timestamp moves
/// the position, so a position never stands inside one timestamp's rows.
fn ts_cursors(ts: &[String], count: usize) -> Vec<Option<Cursor>> {
    (0..count)
        .map(|i| (i + 1 == count || ts.get(i + 1) != ts.get(i)).then(|| Cursor { ts: ts.get(i).cloned(), ..Cursor::default() }))
        .collect()
}

/// A finished bulk pass forgets its cursor, so the next pass starts from the first row.
fn finish_pass(set: RowSet, mut cursors: Vec<Option<Cursor>>, done: bool) -> Outcome {
    let end = match (done, cursors.last_mut()) {
        (true, Some(last)) => {
            *last = Some(Cursor::default());
            None
        }
        (true, None) => Some(Cursor::default()),
        (false, _) => None,
    };
    Outcome { set, cursors, end, done }
}
