use super::check_statement;
use crate::{Dialect, TableGrant};

fn grant(globs: &[&str], default_schema: &str) -> TableGrant {
    let globs: Vec<String> = globs.iter().map(|glob| (*glob).to_owned()).collect();
    TableGrant::new(&globs, default_schema)
}

/// PostgreSQL, granting `orders` and `customer_*` in `public`.
fn pg(sql: &str) -> Result<(), String> {
    check_statement(sql, Dialect::Postgresql, &grant(&["orders", "customer_*"], "public"))
}

/// MySQL, granting `orders` in the database `shop`.
fn mysql(sql: &str) -> Result<(), String> {
    check_statement(sql, Dialect::Mysql, &grant(&["orders"], "shop"))
}

fn refused(result: Result<(), String>, expected: &str) {
    let reason = result.expect_err("the statement should be refused");
    assert!(reason.contains(expected), "{reason:?} does not contain {expected:?}");
}

#[test]
fn a_plain_select_of_a_granted_table_passes() {
    assert_eq!(pg("SELECT id, total FROM orders WHERE total > 10"), Ok(()));
    assert_eq!(pg("SELECT * FROM public.customer_eu"), Ok(()));
    assert_eq!(pg("VALUES (1, 'a'), (2, 'b')"), Ok(()));
    assert_eq!(pg("SELECT 1"), Ok(()));
}

#[test]
fn a_join_with_an_ungranted_table_names_that_table() {
    let reason = pg("SELECT * FROM orders o JOIN secrets s ON s.id = o.id").unwrap_err();
    assert_eq!(
        reason,
        "table \"public.secrets\" is not granted to this connector (granted: orders, customer_*)"
    );
}

#[test]
fn a_subquery_in_where_is_checked() {
    refused(
        pg("SELECT * FROM orders WHERE customer_id IN (SELECT id FROM secrets)"),
        "\"public.secrets\"",
    );
    refused(
        pg("SELECT * FROM orders WHERE EXISTS (SELECT 1 FROM private.users u WHERE u.id = 1)"),
        "\"private.users\"",
    );
}

#[test]
fn a_similar_name_is_not_granted() {
    refused(pg("SELECT * FROM orders_archive"), "\"public.orders_archive\"");
    refused(pg("SELECT * FROM other.orders"), "\"other.orders\"");
}

#[test]
fn cte_names_are_not_tables() {
    assert_eq!(
        pg("WITH recent AS (SELECT * FROM orders) SELECT * FROM recent"),
        Ok(())
    );
    assert_eq!(
        pg("WITH a AS (SELECT * FROM orders), b AS (SELECT * FROM a) SELECT * FROM b"),
        Ok(())
    );
    assert_eq!(
        pg("WITH Recent AS (SELECT * FROM orders) \
            SELECT * FROM orders WHERE id IN (SELECT id FROM recent)"),
        Ok(())
    );
    assert_eq!(
        pg("WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) \
            SELECT * FROM n"),
        Ok(())
    );
}

#[test]
fn a_cte_body_naming_its_own_cte_reads_the_real_table() {
    refused(
        pg("WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets"),
        "\"public.secrets\"",
    );
}

#[test]
fn a_cte_hides_tables_only_inside_its_own_query() {
    refused(
        pg("SELECT * FROM secrets, (WITH secrets AS (SELECT 1 AS x) SELECT * FROM secrets) AS s"),
        "\"public.secrets\"",
    );
    refused(
        pg("SELECT * FROM (WITH secrets AS (SELECT 1 AS x) SELECT * FROM secrets) AS s, secrets"),
        "\"public.secrets\"",
    );
}

#[test]
fn a_quoted_cte_name_does_not_hide_the_unquoted_table() {
    // PostgreSQL folds `secrets` to lower case, so it is not the CTE "Secrets".
    refused(
        pg("WITH \"Secrets\" AS (SELECT 1 AS x) SELECT * FROM Secrets"),
        "\"public.Secrets\"",
    );
}

#[test]
fn statements_other_than_queries_are_refused_with_their_verb() {
    for (sql, verb) in [
        ("DELETE FROM orders", "a DELETE"),
        ("UPDATE orders SET total = 0", "an UPDATE"),
        ("INSERT INTO orders (id) VALUES (1)", "an INSERT"),
        ("DROP TABLE orders", "a DROP TABLE"),
        ("SET TRANSACTION READ WRITE", "a SET TRANSACTION"),
        ("COMMIT", "a COMMIT"),
    ] {
        let reason = pg(sql).unwrap_err();
        assert_eq!(
            reason,
            format!("only queries (SELECT, WITH … SELECT, VALUES) may run; this statement is {verb}"),
            "{sql}"
        );
    }
}

#[test]
fn a_with_clause_before_a_delete_is_still_a_delete() {
    refused(
        pg("WITH x AS (SELECT 1) DELETE FROM orders"),
        "this statement is a DELETE",
    );
}

#[test]
fn one_statement_per_query() {
    assert_eq!(
        pg("SELECT 1; DELETE FROM orders").unwrap_err(),
        "one statement per query; found 2"
    );
    assert_eq!(pg("").unwrap_err(), "one statement per query; found 0");
    assert_eq!(pg("SELECT * FROM orders;"), Ok(()));
}

#[test]
fn a_statement_that_does_not_parse_says_so() {
    refused(pg("SELEC * FROM orders"), "the statement does not parse as PostgreSQL: ");
    refused(mysql("SELECT * FROM"), "the statement does not parse as MySQL: ");
}

#[test]
fn a_data_modifying_cte_is_refused() {
    refused(
        pg("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d"),
        "the WITH query `d` is a DELETE",
    );
    refused(
        pg("WITH u AS (UPDATE orders SET total = 0 RETURNING id) SELECT * FROM u"),
        "the WITH query `u` is an UPDATE",
    );
}

#[test]
fn select_into_is_refused() {
    refused(pg("SELECT * INTO x FROM orders"), "creates a table");
}

#[test]
fn locking_clauses_are_refused() {
    refused(pg("SELECT * FROM orders FOR UPDATE"), "`FOR UPDATE` locks rows");
    refused(pg("SELECT * FROM orders FOR SHARE"), "`FOR SHARE` locks rows");
    refused(
        pg("SELECT * FROM orders WHERE id IN (SELECT id FROM orders FOR UPDATE)"),
        "locks rows",
    );
    refused(mysql("SELECT * FROM orders FOR UPDATE"), "locks rows");
}

#[test]
fn functions_that_reach_outside_are_refused() {
    refused(pg("SELECT pg_read_file('/etc/passwd')"), "`pg_read_file()`");
    refused(pg("SELECT * FROM orders WHERE id = nextval('ids')"), "`nextval()`");
    refused(pg("SELECT pg_catalog.PG_SLEEP(10)"), "PG_SLEEP");
    refused(pg("SELECT query_to_xml('SELECT * FROM secrets', true, false, '')"), "query_to_xml");
    refused(mysql("SELECT LOAD_FILE('/etc/passwd')"), "LOAD_FILE");
    assert_eq!(pg("SELECT count(*), lower(status) FROM orders GROUP BY 2"), Ok(()));
}

#[test]
fn table_functions_are_refused() {
    refused(
        pg("SELECT * FROM dblink('dbname=other', 'SELECT 1')"),
        "`dblink(…)` is a table function",
    );
    refused(pg("SELECT * FROM generate_series(1, 10)"), "table function");
    refused(
        pg("SELECT * FROM orders, LATERAL generate_series(1, orders.total)"),
        "table function",
    );
}

#[test]
fn unnest_is_not_a_table_function() {
    assert_eq!(pg("SELECT * FROM UNNEST(ARRAY[1, 2, 3]) AS n"), Ok(()));
}

#[test]
fn the_table_keyword_is_refused() {
    refused(
        pg("SELECT * FROM (TABLE public.orders) AS t"),
        "`TABLE name` queries are refused",
    );
}

#[test]
fn unqualified_pg_names_are_looked_up_in_pg_catalog() {
    let everything_in_public = grant(&["public.*"], "public");
    let check = |sql: &str| check_statement(sql, Dialect::Postgresql, &everything_in_public);
    refused(check("SELECT * FROM pg_shadow"), "\"pg_catalog.pg_shadow\"");
    refused(check("SELECT * FROM pg_catalog.pg_user"), "\"pg_catalog.pg_user\"");
    assert_eq!(check("SELECT * FROM anything"), Ok(()));
}

#[test]
fn names_with_a_database_part_use_the_schema_and_table() {
    assert_eq!(pg("SELECT * FROM mydb.public.orders"), Ok(()));
    refused(pg("SELECT * FROM mydb.private.orders"), "\"private.orders\"");
    refused(pg("SELECT * FROM a.b.c.d"), "too many parts");
    refused(mysql("SELECT * FROM a.shop.orders"), "too many parts");
}

#[test]
fn mysql_backticks_and_the_database_as_schema() {
    assert_eq!(mysql("SELECT * FROM `orders`"), Ok(()));
    assert_eq!(mysql("SELECT * FROM shop.orders"), Ok(()));
    assert_eq!(mysql("SELECT * FROM `shop`.`orders` AS o WHERE o.id > 1"), Ok(()));
    refused(mysql("SELECT * FROM `shop`.`customers`"), "\"shop.customers\"");
    refused(mysql("SELECT * FROM mysql.user"), "\"mysql.user\"");
}

#[test]
fn mysql_into_outfile_is_refused() {
    assert!(mysql("SELECT * INTO OUTFILE '/tmp/orders.csv' FROM orders").is_err());
    assert!(mysql("SELECT * FROM orders INTO OUTFILE '/tmp/orders.csv'").is_err());
    assert!(mysql("SELECT * INTO DUMPFILE '/tmp/orders.bin' FROM orders").is_err());
}

#[test]
fn comments_are_refused_anywhere_since_parser_and_database_may_end_them_differently() {
    // MySQL runs these; the parser skips them.
    refused(mysql("SELECT * FROM orders /*! ; DELETE FROM orders */"), "`/*` is refused");
    refused(mysql("SELECT * FROM orders /*M!100000 , secrets */"), "`/*` is refused");
    // An optimizer hint that lifts the statement timeout.
    refused(mysql("SELECT /*+ MAX_EXECUTION_TIME(86400000) */ COUNT(*) FROM orders"), "`/*` is refused");
    // MySQL ends `--` at a tab; the parser reads on, into what looks like a string.
    refused(mysql("SELECT 1 --\t'\n, secret FROM hr.salaries #'"), "`--` is refused");
    refused(mysql("SELECT * FROM orders WHERE 1 = 1 # , secrets"), "`#` is refused");
    // PostgreSQL cuts the operator `</*` at the comment; the parser keeps it whole.
    refused(pg("SELECT 1 </* -- */ 2, s.* FROM hr.salaries s\nx"), "is refused");
    refused(pg("SELECT * FROM orders -- , secrets"), "`--` is refused");
    // Strings too: where a string ends is exactly what the two could disagree on.
    refused(pg("SELECT * FROM orders WHERE note = 'a--b'"), "as a parameter");
    assert_eq!(pg("SELECT * FROM orders WHERE note = $1"), Ok(()));
    assert_eq!(mysql("SELECT * FROM orders WHERE color <> ?"), Ok(()));
}

#[test]
fn postgresql_unicode_escapes_are_refused() {
    refused(pg("SELECT U&\"query\\005fto\\005fxml\"('select * from hr.salaries', true, false, '')"), "`U&` escapes");
    refused(pg("SELECT * FROM orders WHERE name = u&'\\0041'"), "`U&` escapes");
}

#[test]
fn a_mysql_recursive_cte_cannot_name_a_later_cte_to_reach_a_table() {
    refused(mysql("WITH RECURSIVE a AS (SELECT * FROM secrets), secrets AS (SELECT 1) SELECT * FROM a"), "\"shop.secrets\"");
}

#[test]
fn postgresql_functions_that_run_query_text_are_refused() {
    refused(pg("SELECT ts_stat('SELECT to_tsvector(ssn) FROM hr.salaries')"), "ts_stat");
}

#[test]
fn quoted_identifiers_are_unquoted_and_compared_case_insensitively() {
    assert_eq!(pg("SELECT * FROM \"Orders\""), Ok(()));
    assert_eq!(pg("SELECT * FROM \"public\".\"ORDERS\""), Ok(()));
    refused(pg("SELECT * FROM \"secrets\""), "\"public.secrets\"");
}

#[test]
fn the_sql_source_incremental_query_passes_on_postgresql() {
    let query = "SELECT * FROM (SELECT * FROM \"public\".\"orders\") AS turnpike_q \
        WHERE (\"updated_at\" > $1 OR (\"updated_at\" = $2 AND \"id\" > $3)) \
        AND \"updated_at\" < CURRENT_TIMESTAMP - ($4 * INTERVAL '1 millisecond') \
        ORDER BY \"updated_at\", \"id\" LIMIT 1000";
    assert_eq!(pg(query), Ok(()));
    refused(
        pg(&query.replace("\"orders\"", "\"secrets\"")),
        "\"public.secrets\"",
    );
}

#[test]
fn the_sql_source_incremental_query_passes_on_mysql() {
    let query = "SELECT * FROM (SELECT * FROM `orders`) AS turnpike_q \
        WHERE (`updated_at` > ? OR (`updated_at` = ? AND `id` > ?)) \
        AND `updated_at` < CURRENT_TIMESTAMP(6) - INTERVAL ? MICROSECOND \
        ORDER BY `updated_at`, `id` LIMIT 1000";
    assert_eq!(mysql(query), Ok(()));
    refused(mysql(&query.replace("`orders`", "`secrets`")), "\"shop.secrets\"");
}
