//! The granted tables as plugins see them: the backends read `information_schema` into a
//! [`Catalog`], and this module turns it into [`TableInfo`]s, filtered through the grant,
//! named the way grants and statements spell tables, with one value kind per column.

use std::collections::HashMap;

use crate::{Dialect, TableColumn, TableGrant, TableInfo, ValueKind};

/// One column as `information_schema.columns` lists it, in ordinal order per table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogColumn {
    pub schema: String,
    pub table: String,
    pub column: String,
    /// The name the plugin is shown (a domain's name, `int unsigned`).
    pub type_name: String,
    /// The name the kind is derived from (the type under a domain, MySQL's `DATA_TYPE`).
    pub base_type: String,
    pub nullable: bool,
}

/// One primary-key column, in key order per table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogKey {
    pub schema: String,
    pub table: String,
    pub column: String,
}

#[derive(Debug, Default)]
pub(crate) struct Catalog {
    pub columns: Vec<CatalogColumn>,
    pub keys: Vec<CatalogKey>,
}

/// The schemas to read, lower case: the default one and every schema a glob names
/// (`sales.orders`, `audit.*`). `None` (read every non-system schema) when a glob's schema
/// part is itself a pattern or quoted, since only the grant can tell then.
pub(crate) fn schemas_to_read(globs: &[String], default_schema: &str) -> Option<Vec<String>> {
    let mut schemas = vec![default_schema.to_ascii_lowercase()];
    for glob in globs {
        let Some((schema, _table)) = glob.trim().split_once('.') else { continue };
        if schema.contains(['*', '?', '[', ']', '"', '`']) {
            return None;
        }
        let schema = schema.to_ascii_lowercase();
        if !schemas.contains(&schema) {
            schemas.push(schema);
        }
    }
    Some(schemas)
}

/// Groups `catalog` into tables, keeping those `grant` allows (all with `None`). The
/// columns must come ordered by schema, table and ordinal position.
pub(crate) fn assemble(catalog: Catalog, dialect: Dialect, default_schema: &str, grant: Option<&TableGrant>) -> Vec<TableInfo> {
    let mut keys: HashMap<(String, String), Vec<String>> = HashMap::new();
    for key in catalog.keys {
        keys.entry((key.schema, key.table)).or_default().push(key.column);
    }
    let mut tables: Vec<TableInfo> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for column in catalog.columns {
        if grant.is_some_and(|grant| !grant.allows(&column.schema, &column.table)) {
            continue;
        }
        let same_table = current.as_ref().is_some_and(|(schema, table)| *schema == column.schema && *table == column.table);
        if !same_table {
            let id = (column.schema.clone(), column.table.clone());
            tables.push(TableInfo {
                name: table_name(dialect, default_schema, &column.schema, &column.table),
                columns: Vec::new(),
                primary_key: keys.remove(&id).unwrap_or_default(),
            });
            current = Some(id);
        }
        let kind = match dialect {
            Dialect::Postgresql => postgres_kind(&column.base_type),
            Dialect::Mysql => mysql_kind(&column.base_type),
        };
        if let Some(table) = tables.last_mut() {
            table.columns.push(TableColumn { name: column.column, kind, type_name: column.type_name, nullable: column.nullable });
        }
    }
    tables
}

/// `public.orders` in PostgreSQL; `orders` in MySQL for the URL's database, else `db.orders`.
fn table_name(dialect: Dialect, default_schema: &str, schema: &str, table: &str) -> String {
    match dialect {
        Dialect::Mysql if schema.eq_ignore_ascii_case(default_schema) => table.to_owned(),
        _ => format!("{schema}.{table}"),
    }
}

/// The kind of a PostgreSQL type, by its `udt_name` (the same names query results carry).
pub(crate) fn postgres_kind(type_name: &str) -> ValueKind {
    match type_name {
        "bool" => ValueKind::Boolean,
        "int2" | "int4" | "int8" | "oid" => ValueKind::Integer,
        "float4" | "float8" => ValueKind::Float,
        "numeric" => ValueKind::Decimal,
        "text" | "varchar" | "bpchar" | "name" | "char" | "citext" => ValueKind::Text,
        "bytea" => ValueKind::Bytes,
        "date" => ValueKind::Date,
        "time" => ValueKind::Time,
        "timestamp" => ValueKind::Timestamp,
        "timestamptz" => ValueKind::TimestampTz,
        "json" | "jsonb" => ValueKind::Json,
        "uuid" => ValueKind::Uuid,
        _ => ValueKind::Other,
    }
}

/// The kind of a MySQL / MariaDB column, by its `DATA_TYPE`, matching what a query returns
/// for it (MariaDB's `uuid` and `json` come back as text, so they are text here too).
pub(crate) fn mysql_kind(data_type: &str) -> ValueKind {
    match data_type.to_ascii_lowercase().as_str() {
        "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "year" => ValueKind::Integer,
        "float" | "double" | "real" | "double precision" => ValueKind::Float,
        "decimal" | "numeric" | "dec" | "fixed" => ValueKind::Decimal,
        "char" | "varchar" | "tinytext" | "text" | "mediumtext" | "longtext" | "uuid" => ValueKind::Text,
        "binary" | "varbinary" | "tinyblob" | "blob" | "mediumblob" | "longblob" => ValueKind::Bytes,
        "date" => ValueKind::Date,
        "time" => ValueKind::Time,
        "datetime" => ValueKind::Timestamp,
        "timestamp" => ValueKind::TimestampTz,
        "json" => ValueKind::Json,
        _ => ValueKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(schema: &str, table: &str, name: &str, base: &str) -> CatalogColumn {
        CatalogColumn {
            schema: schema.into(),
            table: table.into(),
            column: name.into(),
            type_name: base.into(),
            base_type: base.into(),
            nullable: name != "id",
        }
    }

    fn key(schema: &str, table: &str, name: &str) -> CatalogKey {
        CatalogKey { schema: schema.into(), table: table.into(), column: name.into() }
    }

    #[test]
    fn tables_are_grouped_in_order_with_their_keys_and_kinds() {
        let catalog = Catalog {
            columns: vec![
                column("public", "lines", "order_id", "int8"),
                column("public", "lines", "line", "int4"),
                column("public", "lines", "amount", "numeric"),
                column("public", "orders", "id", "int8"),
                column("public", "orders", "placed", "timestamptz"),
                column("public", "orders", "state", "order_state"),
            ],
            keys: vec![key("public", "lines", "order_id"), key("public", "lines", "line"), key("public", "orders", "id")],
        };
        let tables = assemble(catalog, Dialect::Postgresql, "public", None);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].name, "public.lines");
        assert_eq!(tables[0].primary_key, vec!["order_id", "line"]);
        let names: Vec<&str> = tables[0].columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["order_id", "line", "amount"]);
        assert_eq!(tables[0].columns[2].kind, ValueKind::Decimal);
        assert_eq!(tables[1].name, "public.orders");
        assert_eq!(tables[1].columns[0].kind, ValueKind::Integer);
        assert!(!tables[1].columns[0].nullable);
        assert_eq!(tables[1].columns[1].kind, ValueKind::TimestampTz);
        assert_eq!(tables[1].columns[2].kind, ValueKind::Other);
    }

    #[test]
    fn mysql_names_tables_of_the_url_database_bare_and_filters_through_the_grant() {
        let catalog = Catalog {
            columns: vec![
                column("shop", "orders", "id", "bigint"),
                column("shop", "secrets", "id", "int"),
                column("audit", "events", "at", "timestamp"),
            ],
            keys: vec![key("shop", "orders", "id")],
        };
        let grant = TableGrant::new(&["orders".to_owned(), "audit.events".to_owned()], "shop");
        let tables = assemble(catalog, Dialect::Mysql, "shop", Some(&grant));
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["orders", "audit.events"]);
        assert_eq!(tables[0].primary_key, vec!["id"]);
        assert!(tables[1].primary_key.is_empty());
        assert_eq!(tables[1].columns[0].kind, ValueKind::TimestampTz);
    }

    #[test]
    fn schemas_read_are_the_default_and_those_globs_name() {
        let globs = |list: &[&str]| list.iter().map(|g| g.to_string()).collect::<Vec<_>>();
        assert_eq!(schemas_to_read(&globs(&["orders", "customer_*"]), "public"), Some(vec!["public".to_owned()]));
        assert_eq!(
            schemas_to_read(&globs(&["Sales.orders", "audit.*", "public.x"]), "public"),
            Some(vec!["public".to_owned(), "sales".to_owned(), "audit".to_owned()])
        );
        assert_eq!(schemas_to_read(&globs(&["*.orders"]), "public"), None);
    }

    #[test]
    fn kinds_follow_the_type_names() {
        assert_eq!(postgres_kind("jsonb"), ValueKind::Json);
        assert_eq!(postgres_kind("_int4"), ValueKind::Other);
        assert_eq!(mysql_kind("DATETIME"), ValueKind::Timestamp);
        assert_eq!(mysql_kind("varbinary"), ValueKind::Bytes);
        assert_eq!(mysql_kind("enum"), ValueKind::Other);
    }
}
