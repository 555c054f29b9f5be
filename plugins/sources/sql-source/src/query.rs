//! The SQL text each mode sends, per dialect. Identifiers are always quoted; values never
//! appear in the text, only as parameters (cursor values are passed back exactly as the
//! database gave them, as text); only numbers this plugin computes (`LIMIT`, `OFFSET`) are
//! written inline.
//!
//! Every incremental read is bounded above by the database's clock minus
//! `timestamp.delay.interval.ms`, so a row whose timestamp is "now" — which other rows may
//! still share when their transactions commit — is read at a later poll, after them.

use turnpike_sdk::sql::{Dialect, Param};

use crate::config::Mode;

/// One statement and its parameters, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Statement {
    pub text: String,
    pub params: Vec<Param>,
}

/// Where a read starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lower<'a> {
    /// From the first row (no stored position, no `timestamp.initial`).
    Start,
    /// Timestamp at or after this (`timestamp.initial`).
    TsAtLeast(&'a str),
    /// Timestamp mode: after this timestamp.
    TsAfter(&'a str),
    /// Timestamp mode: exactly this timestamp (all rows of one timestamp).
    TsEqual(&'a str),
    /// timestamp+incrementing: after this (timestamp, incrementing) pair.
    TsIncAfter(&'a str, &'a str),
    /// Incrementing mode, and bulk pages by key: after this value.
    After(&'a str),
}

/// How one table (or the query) is queried: what to select from and the cursor expressions,
/// already quoted.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    dialect: Dialect,
    mode: Mode,
    from: String,
    /// The timestamp expression: a column, or `COALESCE(a, b, …)`.
    ts: String,
    /// The incrementing column (or the key column of bulk pages).
    inc: String,
    /// `ORDER BY` expressions.
    order: Vec<String>,
    delay_ms: u64,
}

/// `public.orders` as a quoted table name: `"public"."orders"`. MySQL names have no schema
/// part (a dot there is part of the name).
pub(crate) fn quote_table(dialect: Dialect, name: &str) -> String {
    match (dialect, name.split_once('.')) {
        (Dialect::PostgreSql, Some((schema, table))) => format!("{}.{}", dialect.quote(schema), dialect.quote(table)),
        _ => dialect.quote(name),
    }
}

/// A custom query as something to select from.
pub(crate) fn from_query(query: &str) -> String {
    format!("({query}) AS turnpike_q")
}

/// The database's clock, for `timestamp.initial: -1`.
pub(crate) fn now(dialect: Dialect) -> Statement {
    let text = match dialect {
        Dialect::PostgreSql => "SELECT CURRENT_TIMESTAMP AS turnpike_now",
        Dialect::MySql => "SELECT CURRENT_TIMESTAMP(6) AS turnpike_now",
    };
    Statement { text: text.into(), params: Vec::new() }
}

/// No rows, only the columns (what a custom query returns, checked before reading it).
pub(crate) fn columns_of(from: &str) -> Statement {
    Statement { text: format!("SELECT * FROM {from} LIMIT 0"), params: Vec::new() }
}

/// A statement being written: placeholders numbered as parameters are bound.
struct Sql {
    dialect: Dialect,
    text: String,
    params: Vec<Param>,
    /// Whether a `WHERE` clause was started.
    filtered: bool,
}

impl Sql {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn bind(&mut self, param: Param) {
        self.params.push(param);
        let placeholder = self.dialect.placeholder(self.params.len());
        self.text.push_str(&placeholder);
    }

    /// Starts a condition: ` WHERE ` the first time, ` AND ` after.
    fn and(&mut self) {
        let joiner = if std::mem::replace(&mut self.filtered, true) { " AND " } else { " WHERE " };
        self.push(joiner);
    }
}

impl Shape {
    /// `ts_columns` are coalesced in order; `inc` is the incrementing column (or bulk's key
    /// column); `bulk_order` orders bulk pages. Names are unquoted.
    pub(crate) fn new(dialect: Dialect, mode: Mode, from: String, ts_columns: &[String], inc: Option<&str>, bulk_order: &[String], delay_ms: u64) -> Shape {
        let quoted: Vec<String> = ts_columns.iter().map(|c| dialect.quote(c)).collect();
        let ts = match quoted.as_slice() {
            [one] => one.clone(),
            many => format!("COALESCE({})", many.join(", ")),
        };
        let inc = inc.map(|c| dialect.quote(c)).unwrap_or_default();
        let order = match mode {
            Mode::Bulk if inc.is_empty() => bulk_order.iter().map(|c| dialect.quote(c)).collect(),
            Mode::Bulk => vec![inc.clone()],
            Mode::Incrementing => vec![inc.clone()],
            Mode::Timestamp => vec![ts.clone()],
            Mode::TimestampIncrementing => vec![ts.clone(), inc.clone()],
        };
        Shape { dialect, mode, from, ts, inc, order, delay_ms }
    }

    /// Up to `limit` rows after `lower` in cursor order, skipping `offset` (bulk pages
    /// without a one-column key).
    pub(crate) fn rows(&self, lower: Lower<'_>, limit: u32, offset: u64) -> Statement {
        let mut sql = self.start("*", lower);
        if !self.order.is_empty() && !matches!(lower, Lower::TsEqual(_)) {
            sql.push(" ORDER BY ");
            sql.push(&self.order.join(", "));
        }
        sql.push(&format!(" LIMIT {limit}"));
        if offset > 0 {
            sql.push(&format!(" OFFSET {offset}"));
        }
        Statement { text: sql.text, params: sql.params }
    }

    /// Whether a row lies after `lower` beyond the first `skip`: one row at most, to tell
    /// "no more rows" from "the grant's max_rows cut the result".
    pub(crate) fn any(&self, lower: Lower<'_>, skip: u64) -> Statement {
        let mut sql = self.start("1", lower);
        sql.push(" LIMIT 1");
        if skip > 0 {
            sql.push(&format!(" OFFSET {skip}"));
        }
        Statement { text: sql.text, params: sql.params }
    }

    /// `SELECT <what> FROM <from> WHERE <lower> AND <upper bound> AND <inc IS NOT NULL>`.
    fn start(&self, what: &str, lower: Lower<'_>) -> Sql {
        let mut sql = Sql { dialect: self.dialect, text: format!("SELECT {what} FROM {}", self.from), params: Vec::new(), filtered: false };
        let text = |v: &str| Param::Text(v.to_owned());
        match lower {
            Lower::Start => {}
            Lower::TsAtLeast(t) => self.compare(&mut sql, &self.ts, ">=", text(t)),
            Lower::TsAfter(t) => self.compare(&mut sql, &self.ts, ">", text(t)),
            Lower::TsEqual(t) => self.compare(&mut sql, &self.ts, "=", text(t)),
            Lower::After(v) => self.compare(&mut sql, &self.inc, ">", text(v)),
            Lower::TsIncAfter(t, i) => {
                sql.and();
                sql.push(&format!("({} > ", self.ts));
                sql.bind(text(t));
                sql.push(&format!(" OR ({} = ", self.ts));
                sql.bind(text(t));
                sql.push(&format!(" AND {} > ", self.inc));
                sql.bind(text(i));
                sql.push("))");
            }
        }
        if self.mode.uses_timestamp() && !matches!(lower, Lower::TsEqual(_)) {
            sql.and();
            sql.push(&format!("{} < ", self.ts));
            self.upper_bound(&mut sql);
        }
        // `inc > ?` already leaves NULLs out; without it (the first read, or the timestamp
        // branch of the pair) a NULL would become a cursor that matches nothing.
        let inc_free = matches!(lower, Lower::Start | Lower::TsAtLeast(_) | Lower::TsIncAfter(..));
        if self.mode.uses_incrementing() && inc_free {
            sql.and();
            sql.push(&format!("{} IS NOT NULL", self.inc));
        }
        sql
    }

    fn compare(&self, sql: &mut Sql, expr: &str, op: &str, value: Param) {
        sql.and();
        sql.push(&format!("{expr} {op} "));
        sql.bind(value);
    }

    /// The database's clock minus the delay. In PostgreSQL the delay is cast: a bare
    /// parameter times an interval would be typed `double precision`, which an integer
    /// parameter does not bind to.
    fn upper_bound(&self, sql: &mut Sql) {
        match self.dialect {
            Dialect::PostgreSql => {
                sql.push("CURRENT_TIMESTAMP - (CAST(");
                sql.bind(Param::Integer(i64::try_from(self.delay_ms).unwrap_or(i64::MAX)));
                sql.push(" AS BIGINT) * INTERVAL '1 millisecond')");
            }
            Dialect::MySql => {
                sql.push("CURRENT_TIMESTAMP(6) - INTERVAL ");
                sql.bind(Param::Integer(i64::try_from(self.delay_ms.saturating_mul(1000)).unwrap_or(i64::MAX)));
                sql.push(" MICROSECOND");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG: Dialect = Dialect::PostgreSql;
    const MY: Dialect = Dialect::MySql;

    fn shape(dialect: Dialect, mode: Mode, ts: &[&str], inc: Option<&str>) -> Shape {
        let ts: Vec<String> = ts.iter().map(|s| (*s).to_owned()).collect();
        Shape::new(dialect, mode, quote_table(dialect, "public.orders"), &ts, inc, &[], 5000)
    }

    fn text(s: &str) -> Param {
        Param::Text(s.into())
    }

    #[test]
    fn incrementing_reads_above_the_last_value() {
        let pg = shape(PG, Mode::Incrementing, &[], Some("id"));
        assert_eq!(pg.rows(Lower::Start, 500, 0).text, r#"SELECT * FROM "public"."orders" WHERE "id" IS NOT NULL ORDER BY "id" LIMIT 500"#);
        let st = pg.rows(Lower::After("41"), 500, 0);
        assert_eq!(st.text, r#"SELECT * FROM "public"."orders" WHERE "id" > $1 ORDER BY "id" LIMIT 500"#);
        assert_eq!(st.params, [text("41")]);
        let my = shape(MY, Mode::Incrementing, &[], Some("id"));
        assert_eq!(my.rows(Lower::After("41"), 500, 0).text, "SELECT * FROM `public.orders` WHERE `id` > ? ORDER BY `id` LIMIT 500");
        assert_eq!(my.any(Lower::After("99"), 0).text, "SELECT 1 FROM `public.orders` WHERE `id` > ? LIMIT 1");
    }

    #[test]
    fn timestamp_incrementing_reads_after_the_pair_below_the_delayed_clock() {
        let pg = shape(PG, Mode::TimestampIncrementing, &["updated_at"], Some("id"));
        let st = pg.rows(Lower::TsIncAfter("2026-12-01T13:45:00.123456", "42"), 500, 0);
        assert_eq!(
            st.text,
            r#"SELECT * FROM "public"."orders" WHERE ("updated_at" > $1 OR ("updated_at" = $2 AND "id" > $3)) AND "updated_at" < CURRENT_TIMESTAMP - (CAST($4 AS BIGINT) * INTERVAL '1 millisecond') AND "id" IS NOT NULL ORDER BY "updated_at", "id" LIMIT 500"#
        );
        assert_eq!(st.params, [text("2026-12-01T13:45:00.123456"), text("2026-12-01T13:45:00.123456"), text("42"), Param::Integer(5000)]);
        let my = shape(MY, Mode::TimestampIncrementing, &["updated_at"], Some("id"));
        let st = my.rows(Lower::TsIncAfter("t", "42"), 500, 0);
        assert_eq!(
            st.text,
            "SELECT * FROM `public.orders` WHERE (`updated_at` > ? OR (`updated_at` = ? AND `id` > ?)) AND `updated_at` < CURRENT_TIMESTAMP(6) - INTERVAL ? MICROSECOND AND `id` IS NOT NULL ORDER BY `updated_at`, `id` LIMIT 500"
        );
        assert_eq!(st.params.last(), Some(&Param::Integer(5_000_000)), "MySQL counts microseconds");
        assert_eq!(
            pg.rows(Lower::Start, 10, 0).text,
            r#"SELECT * FROM "public"."orders" WHERE "updated_at" < CURRENT_TIMESTAMP - (CAST($1 AS BIGINT) * INTERVAL '1 millisecond') AND "id" IS NOT NULL ORDER BY "updated_at", "id" LIMIT 10"#
        );
    }

    #[test]
    fn timestamp_mode_coalesces_and_reads_one_timestamp_whole() {
        let pg = shape(PG, Mode::Timestamp, &["updated_at", "created_at"], None);
        assert_eq!(
            pg.rows(Lower::TsAfter("t"), 501, 0).text,
            r#"SELECT * FROM "public"."orders" WHERE COALESCE("updated_at", "created_at") > $1 AND COALESCE("updated_at", "created_at") < CURRENT_TIMESTAMP - (CAST($2 AS BIGINT) * INTERVAL '1 millisecond') ORDER BY COALESCE("updated_at", "created_at") LIMIT 501"#
        );
        assert_eq!(pg.rows(Lower::TsEqual("t"), 10000, 0).text, r#"SELECT * FROM "public"."orders" WHERE COALESCE("updated_at", "created_at") = $1 LIMIT 10000"#);
        assert_eq!(pg.any(Lower::TsEqual("t"), 10000).text, r#"SELECT 1 FROM "public"."orders" WHERE COALESCE("updated_at", "created_at") = $1 LIMIT 1 OFFSET 10000"#);
        let my = shape(MY, Mode::Timestamp, &["updated_at"], None);
        assert_eq!(
            my.rows(Lower::TsAtLeast("2026-01-01T00:00:00.000"), 11, 0).text,
            "SELECT * FROM `public.orders` WHERE `updated_at` >= ? AND `updated_at` < CURRENT_TIMESTAMP(6) - INTERVAL ? MICROSECOND ORDER BY `updated_at` LIMIT 11"
        );
        assert_eq!(
            my.any(Lower::TsAtLeast("t"), 3).text,
            "SELECT 1 FROM `public.orders` WHERE `updated_at` >= ? AND `updated_at` < CURRENT_TIMESTAMP(6) - INTERVAL ? MICROSECOND LIMIT 1 OFFSET 3"
        );
    }

    #[test]
    fn bulk_pages_by_key_or_by_offset() {
        let keyset = Shape::new(PG, Mode::Bulk, quote_table(PG, "public.items"), &[], Some("id"), &[], 0);
        assert_eq!(keyset.rows(Lower::Start, 1000, 0).text, r#"SELECT * FROM "public"."items" ORDER BY "id" LIMIT 1000"#);
        assert_eq!(keyset.rows(Lower::After("1000"), 1000, 0).text, r#"SELECT * FROM "public"."items" WHERE "id" > $1 ORDER BY "id" LIMIT 1000"#);
        let composite = Shape::new(MY, Mode::Bulk, quote_table(MY, "lines"), &[], None, &["order_id".into(), "line".into()], 0);
        assert_eq!(composite.rows(Lower::Start, 1000, 2000).text, "SELECT * FROM `lines` ORDER BY `order_id`, `line` LIMIT 1000 OFFSET 2000");
        let keyless = Shape::new(MY, Mode::Bulk, quote_table(MY, "logs"), &[], None, &[], 0);
        assert_eq!(keyless.rows(Lower::Start, 1000, 0).text, "SELECT * FROM `logs` LIMIT 1000");
        assert_eq!(keyless.any(Lower::Start, 1000).text, "SELECT 1 FROM `logs` LIMIT 1 OFFSET 1000");
    }

    #[test]
    fn a_custom_query_is_wrapped_and_names_are_quoted_safely() {
        let from = from_query("SELECT o.id, o.updated_at, c.email FROM orders o JOIN customers c ON c.id = o.customer_id");
        let s = Shape::new(PG, Mode::Incrementing, from, &[], Some("id"), &[], 0);
        assert_eq!(
            s.rows(Lower::After("7"), 100, 0).text,
            r#"SELECT * FROM (SELECT o.id, o.updated_at, c.email FROM orders o JOIN customers c ON c.id = o.customer_id) AS turnpike_q WHERE "id" > $1 ORDER BY "id" LIMIT 100"#
        );
        assert_eq!(quote_table(PG, r#"odd"schema.t"#), r#""odd""schema"."t""#);
        assert_eq!(columns_of("`t`").text, "SELECT * FROM `t` LIMIT 0");
        assert_eq!(now(MY).text, "SELECT CURRENT_TIMESTAMP(6) AS turnpike_now");
    }
}
