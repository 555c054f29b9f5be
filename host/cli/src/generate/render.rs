//! The generated file: a comment block saying how it was made and how to apply it, then the
//! connectors as a YAML list, each parsed into the real [`ConnectorConfig`] and passed
//! through the host's own validation first, so the file is valid by construction. Each
//! connector is written as its type serializes it, less what the parser fills back in
//! (defaults), and the finished text is read back the way `connector apply` reads it.

use std::collections::BTreeSet;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table as Grid};
use serde_yaml_ng::Value as Yaml;
use turnpike_config::{Connector, ConnectorConfig, HostConfig, SandboxConfig};

use super::plan::{Mode, Planned};
use crate::output::escape;

/// What the comment block at the top says.
pub struct Header<'a> {
    /// The command that made the file, quoted for a shell.
    pub command: &'a str,
    pub url: &'a str,
    /// Where the file is written, if not to standard output.
    pub file: Option<&'a str>,
    /// The password reference the connectors carry.
    pub password: Option<&'a str>,
    pub one_connector: bool,
    /// Tables left out, each with why.
    pub skipped: &'a [(String, String)],
}

/// The file's text, or every problem found (each naming its connector).
pub fn render(planned: &[Planned], header: &Header<'_>) -> Result<String, Vec<String>> {
    let mut problems = Vec::new();
    let mut configs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, p) in planned.iter().enumerate() {
        let key = format!("connectors[{i}]");
        let config: ConnectorConfig = match serde_json::from_value(p.document.clone()) {
            Ok(c) => c,
            Err(e) => {
                problems.push(format!("connector {:?} ({}): {e}", p.name, tables(p)));
                continue;
            }
        };
        if !names.insert(config.name.clone()) {
            problems.push(format!("{key}.name: connector {:?} is generated twice", p.name));
        }
        match Connector::validate(config.clone(), &SandboxConfig::default(), &key) {
            Ok(_) => configs.push((p, config)),
            Err(found) => problems.extend(found.into_iter().map(|pr| format!("{pr} (connector {:?})", p.name))),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut text = comment_block(planned, header);
    for (p, config) in &configs {
        let item = minimal(config).and_then(|v| serde_yaml_ng::to_string(&vec![v]).map_err(|e| e.to_string())).map_err(|e| vec![format!("connector {:?}: {e}", p.name)])?;
        text.push('\n');
        text.push_str(&format!("# {}\n", escape(&describe(p))));
        text.push_str(&item);
    }
    let configs: Vec<ConnectorConfig> = configs.into_iter().map(|(_, c)| c).collect();
    match read_back(&text) {
        Ok(read) if read == configs => Ok(text),
        Ok(_) => Err(vec!["the written connectors read back differently (a bug in the generator: please report it)".to_owned()]),
        Err(why) => Err(vec![format!("the written file does not read back ({why}; a bug in the generator: please report it)")]),
    }
}

/// The connectors as `connector apply` reads a file: YAML into JSON, each item sent to the
/// host, which parses it as JSON.
fn read_back(text: &str) -> Result<Vec<ConnectorConfig>, String> {
    let document: serde_json::Value = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let serde_json::Value::Array(items) = document else { return Err("not a list".to_owned()) };
    items
        .iter()
        .map(|item| {
            let bytes = serde_json::to_vec(item).map_err(|e| e.to_string())?;
            HostConfig::parse_connector_json(&bytes, "generated file").map_err(|e| e.to_string())
        })
        .collect()
}

/// `config` serialized, less every key (top-level, or one level down) whose absence parses
/// back to the same connector: defaults are left to the host, as a person would write it.
fn minimal(config: &ConnectorConfig) -> Result<Yaml, String> {
    let mut doc = serde_yaml_ng::to_value(config).map_err(|e| e.to_string())?;
    let keys = |doc: &Yaml| doc.as_mapping().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    for key in keys(&doc) {
        let mut trial = doc.clone();
        if trial.as_mapping_mut().and_then(|m| m.shift_remove(&key)).is_some() && same(&trial, config) {
            doc = trial;
        }
    }
    for key in keys(&doc) {
        for sub in doc.get(&key).map(keys).unwrap_or_default() {
            let mut trial = doc.clone();
            let removed = trial.get_mut(&key).and_then(Yaml::as_mapping_mut).and_then(|m| m.shift_remove(&sub));
            if removed.is_some() && same(&trial, config) {
                doc = trial;
            }
        }
    }
    Ok(doc)
}

fn same(doc: &Yaml, config: &ConnectorConfig) -> bool {
    serde_yaml_ng::from_value::<ConnectorConfig>(doc.clone()).is_ok_and(|c| c == *config)
}

fn tables(p: &Planned) -> String {
    p.tables.iter().map(|t| t.table.as_str()).collect::<Vec<_>>().join(", ")
}

/// One line above each connector: what it reads and how.
fn describe(p: &Planned) -> String {
    let Some(first) = p.tables.first() else { return p.name.clone() };
    let by: Vec<String> = [&first.placement.incrementing, &first.placement.timestamp].into_iter().flatten().map(|c| format!("`{c}`")).collect();
    let by = if by.is_empty() { String::new() } else { format!(" by {}", by.join(" and ")) };
    match p.tables.len() {
        1 => format!("{}: {}{by}", first.table, p.mode.as_str()),
        n => format!("{n} tables, {}{by}: {}", p.mode.as_str(), tables(p)),
    }
}

fn comment_block(planned: &[Planned], h: &Header<'_>) -> String {
    let table_count: usize = planned.iter().map(|p| p.tables.len()).sum();
    let how = if h.one_connector { "one connector per mode (tables read in different modes or by different columns cannot share one)" } else { "one connector per table" };
    let file = h.file.unwrap_or("FILE");
    let mut lines = vec![
        format!("Connectors reading {table_count} tables of {} with the sql-source plugin,", h.url),
        format!("{} connectors: {how}. Made by:", planned.len()),
        format!("  {}", h.command),
        "Apply to a running host (add --api URL for one elsewhere than 127.0.0.1:8080):".to_owned(),
        format!("  turnpike connector apply --file {file}"),
        "For `turnpike run --config`, put these items under `connectors:` in the host's config file.".to_owned(),
    ];
    match h.password {
        Some(r) => lines.push(format!("No password is written here: {r} must resolve on the host that runs the connectors.")),
        None => lines.push("No password: the database must let the user in without one (trust or certificate sign-in).".to_owned()),
    }
    let bulk: Vec<String> = planned
        .iter()
        .filter(|p| p.mode == Mode::Bulk)
        .flat_map(|p| p.tables.iter().map(|t| format!("  - {}: {}", t.table, t.placement.reasons.get(1..).unwrap_or_default().join("; "))))
        .collect();
    if bulk.is_empty() {
        lines.push("No table is in bulk mode.".to_owned());
    } else {
        lines.push(format!("Tables in bulk mode ({}): each poll reads the whole table again.", bulk.len()));
        lines.extend(bulk);
    }
    if !h.skipped.is_empty() {
        lines.push(format!("Tables left out ({}):", h.skipped.len()));
        lines.extend(h.skipped.iter().map(|(t, why)| format!("  - {t}: {why}")));
    }
    lines.iter().map(|l| format!("# {}\n", escape(l))).collect()
}

/// The table of decisions for standard error: every table, its mode and connector, and why.
pub fn summary(planned: &[Planned], skipped: &[(String, String)], one_connector: bool) -> String {
    let mut grid = Grid::new();
    grid.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_width(140);
    grid.set_header(vec!["TABLE", "MODE", "CONNECTOR", "WHY"]);
    let mut rows: Vec<[String; 4]> = planned
        .iter()
        .flat_map(|p| p.tables.iter().map(move |t| [t.table.clone(), t.placement.mode.as_str().to_owned(), p.name.clone(), t.placement.reasons.join("; ")]))
        .collect();
    rows.extend(skipped.iter().map(|(t, why)| [t.clone(), "-".to_owned(), "-".to_owned(), format!("left out: {why}")]));
    rows.sort();
    for row in rows {
        grid.add_row(row.iter().map(|cell| escape(cell)).collect::<Vec<_>>());
    }
    let count = |mode: Mode| planned.iter().filter(|p| p.mode == mode).map(|p| p.tables.len()).sum::<usize>();
    let all: usize = planned.iter().map(|p| p.tables.len()).sum();
    let mut out = format!("{grid}\n{all} tables: {} incremental, {} in bulk mode", all - count(Mode::Bulk), count(Mode::Bulk));
    if !skipped.is_empty() {
        out.push_str(&format!(", {} left out", skipped.len()));
    }
    if one_connector {
        let list: Vec<String> = planned.iter().map(|p| format!("{} ({}, {} tables)", escape(&p.name), p.mode.as_str(), p.tables.len())).collect();
        match list.as_slice() {
            [one] => out.push_str(&format!("\n--one-connector: one connector, {one}, reads them all")),
            _ => out.push_str(&format!(
                "\n--one-connector: tables read in different modes (or by different columns) cannot share one connector config, so there are {}: {}",
                list.len(),
                list.join(", ")
            )),
        }
    }
    out
}

/// The command that was run, as a shell would take it back (it holds no password: none is
/// accepted on the command line).
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args_os().skip(1).map(|a| shell_quote(&a.to_string_lossy())).collect();
    format!("turnpike {}", args.join(" "))
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{plan, Column, Grant, Kind, Settings, Table};
    use super::*;

    fn tables() -> Vec<Table> {
        let col = |name: &str, kind, nullable| Column { name: name.into(), kind, type_name: "t".into(), nullable };
        vec![
            Table { name: "public.orders".into(), columns: vec![col("id", Kind::Integer, false), col("updated_at", Kind::TimestampTz, false)], primary_key: vec!["id".into()] },
            Table { name: "public.events".into(), columns: vec![col("id", Kind::Integer, false)], primary_key: vec!["id".into()] },
            Table { name: "public.audit_log".into(), columns: vec![col("line", Kind::Other, true)], primary_key: vec![] },
            Table { name: "public.invoices".into(), columns: vec![col("id", Kind::Integer, false), col("updated_at", Kind::TimestampTz, false)], primary_key: vec!["id".into()] },
        ]
    }

    fn settings(one_connector: bool, password: &str) -> Settings {
        Settings {
            topic_prefix: "shop.".into(),
            name_prefix: "shop-".into(),
            one_connector,
            poll_interval_ms: Some(2_000),
            grant: Grant { url: "postgresql://db.internal:5432/shop".into(), user: "app".into(), password: Some(password.into()), tls: Some("require"), ca_file: None },
        }
    }

    fn header(one_connector: bool) -> Header<'static> {
        Header { command: "turnpike connector generate sql …", url: "postgresql://db.internal:5432/shop", file: Some("shop.yaml"), password: Some("${env:SHOP_PW}"), one_connector, skipped: &[] }
    }

    #[test]
    fn a_generated_file_reads_back_as_valid_connectors_both_ways() {
        for one in [false, true] {
            let planned = plan(&tables(), &settings(one, "${env:SHOP_PW}")).unwrap();
            let text = render(&planned, &header(one)).unwrap();
            // As `connector apply` reads it: a list of connectors, each valid.
            let list: Vec<ConnectorConfig> = serde_yaml_ng::from_str(&text).unwrap();
            assert_eq!(list.len(), planned.len());
            for (i, c) in list.iter().enumerate() {
                let v = Connector::validate(c.clone(), &SandboxConfig::default(), "c").unwrap();
                assert!(matches!(v.flow(), turnpike_config::Flow::Source { .. }));
                let db = c.database.as_ref().unwrap();
                assert_eq!(db.password.as_deref(), Some("${env:SHOP_PW}"));
                assert_eq!(db.tables, planned[i].tables.iter().map(|t| t.table.clone()).collect::<Vec<_>>());
                let writable: Vec<&str> = v.output().unwrap().writable().map(|t| t.as_str()).collect();
                assert_eq!(writable, planned[i].tables.iter().map(|t| t.topic.as_str()).collect::<Vec<_>>(), "every table's topic may be written");
            }
            // As `turnpike run --config` reads it: pasted under `connectors:`.
            let items: Yaml = serde_yaml_ng::from_str(&text).unwrap();
            let mut host = serde_yaml_ng::Mapping::new();
            host.insert("kafka".into(), serde_yaml_ng::from_str("{bootstrap.servers: '127.0.0.1:9092'}").unwrap());
            host.insert("connectors".into(), items);
            let host = HostConfig::from_yaml(&serde_yaml_ng::to_string(&host).unwrap(), "t.yaml").unwrap();
            assert_eq!(host.connectors, list);
        }
    }

    #[test]
    fn the_file_says_how_it_was_made_and_which_tables_are_in_bulk_mode() {
        let planned = plan(&tables(), &settings(false, "${env:SHOP_PW}")).unwrap();
        let text = render(&planned, &header(false)).unwrap();
        let head: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        assert!(head.iter().any(|l| l.contains("turnpike connector apply --file shop.yaml")), "{text}");
        assert!(head.iter().any(|l| l.contains("turnpike connector generate sql")), "{text}");
        assert!(head.iter().any(|l| l.contains("- public.audit_log: no primary key")), "{text}");
        assert!(!head.iter().any(|l| l.contains("public.orders:")), "orders is not in bulk mode: {text}");
        // Defaults are left to the host, and nothing but the connectors is data.
        assert!(!text.contains("batch:") && !text.contains("restart:") && !text.contains("statement_timeout_ms"), "{text}");
        assert!(text.contains("timestamp+incrementing") && text.contains("poll_interval_ms: 2000"), "{text}");
    }

    #[test]
    fn a_connector_the_host_would_refuse_is_not_written() {
        let planned = plan(&tables(), &settings(false, "hunter2")).unwrap();
        let problems = render(&planned, &header(false)).unwrap_err();
        assert_eq!(problems.len(), planned.len(), "one per connector: {problems:?}");
        assert!(problems.iter().all(|p| p.contains("database.password") && !p.contains("hunter2")), "{problems:?}");
    }

    #[test]
    fn commands_are_quoted_so_a_shell_takes_them_back() {
        assert_eq!(shell_quote("--url"), "--url");
        assert_eq!(shell_quote("postgresql://db:5432/shop"), "postgresql://db:5432/shop");
        assert_eq!(shell_quote("${secret:db}"), "'${secret:db}'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
