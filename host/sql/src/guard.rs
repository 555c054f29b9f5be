//! The first, explainable layer in front of plugins' SQL: before a statement reaches the
//! database, refuse anything that is not exactly one read-only query over granted tables.
//!
//! The host also runs every statement in a read-only transaction; this guard exists so a
//! plugin author reads *why* in their own terms instead of a database error, and so a query
//! naming an ungranted table never reaches the database at all. It judges the parsed tree,
//! so it refuses what it cannot see through (executable comments, computed names, table
//! functions) rather than guessing.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, Query, SetExpr, Statement, TableFactor, Visit,
    Visitor,
};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::{Parser, ParserError};

use crate::{Dialect, TableGrant};

static POSTGRESQL: PostgreSqlDialect = PostgreSqlDialect {};
static MYSQL: MySqlDialect = MySqlDialect {};

/// Functions that read files or other databases, wait, take locks or change server state: a
/// read-only transaction stops writes, not these. Exact names, then name prefixes
/// (`pg_read_file`, `pg_ls_dir`, `lo_import`, `dblink_exec`, `pg_advisory_lock`, and
/// `query_to_xml`, which runs the query text it is given).
const DENIED_FUNCTIONS: &str = "pg_stat_file pg_reload_conf pg_rotate_logfile pg_switch_wal \
    pg_promote pg_notify pg_terminate_backend pg_cancel_backend set_config nextval setval \
    load_file sys_exec sys_eval sleep benchmark get_lock release_lock release_all_locks \
    master_pos_wait source_pos_wait";
const DENIED_PREFIXES: &str = "pg_read_ pg_ls_ pg_file_ pg_sleep pg_advisory_ pg_try_advisory_ \
    pg_logical_ pg_replication_ pg_create_ pg_drop_ pg_stat_reset lo_ dblink query_to_xml \
    table_to_xml cursor_to_xml schema_to_xml database_to_xml ts_stat ts_rewrite";

/// Words between `CREATE`/`DROP`/`ALTER` and the kind of object, skipped when naming a verb.
const MODIFIERS: &[&str] = &[
    "OR", "REPLACE", "TEMPORARY", "TEMP", "UNLOGGED", "UNIQUE", "GLOBAL", "LOCAL", "EXTERNAL",
    "SECURE", "RECURSIVE",
];

/// Ok when `statement` is one read-only query whose every table is granted; Err says why, in
/// words a plugin author understands (they appear in the plugin's error and the connector's
/// events).
pub fn check_statement(
    statement: &str,
    dialect: Dialect,
    grant: &TableGrant,
) -> Result<(), String> {
    let parser_dialect: &'static dyn sqlparser::dialect::Dialect = match dialect {
        Dialect::Postgresql => &POSTGRESQL,
        Dialect::Mysql => &MYSQL,
    };
    refuse_hidden_text(dialect, statement)?;
    let statements = Parser::parse_sql(parser_dialect, statement).map_err(|error| {
        format!(
            "the statement does not parse as {}: {}",
            dialect_name(dialect),
            parser_message(&error)
        )
    })?;
    let [only] = statements.as_slice() else {
        return Err(format!(
            "one statement per query; found {}",
            statements.len()
        ));
    };
    if !matches!(only, Statement::Query(_)) {
        return Err(not_a_query(only));
    }
    let mut guard = Guard {
        dialect,
        grant,
        frames: Vec::new(),
        statements: 0,
    };
    match only.visit(&mut guard) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(reason) => Err(reason),
    }
}

fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgresql => "PostgreSQL",
        Dialect::Mysql => "MySQL",
    }
}

/// The parser's own words, without its "sql parser error: " prefix.
fn parser_message(error: &ParserError) -> String {
    match error {
        ParserError::TokenizerError(message) | ParserError::ParserError(message) => {
            message.clone()
        }
        ParserError::RecursionLimitExceeded => "it nests too deeply".to_owned(),
    }
}

/// Text the parser and the database could read differently is refused outright, anywhere in
/// the statement, strings included: comments (`--`, `/* */`, MySQL's `#`: MySQL ends a `--`
/// comment at a tab the parser does not, PostgreSQL cuts an operator at a `/*` the parser
/// keeps, and MySQL runs `/*! … */` and honours `/*+ … */` hints, both skipped by the parser)
/// and PostgreSQL's `U&` escapes (names the parser never decodes). Scanning the raw text,
/// without deciding where strings end, leaves no disagreement to exploit; a value holding
/// such characters goes in as a parameter.
fn refuse_hidden_text(dialect: Dialect, statement: &str) -> Result<(), String> {
    let mut found = vec!["--", "/*", "*/"];
    if matches!(dialect, Dialect::Mysql) {
        found.push("#");
    }
    if let Some(seq) = found.into_iter().find(|seq| statement.contains(seq)) {
        return Err(format!(
            "`{seq}` is refused anywhere in a query (comments could hide text from the host's check);              remove comments, and pass a value holding `{seq}` as a parameter"
        ));
    }
    let upper = statement.to_ascii_uppercase();
    if matches!(dialect, Dialect::Postgresql) && (upper.contains("U&'") || upper.contains("U&\"")) {
        return Err("`U&` escapes are refused in a query (they could hide a name from the host's check); write names and values plainly, or pass values as parameters".to_owned());
    }
    Ok(())
}

fn not_a_query(statement: &Statement) -> String {
    format!(
        "only queries (SELECT, WITH … SELECT, VALUES) may run; this statement is {}",
        verb_phrase(statement)
    )
}

/// "a DELETE", "an ALTER TABLE", "a SET TRANSACTION": the statement's leading keywords as its
/// SQL text prints them (keywords print in upper case, names as written).
fn verb_phrase(statement: &Statement) -> String {
    let text = statement.to_string();
    let mut words = text.split_whitespace().take_while(|word| {
        !word.is_empty() && word.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    });
    let Some(first) = words.next() else {
        return "not a query".to_owned();
    };
    let second = match first {
        "CREATE" | "DROP" | "ALTER" => words.find(|word| !MODIFIERS.contains(word)),
        "SET" | "START" => words.next().filter(|word| *word == "TRANSACTION"),
        _ => None,
    };
    let verb = match second {
        Some(second) => format!("{first} {second}"),
        None => first.to_owned(),
    };
    let starts_with_vowel_sound = matches!(verb.as_bytes().first(), Some(b'A' | b'E' | b'I' | b'O'))
        || (verb.starts_with('U') && !verb.starts_with("US"));
    let article = if starts_with_vowel_sound { "an" } else { "a" };
    format!("{article} {verb}")
}

/// Walks one parsed query, stopping at the first thing to refuse.
struct Guard<'g> {
    dialect: Dialect,
    grant: &'g TableGrant,
    /// The queries being visited, innermost last, with the CTE names each defines.
    frames: Vec<Frame>,
    statements: usize,
}

/// One query's `WITH` list and how much of it is in scope right now.
struct Frame {
    ctes: Vec<CteName>,
    recursive: bool,
    /// How many of `ctes` are visible: all of them in the query's body; only the earlier ones
    /// while the visitor is inside a (non-recursive) CTE's own body, where the CTE's own name
    /// still means a real table.
    visible: usize,
}

struct CteName {
    written: String,
    resolved: String,
    /// Which query is this CTE's body, to tell when the visitor enters it; only compared,
    /// never dereferenced.
    body: *const Query,
}

impl Frame {
    fn of(query: &Query, dialect: Dialect) -> Self {
        let Some(with) = &query.with else {
            return Self {
                ctes: Vec::new(),
                recursive: false,
                visible: 0,
            };
        };
        let ctes: Vec<CteName> = with
            .cte_tables
            .iter()
            .map(|cte| CteName {
                written: cte.alias.name.value.clone(),
                resolved: resolve(dialect, &cte.alias.name),
                body: &*cte.query,
            })
            .collect();
        Self {
            visible: ctes.len(),
            ctes,
            recursive: with.recursive,
        }
    }
}

/// The name the database looks up: PostgreSQL folds unquoted names to lower case; MySQL is
/// taken literally, so a CTE only hides a table when spelled exactly alike.
fn resolve(dialect: Dialect, ident: &Ident) -> String {
    match (dialect, ident.quote_style) {
        (Dialect::Postgresql, None) => ident.value.to_ascii_lowercase(),
        _ => ident.value.clone(),
    }
}

impl Guard<'_> {
    /// Notes that the visitor enters `query`: when it is a CTE body of the enclosing query,
    /// narrows that query's visible CTEs and returns the CTE's name.
    fn enter(&mut self, query: &Query) -> Option<String> {
        let parent = self.frames.last_mut()?;
        let found = parent
            .ctes
            .iter()
            .enumerate()
            .find(|(_, cte)| std::ptr::eq(cte.body, query))
            .map(|(index, cte)| (index, cte.written.clone()));
        // In a recursive WITH, PostgreSQL and MariaDB let each body see every CTE; MySQL only
        // its own name and the earlier ones (a later name there is the table of that name).
        let mysql = matches!(self.dialect, Dialect::Mysql);
        parent.visible = match &found {
            Some((index, _)) if !parent.recursive => *index,
            Some((index, _)) if mysql => *index + 1,
            _ => parent.ctes.len(),
        };
        found.map(|(_, name)| name)
    }

    fn cte_in_scope(&self, resolved: &str) -> bool {
        self.frames.iter().rev().any(|frame| {
            frame
                .ctes
                .iter()
                .take(frame.visible)
                .any(|cte| cte.resolved == resolved)
        })
    }

    fn check_table(&self, relation: &ObjectName, parts: &[&Ident]) -> ControlFlow<String> {
        let (schema, table, hint) = match (self.dialect, parts) {
            // PostgreSQL searches pg_catalog before the search path for unqualified names.
            (Dialect::Postgresql, [table]) if table.value.to_ascii_lowercase().starts_with("pg_") => (
                "pg_catalog",
                table.value.as_str(),
                "; PostgreSQL looks unqualified `pg_` names up in pg_catalog first, so qualify the table with its schema",
            ),
            (_, [table]) => (self.grant.default_schema(), table.value.as_str(), ""),
            (_, [schema, table]) => (schema.value.as_str(), table.value.as_str(), ""),
            (Dialect::Postgresql, [_database, schema, table]) => {
                (schema.value.as_str(), table.value.as_str(), "")
            }
            _ => {
                return ControlFlow::Break(format!(
                    "the table name `{relation}` has too many parts: write `schema.table` or `table`"
                ))
            }
        };
        if self.grant.allows(schema, table) {
            return ControlFlow::Continue(());
        }
        let granted = match self.grant.globs() {
            [] => "nothing".to_owned(),
            globs => globs.join(", "),
        };
        ControlFlow::Break(format!(
            "table \"{schema}.{table}\" is not granted to this connector (granted: {granted}){hint}"
        ))
    }
}

/// Refuses a query body that writes: `WITH … DELETE`, a data-modifying CTE, `SELECT … INTO`.
fn check_body(body: &SetExpr, cte: Option<&str>) -> ControlFlow<String> {
    match body {
        SetExpr::Select(select) => match &select.into {
            Some(into) => ControlFlow::Break(format!(
                "`SELECT … INTO {}` creates a table, and a plugin's queries may only read: remove the INTO clause",
                into.name
            )),
            None => ControlFlow::Continue(()),
        },
        SetExpr::SetOperation { left, right, .. } => {
            check_body(left, cte)?;
            check_body(right, cte)
        }
        // A parenthesised query is checked when the visitor reaches it.
        SetExpr::Query(_) | SetExpr::Values(_) => ControlFlow::Continue(()),
        SetExpr::Insert(statement)
        | SetExpr::Update(statement)
        | SetExpr::Delete(statement)
        | SetExpr::Merge(statement) => ControlFlow::Break(match cte {
            Some(name) => format!(
                "the WITH query `{name}` is {}, and a plugin's queries may only read",
                verb_phrase(statement)
            ),
            None => not_a_query(statement),
        }),
        // The parser reads `TABLE name` with a fixed three-token lookahead that can swallow
        // what follows, so the database might see more than the guard did.
        SetExpr::Table(_) => ControlFlow::Break(
            "`TABLE name` queries are refused: write `SELECT * FROM name` instead".to_owned(),
        ),
    }
}

impl Visitor for Guard<'_> {
    type Break = String;

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<Self::Break> {
        self.statements += 1;
        if self.statements > 1 {
            return ControlFlow::Break(not_a_query(statement));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<Self::Break> {
        let cte = self.enter(query);
        self.frames.push(Frame::of(query, self.dialect));
        if let Some(lock) = query.locks.first() {
            return ControlFlow::Break(format!(
                "`{lock}` locks rows, and a plugin's queries may only read: remove the locking clause"
            ));
        }
        check_body(&query.body, cte.as_deref())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<Self::Break> {
        self.frames.pop();
        if let Some(parent) = self.frames.last_mut() {
            parent.visible = parent.ctes.len();
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, table_factor: &TableFactor) -> ControlFlow<Self::Break> {
        match table_factor {
            TableFactor::Table {
                name, args: Some(_), ..
            }
            | TableFactor::Function { name, .. } => ControlFlow::Break(format!(
                "`{name}(…)` is a table function, and a plugin's queries may read only granted tables: select from a table"
            )),
            TableFactor::TableFunction { .. } | TableFactor::SemanticView { .. } => {
                ControlFlow::Break(
                    "table functions are refused, and a plugin's queries may read only granted tables: select from a table"
                        .to_owned(),
                )
            }
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<Self::Break> {
        let mut parts = Vec::with_capacity(relation.0.len());
        for part in &relation.0 {
            match part.as_ident() {
                Some(ident) => parts.push(ident),
                None => {
                    return ControlFlow::Break(format!(
                        "the table name `{relation}` is computed by a function: name the table itself"
                    ))
                }
            }
        }
        if let [name] = parts.as_slice() {
            if self.cte_in_scope(&resolve(self.dialect, name)) {
                return ControlFlow::Continue(());
            }
        }
        self.check_table(relation, &parts)
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<Self::Break> {
        let Expr::Function(function) = expr else {
            return ControlFlow::Continue(());
        };
        match function.name.0.last().and_then(ObjectNamePart::as_ident) {
            Some(name) if is_denied(&name.value) => ControlFlow::Break(format!(
                "`{}()` reads files or other databases, waits, or changes state, and a plugin's queries may only read granted tables",
                function.name
            )),
            Some(_) => ControlFlow::Continue(()),
            None => ControlFlow::Break(format!(
                "the function name `{}` is computed: call functions by name",
                function.name
            )),
        }
    }
}

fn is_denied(function: &str) -> bool {
    let function = function.to_ascii_lowercase();
    DENIED_FUNCTIONS.split_whitespace().any(|denied| function == denied)
        || DENIED_PREFIXES
            .split_whitespace()
            .any(|prefix| function.starts_with(prefix))
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
