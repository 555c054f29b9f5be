//! `turnpike connector generate sql`: reads the tables of a database and writes one
//! `sql-source` connector per table (or per mode), each in the most incremental mode its
//! table allows, as a file for `turnpike connector apply --file`. It needs the database, not
//! the admin API. What is decided is in `plan` (pure); what is written, and checked by the
//! host's own validation before it is, in `render`. No password is ever printed or written:
//! it is read from a variable or a file, and the file says where the host finds it.

mod plan;
mod render;
mod select;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use turnpike_config::{is_only_references, DatabaseAccess, DatabaseTls};
use turnpike_sql::{Database, DatabaseConfig, Dialect, SqlError, TableInfo, Tls, ValueKind};

use crate::output::escape;
use plan::{Grant, Kind, Settings};

#[derive(Subcommand)]
pub enum GenerateCmd {
    /// Write `sql-source` connectors for the tables of a PostgreSQL or MySQL/MariaDB database,
    /// each table read in the most incremental mode it allows.
    #[command(after_help = SQL_HELP)]
    Sql(SqlArgs),
}

const SQL_HELP: &str = "\
Modes, chosen per table (the choice and its reasons are printed on standard error):
  timestamp+incrementing  a single-column integer primary key and a NOT NULL update-time column
                          (updated_at, modified_at, last_modified, …): new and changed rows
  incrementing            the integer key alone: new rows, not changes to existing ones
  timestamp               the update-time column alone
  bulk                    neither: the whole table is read again every poll

Use:
  turnpike connector generate sql --url postgresql://db.internal:5432/shop --user turnpike \\
      --password-env SHOP_DB_PASSWORD --file shop.yaml
  turnpike connector apply --file shop.yaml      # to a running host (--api URL for another)
For `turnpike run --config`, put the items of the list under `connectors:` in its config file.

The password is read from the variable or file only to list the tables here. The file says where
the host finds it when it starts a connector: `${env:VAR}` or `${file:/path}` (so the host needs
the same variable or file), or what --password-ref says, e.g. '${secret:shop-db}' after
`turnpike secret put shop-db --from-file PATH`.

`--output`/`-o` and `--api` do not apply here: the connectors go to --file or standard output.";

// Where the tables are, who lists them, and how the connectors are named and grouped. (No
// doc comment: the `Sql` variant's is the command's help.)
#[derive(Args)]
pub struct SqlArgs {
    /// The database: `postgresql://host:5432/db` or `mysql://host:3306/db`, with no user or
    /// password in it. Written into every connector.
    #[arg(long)]
    url: String,
    /// The user to sign in as: here to list the tables, and in the connectors.
    #[arg(long)]
    user: String,
    /// Read the password from this environment variable. Default reference: `${env:VAR}`.
    #[arg(long, value_name = "VAR", conflicts_with = "password_file")]
    password_env: Option<String>,
    /// Read the password from this file (one trailing newline dropped). Default reference:
    /// `${file:/absolute/path}`.
    #[arg(long, value_name = "PATH")]
    password_file: Option<PathBuf>,
    /// What the connectors say the password is: `${secret:NAME}`, `${env:NAME}` or
    /// `${file:/path}`, resolved by the host.
    #[arg(long, value_name = "REF")]
    password_ref: Option<String>,
    /// Tables to read, as names or globs, comma-separated (`orders,customer_*,sales.*`); a
    /// name without a schema is in PostgreSQL's `public` or the URL's MySQL database.
    /// Default: every table.
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    tables: Vec<String>,
    /// TLS to the database. Default, as the host's: `require`, except for a database on this
    /// machine. Written into the connectors only when given.
    #[arg(long, value_enum)]
    tls: Option<TlsArg>,
    /// A PEM file of extra certificate authorities to trust (a private CA); written into the
    /// connectors as an absolute path, so the host needs it there too.
    #[arg(long, value_name = "PATH")]
    ca_file: Option<PathBuf>,
    /// Put before each table's name to make its topic. Default: `<database name>.`
    #[arg(long, value_name = "P")]
    topic_prefix: Option<String>,
    /// Put before each table's name (or mode) to make its connector's name. Default:
    /// `<database name>-`
    #[arg(long, value_name = "N")]
    name_prefix: Option<String>,
    /// As few connectors as possible: one per mode (and column names), instead of one per
    /// table. One per table isolates failures and keeps each connector's position small.
    #[arg(long)]
    one_connector: bool,
    /// How often each connector polls its tables, in ms (1 to 3,600,000). Default: the
    /// plugin's and the host's.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    poll_interval_ms: Option<u64>,
    /// Write the connectors to this file instead of standard output (refused if it exists).
    #[arg(short, long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// Replace --file if it exists.
    #[arg(long, requires = "file")]
    force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TlsArg {
    /// Plain TCP.
    Disable,
    /// TLS, with the server's certificate verified.
    Require,
}

impl TlsArg {
    fn config(self) -> DatabaseTls {
        match self {
            TlsArg::Disable => DatabaseTls::Disable,
            TlsArg::Require => DatabaseTls::Require,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            TlsArg::Disable => "disable",
            TlsArg::Require => "require",
        }
    }
}

pub async fn generate(cmd: GenerateCmd) -> Result<()> {
    match cmd {
        GenerateCmd::Sql(args) => sql(args).await,
    }
}

async fn sql(args: SqlArgs) -> Result<()> {
    // Checked before anything is echoed: a URL is shown and written, a password must not be.
    if select::has_userinfo(&args.url) {
        bail!("--url holds a user or a password: give the user with --user and the password with --password-env or --password-file");
    }
    let database = select::database_name(&args.url).with_context(|| format!("--url {}: names no database; end it with `/<database name>`", args.url))?.to_owned();
    if let Some(file) = &args.file {
        if !args.force && file.exists() {
            bail!("{} exists; pass --force to replace it", file.display());
        }
    }
    let password_ref = password_ref(&args)?;
    let password = read_password(&args)?;
    let topic_prefix = prefix(args.topic_prefix.as_deref(), "--topic-prefix", format!("{}.", plan::sanitize(&database)), plan::sanitize)?;
    if topic_prefix.is_empty() {
        bail!("--topic-prefix may not be empty: the sql-source names each table's topic with it (e.g. `shop.`)");
    }
    let name_prefix = prefix(args.name_prefix.as_deref(), "--name-prefix", format!("{}-", plan::connector_name(&database)), plan::connector_name)?;
    let ca_file = args.ca_file.as_deref().map(|p| absolute_text(p, "--ca-file")).transpose()?;
    let tls = effective_tls(&args.url, args.tls.map(TlsArg::config))?;

    let config = DatabaseConfig {
        url: args.url.clone(),
        user: args.user.clone(),
        password: password.clone(),
        // Listing reads the catalogue, not the tables; the globs are matched here again.
        tables: if args.tables.is_empty() { vec!["*".to_owned(), "*.*".to_owned()] } else { args.tables.clone() },
        tls: match tls {
            DatabaseTls::Disable => Tls::Disable,
            DatabaseTls::Require => Tls::Require,
        },
        ca_file: args.ca_file.clone(),
        statement_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(10),
        max_rows: 10_000,
        // A person is waiting: a short retry, then the reason.
        retry_budget: Duration::from_secs(5),
    };
    let failed = |e: SqlError| connect_error(&args, tls, password.as_deref(), &e);
    let db = Database::new(config).map_err(failed)?;
    db.check().await.map_err(failed)?;
    let infos = db.all_tables().await.map_err(failed)?;
    if infos.is_empty() {
        bail!("{} sees no tables in {}", args.user, args.url);
    }
    // As the host qualifies a bare name: PostgreSQL's `public`, MySQL's database of the URL.
    let default_schema = if matches!(db.dialect(), Dialect::Mysql) { database.as_str() } else { "public" };
    let selected = select::select(infos.into_iter().map(table).collect(), &args.tables, default_schema).map_err(|p| anyhow!(p.join("\n")))?;
    let (mut chosen, mut skipped) = (Vec::new(), Vec::new());
    for t in selected {
        match select::grantable(&t.name) {
            Ok(()) => chosen.push(t),
            Err(why) => skipped.push((t.name, why)),
        }
    }
    if chosen.is_empty() {
        let list: Vec<String> = skipped.iter().map(|(t, why)| format!("{t}: {why}")).collect();
        bail!("no table can be read: {}", list.join("; "));
    }

    let settings = Settings {
        topic_prefix,
        name_prefix,
        one_connector: args.one_connector,
        poll_interval_ms: args.poll_interval_ms,
        grant: Grant { url: args.url.clone(), user: args.user.clone(), password: password_ref.clone(), tls: args.tls.map(TlsArg::as_str), ca_file },
    };
    let planned = plan::plan(&chosen, &settings).map_err(|p| anyhow!(p.join("\n")))?;
    let command = render::command_line();
    let file = args.file.as_ref().map(|f| render::shell_quote(&f.display().to_string()));
    let header = render::Header {
        command: &command,
        url: &args.url,
        file: file.as_deref(),
        password: password_ref.as_deref(),
        one_connector: args.one_connector,
        skipped: &skipped,
    };
    let text = render::render(&planned, &header).map_err(|p| anyhow!("the host would refuse the generated connectors:\n{}", p.join("\n")))?;
    eprintln!("{}", render::summary(&planned, &skipped, args.one_connector));
    write_output(&text, args.file.as_deref(), args.force)?;
    if let Some(file) = &file {
        let tables: usize = planned.iter().map(|p| p.tables.len()).sum();
        let file = escape(file);
        eprintln!("wrote {} connectors for {tables} tables to {file}; apply them with: turnpike connector apply --file {file}", planned.len());
    }
    Ok(())
}

/// The reference the connectors carry for the password, checked to be one (never echoed
/// when it is not: it may be the password itself).
fn password_ref(args: &SqlArgs) -> Result<Option<String>> {
    let (reference, from) = match (&args.password_ref, &args.password_env, &args.password_file) {
        (Some(r), _, _) => (r.clone(), None),
        (None, Some(var), _) => (format!("${{env:{var}}}"), Some(format!("--password-env {var}"))),
        (None, None, Some(path)) => (format!("${{file:{}}}", absolute_text(path, "--password-file")?), Some(format!("--password-file {}", path.display()))),
        (None, None, None) => return Ok(None),
    };
    if !is_only_references(&reference) {
        match from {
            None => bail!("--password-ref is not a reference: write `${{secret:NAME}}` (stored with `turnpike secret put NAME`), `${{env:NAME}}` or `${{file:/path}}`, never the password itself"),
            Some(flag) => bail!("{flag}: `{reference}` is not a reference the host can resolve; give --password-ref"),
        }
    }
    Ok(Some(reference))
}

/// The password, from the variable or the file (less one trailing newline, as the host reads
/// a `${file:…}`), or none.
fn read_password(args: &SqlArgs) -> Result<Option<String>> {
    let value = match (&args.password_env, &args.password_file) {
        (Some(var), _) => match std::env::var(var) {
            Ok(v) => v,
            Err(std::env::VarError::NotPresent) => bail!("--password-env {var}: no such environment variable is set"),
            Err(std::env::VarError::NotUnicode(_)) => bail!("--password-env {var}: the variable is not UTF-8 text"),
        },
        (None, Some(path)) => {
            let mut text = std::fs::read_to_string(path).with_context(|| format!("--password-file: reading {}", path.display()))?;
            if text.ends_with('\n') {
                text.pop();
                if text.ends_with('\r') {
                    text.pop();
                }
            }
            text
        }
        (None, None) => return Ok(None),
    };
    if value.is_empty() {
        bail!("the password is empty; set it in the variable (--password-env) or the file (--password-file)");
    }
    Ok(Some(value))
}

/// `given` if it is made of the characters `clean` keeps, else why not; `default` if none.
fn prefix(given: Option<&str>, flag: &str, default: String, clean: fn(&str) -> String) -> Result<String> {
    match given {
        None => Ok(default),
        Some(p) if clean(p) == p => Ok(p.to_owned()),
        Some(p) => bail!("{flag} {p:?}: use only a-z, A-Z, 0-9, '.', '_' and '-' (and no leading '.' in connector names), e.g. {:?}", clean(p)),
    }
}

/// A path as the absolute text the host is given.
fn absolute_text(path: &Path, flag: &str) -> Result<String> {
    let absolute = std::path::absolute(path).with_context(|| format!("{flag} {}", path.display()))?;
    absolute.to_str().map(str::to_owned).with_context(|| format!("{flag} {}: the path is not UTF-8 text, which the connector config needs", path.display()))
}

/// The TLS the host would use for this URL and setting: the host's own rule, asked of the
/// host's own type so the two cannot drift.
fn effective_tls(url: &str, tls: Option<DatabaseTls>) -> Result<DatabaseTls> {
    let grant: DatabaseAccess = serde_json::from_value(serde_json::json!({ "url": url, "user": "-", "tables": [], "tls": tls })).context("--tls")?;
    Ok(grant.effective_tls())
}

/// Why the database could not be reached or listed, with the password (should any library
/// ever repeat it) blanked out.
fn connect_error(args: &SqlArgs, tls: DatabaseTls, password: Option<&str>, e: &SqlError) -> anyhow::Error {
    let mut text = e.to_string();
    if let Some(p) = password.filter(|p| p.chars().count() >= 4) {
        text = text.replace(p, "(the password)");
    }
    let hint = match e {
        SqlError::Unavailable(_) if tls == DatabaseTls::Require => {
            "\n(TLS is required for a database on another machine: pass --tls disable if the server offers none, or --ca-file for a private certificate authority)"
        }
        _ => "",
    };
    anyhow!("cannot connect to {} as {}, or list its tables: {text}{hint}", args.url, args.user)
}

fn table(info: TableInfo) -> plan::Table {
    plan::Table {
        name: info.name,
        primary_key: info.primary_key,
        columns: info
            .columns
            .into_iter()
            .map(|c| plan::Column { kind: kind_of(&c.kind), name: c.name, type_name: c.type_name, nullable: c.nullable })
            .collect(),
    }
}

fn kind_of(kind: &ValueKind) -> Kind {
    match kind {
        ValueKind::Integer => Kind::Integer,
        ValueKind::Timestamp => Kind::Timestamp,
        ValueKind::TimestampTz => Kind::TimestampTz,
        _ => Kind::Other,
    }
}

/// Writes the file, never over an existing one unless `force`.
fn write_output(text: &str, file: Option<&Path>, force: bool) -> Result<()> {
    let Some(path) = file else {
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("writing to standard output");
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        // Checked again here, atomically: the file may have appeared since the start.
        options.create_new(true);
    }
    let mut f = options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => anyhow!("{} exists; pass --force to replace it", path.display()),
        _ => anyhow!("cannot write {}: {e}", path.display()),
    })?;
    f.write_all(text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_parses_beside_the_global_flags_of_connector_commands() {
        use clap::{CommandFactory, Parser};
        crate::Cli::command().debug_assert();
        let line = ["turnpike", "connector", "generate", "sql", "--url", "postgresql://db/shop", "--user", "app", "--password-env", "PW"];
        let more = ["--tables", "orders,customer_*", "--tables", "sales.*", "-f", "shop.yaml", "-o", "json"];
        let cli = crate::Cli::try_parse_from(line.iter().chain(&more)).unwrap();
        let crate::Command::Connector { command: crate::admin_cmds::ConnectorCmd::Generate { what }, .. } = cli.command else {
            panic!("not `connector generate`");
        };
        let GenerateCmd::Sql(args) = *what;
        assert_eq!(args.tables, ["orders", "customer_*", "sales.*"]);
        assert_eq!(args.file.as_deref(), Some(Path::new("shop.yaml")));
        assert!(crate::Cli::try_parse_from(line.iter().chain(&["--password-file", "/p"])).is_err(), "one password source at most");
        assert!(crate::Cli::try_parse_from(line.iter().chain(&["--force"])).is_err(), "--force only with --file");
    }

    #[test]
    fn prefixes_given_must_already_be_clean() {
        assert_eq!(prefix(None, "--topic-prefix", "shop.".into(), plan::sanitize).unwrap(), "shop.");
        assert_eq!(prefix(Some("cdc.shop."), "--topic-prefix", "x".into(), plan::sanitize).unwrap(), "cdc.shop.");
        assert!(prefix(Some("my shop."), "--topic-prefix", "x".into(), plan::sanitize).unwrap_err().to_string().contains("\"my_shop.\""));
        assert!(prefix(Some(".hidden-"), "--name-prefix", "x".into(), plan::connector_name).is_err());
    }

    #[test]
    fn tls_defaults_as_the_host_does() {
        assert_eq!(effective_tls("postgresql://127.0.0.1:5432/shop", None).unwrap(), DatabaseTls::Disable);
        assert_eq!(effective_tls("postgresql://db.internal:5432/shop", None).unwrap(), DatabaseTls::Require);
        assert_eq!(effective_tls("postgresql://127.0.0.1:5432/shop", Some(DatabaseTls::Require)).unwrap(), DatabaseTls::Require);
    }

    #[test]
    fn an_existing_file_is_not_overwritten_without_force() {
        let dir = std::env::temp_dir().join(format!("turnpike-generate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.yaml");
        std::fs::write(&path, "kept").unwrap();
        let err = write_output("new", Some(&path), false).unwrap_err().to_string();
        assert!(err.contains("exists; pass --force"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept");
        write_output("new", Some(&path), true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
