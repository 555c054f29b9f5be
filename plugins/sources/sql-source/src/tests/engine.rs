//! A tiny in-memory database for the tests, behind the SDK's fake: not a SQL engine, but an
//! evaluator of exactly the statement shapes this plugin sends (`SELECT * | 1 FROM t [WHERE
//! a AND (b OR (c AND d)) …] [ORDER BY …] [LIMIT n] [OFFSET k]`, the clock, a wrapped query),
//! honouring the parameters, so that a test sees what a real database would return for them.
//! Values compare as integers, then as timestamps, then as text. Every statement is logged.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;

use turnpike_sdk::sql::{Column, Dialect, Param, RowSet, SqlError, TableColumn, TableInfo, ValueKind};
use turnpike_sdk::testing::{self, FakeDatabase};

use crate::time;

/// A table's columns and rows (text values as the host gives them; `None` is NULL).
#[derive(Clone)]
pub(crate) struct Table {
    pub info: TableInfo,
    pub rows: Vec<Vec<Option<String>>>,
}

pub(crate) struct Engine {
    pub dialect: Dialect,
    pub tables: Vec<Table>,
    /// What a wrapped custom query (`FROM (…) AS turnpike_q`) returns.
    pub query: Option<Table>,
    /// The database clock.
    pub now_ms: i64,
    /// Every statement and its parameters, in order.
    pub log: Vec<(String, Vec<Param>)>,
    /// Returned by the next statement instead of an answer.
    pub fail: Option<SqlError>,
}

pub(crate) type Shared = Rc<RefCell<Engine>>;

/// A column of a granted table.
pub(crate) fn col(name: &str, kind: ValueKind, type_name: &str, nullable: bool) -> TableColumn {
    TableColumn { name: name.into(), kind, type_name: type_name.into(), nullable }
}

/// 2026-12-01T00:00:00Z: the clock of every test unless it moves it.
pub(crate) const NOW: i64 = 1_796_083_200_000;

impl Engine {
    pub(crate) fn new(dialect: Dialect) -> Engine {
        Engine { dialect, tables: Vec::new(), query: None, now_ms: NOW, log: Vec::new(), fail: None }
    }

    pub(crate) fn table(mut self, name: &str, columns: Vec<TableColumn>, primary_key: &[&str]) -> Engine {
        let info = TableInfo { name: name.into(), columns, primary_key: primary_key.iter().map(|k| (*k).to_owned()).collect() };
        self.tables.push(Table { info, rows: Vec::new() });
        self
    }

    /// The statements sent so far.
    pub(crate) fn statements(&self) -> Vec<String> {
        self.log.iter().map(|(s, _)| s.clone()).collect()
    }

    /// Adds a column (existing rows get NULL), as `ALTER TABLE … ADD COLUMN` would.
    pub(crate) fn add_column(&mut self, table: &str, column: TableColumn) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.info.name == table) {
            t.info.columns.push(column);
            t.rows.iter_mut().for_each(|r| r.push(None));
        }
    }

    pub(crate) fn insert(&mut self, table: &str, row: &[Option<&str>]) {
        let row = row.iter().map(|v| v.map(str::to_owned)).collect();
        match self.tables.iter_mut().find(|t| t.info.name == table) {
            Some(t) => t.rows.push(row),
            None => panic!("no table {table}"),
        }
    }

    /// Installs the engine as this thread's database; `cap` is the grant's `max_rows`.
    pub(crate) fn install(self, cap: u32) -> Shared {
        let infos = self.tables.iter().map(|t| t.info.clone()).collect();
        let dialect = self.dialect;
        let shared = Rc::new(RefCell::new(self));
        let engine = shared.clone();
        testing::set_sql(FakeDatabase::new(dialect, infos, move |statement, params, max| engine.borrow_mut().answer(statement, params, max)).max_rows(cap));
        shared
    }

    fn answer(&mut self, statement: &str, params: &[Param], max: u32) -> Result<RowSet, SqlError> {
        self.log.push((statement.to_owned(), params.to_vec()));
        if let Some(e) = self.fail.take() {
            return Err(e);
        }
        let unknown = || SqlError::QueryFailed { code: "42601".into(), message: format!("the test engine does not know {statement:?}") };
        let st = normalize(self.dialect, statement);
        if st.starts_with("SELECT CURRENT_TIMESTAMP") {
            let kind = if self.dialect == Dialect::PostgreSql { ValueKind::TimestampTz } else { ValueKind::Timestamp };
            return Ok(RowSet::builder([Column::new("turnpike_now", kind, "timestamptz")]).row([Some(time::format_ms(self.now_ms, kind))]).build());
        }
        let (what, rest) = st.strip_prefix("SELECT ").and_then(|s| s.split_once(" FROM ")).ok_or_else(unknown)?;
        let (table, rest) = self.from(rest).ok_or_else(unknown)?;
        let (rest, offset) = split_last(rest, " OFFSET ");
        let (rest, limit) = split_last(rest, " LIMIT ");
        let (rest, order) = split_last(rest, " ORDER BY ");
        let cond = rest.strip_prefix(" WHERE ").unwrap_or(rest);
        let cx = Eval { table, params, now_ms: self.now_ms };
        let mut rows: Vec<&Vec<Option<String>>> = table.rows.iter().filter(|r| cond.is_empty() || cx.test(cond, r)).collect();
        if let Some(order) = order {
            let exprs: Vec<&str> = order.split(", ").collect();
            rows.sort_by(|a, b| exprs.iter().map(|e| compare(cx.value(e, a), cx.value(e, b))).find(|o| o.is_ne()).unwrap_or(Ordering::Equal));
        }
        let skip = offset.and_then(|o| o.parse().ok()).unwrap_or(0);
        let take = limit.and_then(|l| l.parse().ok()).unwrap_or(usize::MAX).min(max as usize);
        let rows: Vec<&Vec<Option<String>>> = rows.into_iter().skip(skip).take(take).collect();
        if what == "1" {
            let mut b = RowSet::builder([Column::new("?column?", ValueKind::Integer, "int4")]);
            for _ in &rows {
                b = b.row([Some("1")]);
            }
            return Ok(b.build());
        }
        let columns = table.info.columns.iter().map(|c| Column::new(c.name.clone(), c.kind, c.type_name.clone()));
        let mut b = RowSet::builder(columns);
        for r in rows {
            b = b.row(r.iter().map(Option::as_deref));
        }
        Ok(b.build())
    }

    /// The table after `FROM`, and the clauses after it.
    fn from<'s>(&self, rest: &'s str) -> Option<(&Table, &'s str)> {
        if rest.starts_with('(') {
            let close = matching_paren(rest)?;
            let after = rest[close + 1..].strip_prefix(" AS turnpike_q")?;
            return Some((self.query.as_ref()?, after));
        }
        let (name, after) = rest.find(' ').map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
        let name = name.replace("\".\"", ".").trim_matches('"').to_owned();
        Some((self.tables.iter().find(|t| t.info.name == name)?, after))
    }
}

/// MySQL's statements in PostgreSQL's spelling: quotes for backticks, numbered parameters.
fn normalize(dialect: Dialect, statement: &str) -> String {
    if dialect == Dialect::PostgreSql {
        return statement.to_owned();
    }
    let mut out = String::new();
    let mut n = 0;
    for c in statement.chars() {
        match c {
            '`' => out.push('"'),
            '?' => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            c => out.push(c),
        }
    }
    out
}

/// `(s, Some(after))` split at the last `sep`, or `(s, None)`.
fn split_last<'s>(s: &'s str, sep: &str) -> (&'s str, Option<&'s str>) {
    match s.rfind(sep) {
        Some(i) => (&s[..i], Some(&s[i + sep.len()..])),
        None => (s, None),
    }
}

fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `s` split at `sep` outside parentheses.
fn split_top<'s>(s: &'s str, sep: &str) -> Vec<&'s str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0_i32, 0);
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ if depth == 0 && s.is_char_boundary(i) && s[i..].starts_with(sep) => {
                parts.push(&s[start..i]);
                i += sep.len();
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&s[start..]);
    parts
}

fn compare(a: Option<&str>, b: Option<&str>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => match (a.parse::<i64>(), b.parse::<i64>(), time::epoch_ms(a), time::epoch_ms(b)) {
            (Ok(x), Ok(y), _, _) => x.cmp(&y),
            (_, _, Some(x), Some(y)) => x.cmp(&y),
            _ => a.cmp(b),
        },
        // NULLS LAST, as PostgreSQL sorts ascending.
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Greater,
        (_, None) => Ordering::Less,
    }
}

/// Evaluates conditions on one row.
struct Eval<'a> {
    table: &'a Table,
    params: &'a [Param],
    now_ms: i64,
}

impl Eval<'_> {
    /// The value of a column or of `COALESCE("a", "b")`: its first non-NULL quoted column.
    fn value<'r>(&self, expr: &str, row: &'r [Option<String>]) -> Option<&'r str> {
        expr.split('"').skip(1).step_by(2).find_map(|name| {
            let i = self.table.info.columns.iter().position(|c| c.name == name)?;
            row.get(i)?.as_deref()
        })
    }

    fn param(&self, placeholder: &str) -> Option<String> {
        let n: usize = placeholder.trim().strip_prefix('$')?.parse().ok()?;
        match self.params.get(n.checked_sub(1)?)? {
            Param::Text(t) => Some(t.clone()),
            Param::Integer(i) => Some(i.to_string()),
            _ => None,
        }
    }

    fn test(&self, cond: &str, row: &[Option<String>]) -> bool {
        let ors = split_top(cond, " OR ");
        if ors.len() > 1 {
            return ors.iter().any(|c| self.test(c, row));
        }
        let ands = split_top(cond, " AND ");
        if ands.len() > 1 {
            return ands.iter().all(|c| self.test(c, row));
        }
        if cond.starts_with('(') && matching_paren(cond) == Some(cond.len() - 1) {
            return self.test(&cond[1..cond.len() - 1], row);
        }
        if let Some(lhs) = cond.strip_suffix(" IS NOT NULL") {
            return self.value(lhs, row).is_some();
        }
        if let Some((lhs, bound)) = cond.split_once(" < CURRENT_TIMESTAMP") {
            let delay = bound.split('$').nth(1).and_then(|p| self.param(&format!("${}", p.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""))));
            let delay_ms = delay.and_then(|d| d.parse::<i64>().ok()).map_or(0, |d| if bound.contains("MICROSECOND") { d / 1000 } else { d });
            return self.value(lhs, row).and_then(time::epoch_ms).is_some_and(|ms| ms < self.now_ms - delay_ms);
        }
        for op in [" >= ", " > ", " = ", " < "] {
            if let Some((lhs, rhs)) = cond.split_once(op) {
                let (Some(v), Some(p)) = (self.value(lhs, row), self.param(rhs)) else { return false };
                let o = compare(Some(v), Some(p.as_str()));
                return match op.trim() {
                    ">=" => o.is_ge(),
                    ">" => o.is_gt(),
                    "=" => o.is_eq(),
                    _ => o.is_lt(),
                };
            }
        }
        panic!("the test engine does not know the condition {cond:?}")
    }
}
