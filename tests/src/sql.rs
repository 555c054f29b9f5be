//! SQL databases for the tests: the PostgreSQL and MariaDB servers that `tests/run.sh` starts
//! (with `tests/sql/postgres.sh` and `tests/sql/mariadb.sh`), a fresh database per test, and a
//! plain client to set tables up and read back what a connector wrote.
//!
//! Every server has one login, [`USER`] / [`PASSWORD`], checked over TCP (a wrong password
//! really fails), with every right on the databases named `tp_…` that [`TestDatabase`]s get.
//! Tests share the servers `tests/run.sh` started; a test that takes its server down starts
//! one of its own ([`DatabaseServer::start_own`]), since pausing a shared one would fail every
//! test running beside it.
//!
//! The client work runs on a small runtime of its own, like [`crate::s3`]'s, so it never waits
//! on the test's runtime (which a blocking [`crate::wait_until`] may be holding). Each call
//! opens a connection of its own: one from before an outage would be dead after it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;

/// The login every test server has (a PostgreSQL superuser; on MariaDB, rights on `tp_…`).
pub const USER: &str = "turnpike";
/// [`USER`]'s password.
pub const PASSWORD: &str = "turnpike-test";

/// Which server a database lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL.
    Postgres,
    /// MySQL, served by MariaDB.
    Mysql,
}

impl Dialect {
    /// The URL scheme: `postgresql` or `mysql`.
    pub fn scheme(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgresql",
            Dialect::Mysql => "mysql",
        }
    }

    /// The script that starts, stops, pauses and resumes this kind of server.
    fn script(self) -> PathBuf {
        let name = match self {
            Dialect::Postgres => "postgres.sh",
            Dialect::Mysql => "mariadb.sh",
        };
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sql").join(name)
    }

    fn url_var(self) -> &'static str {
        match self {
            Dialect::Postgres => "TURNPIKE_TEST_POSTGRES_URL",
            Dialect::Mysql => "TURNPIKE_TEST_MYSQL_URL",
        }
    }

    /// The shared server's URL, from its environment variable (set by `tests/run.sh`).
    fn shared_url(self) -> String {
        let var = self.url_var();
        let path = self.script();
        std::env::var(var).unwrap_or_else(|_| {
            panic!(
                "{var} is not set: run the suite with tests/run.sh, which starts PostgreSQL and MariaDB, or start the \
                 server with `{} start .cache/{}-run` and export the URL it prints",
                path.display(),
                if self == Dialect::Postgres { "pg" } else { "mariadb" },
            )
        })
    }
}

/// The shared PostgreSQL server's URL (`postgresql://turnpike@127.0.0.1:PORT/turnpike_test`),
/// from `TURNPIKE_TEST_POSTGRES_URL` (set by `tests/run.sh`); panics, saying so, when unset.
pub fn postgres_url() -> String {
    Dialect::Postgres.shared_url()
}

/// The shared MariaDB server's URL (`mysql://turnpike@127.0.0.1:PORT/turnpike_test`), from
/// `TURNPIKE_TEST_MYSQL_URL` (set by `tests/run.sh`); panics, saying so, when unset.
pub fn mysql_url() -> String {
    Dialect::Mysql.shared_url()
}

/// Where a server listens.
#[derive(Debug, Clone)]
struct Endpoint {
    dialect: Dialect,
    host: String,
    port: u16,
}

impl Endpoint {
    /// Host and port of a `scheme://[user@]host:port/db` URL, as the scripts print them.
    fn parse(dialect: Dialect, url: &str) -> Result<Self> {
        let rest = url.split_once("://").map(|(_, r)| r).with_context(|| format!("no scheme in {url:?}"))?;
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = authority.rsplit_once(':').with_context(|| format!("no port in {url:?}"))?;
        let port = port.parse::<u16>().with_context(|| format!("bad port in {url:?}"))?;
        Ok(Endpoint { dialect, host: host.to_owned(), port })
    }
}

/// A database server: the shared one, or one a test started for itself (and may pause).
#[derive(Debug)]
pub struct DatabaseServer {
    endpoint: Endpoint,
    /// The run directory of a server this handle started; `None` for the shared one.
    own: Option<PathBuf>,
}

impl DatabaseServer {
    /// The server `tests/run.sh` started; panics, saying how to start it, when it did not.
    pub fn shared(dialect: Dialect) -> Self {
        let url = dialect.shared_url();
        let endpoint = Endpoint::parse(dialect, &url).unwrap_or_else(|e| panic!("{}: {e:#}", dialect.url_var()));
        DatabaseServer { endpoint, own: None }
    }

    /// Starts a server of this test's own (about a second: a fresh cluster on a free port),
    /// stopped and deleted when the handle is dropped. Blocks until the server serves.
    pub fn start_own(dialect: Dialect) -> Result<Self> {
        let run_dir = std::env::temp_dir().join(crate::unique("turnpike-sql-server"));
        let url = script(dialect, "start", &run_dir)?;
        Ok(DatabaseServer { endpoint: Endpoint::parse(dialect, url.trim())?, own: Some(run_dir) })
    }

    /// The dialect of this server.
    pub fn dialect(&self) -> Dialect {
        self.endpoint.dialect
    }

    /// The loopback address it listens on, `127.0.0.1`.
    pub fn host(&self) -> &str {
        &self.endpoint.host
    }

    /// Its TCP port (the same after [`DatabaseServer::resume`]).
    pub fn port(&self) -> u16 {
        self.endpoint.port
    }

    /// Creates a database no other test uses, on this server.
    pub async fn create_database(&self) -> Result<TestDatabase> {
        TestDatabase::create(self.endpoint.clone()).await
    }

    /// Stops the server (its clients are disconnected), keeping data and port, and returns
    /// once it is down: `tests/sql/<postgres|mariadb>.sh pause RUN_DIR`. Only for a server
    /// started with [`DatabaseServer::start_own`]. Blocks for a fraction of a second.
    pub fn pause(&self) -> Result<()> {
        script(self.dialect(), "pause", self.own_run_dir()?).map(drop)
    }

    /// Starts a paused server again on the same port and data, and returns once it accepts
    /// logins: `tests/sql/<postgres|mariadb>.sh resume RUN_DIR`. Blocks for about a second.
    pub fn resume(&self) -> Result<()> {
        script(self.dialect(), "resume", self.own_run_dir()?).map(drop)
    }

    fn own_run_dir(&self) -> Result<&Path> {
        match &self.own {
            Some(dir) => Ok(dir.as_path()),
            None => bail!(
                "pausing the shared {:?} server would fail every test running beside this one: start one with \
                 DatabaseServer::start_own",
                self.dialect()
            ),
        }
    }
}

impl Drop for DatabaseServer {
    fn drop(&mut self) {
        if let Some(dir) = self.own.take() {
            if let Err(e) = script(self.endpoint.dialect, "stop", &dir) {
                eprintln!("stopping the test's own database server: {e:#}");
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Runs `bash tests/sql/<script> <command> <run_dir>`; its standard output, or an error with
/// what it printed on standard error.
fn script(dialect: Dialect, command: &str, run_dir: &Path) -> Result<String> {
    let path = dialect.script();
    let out = Command::new("bash")
        .arg(&path)
        .arg(command)
        .arg(run_dir)
        .output()
        .with_context(|| format!("running {}", path.display()))?;
    if !out.status.success() {
        bail!(
            "`{} {command} {}` failed ({}):\n{}",
            path.display(),
            run_dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A database of one test's own (`tp_<16 hex digits>`), on a shared server or a test's own.
/// It is not dropped afterwards: the servers, and every database in them, are deleted when
/// the run ends.
#[derive(Debug, Clone)]
pub struct TestDatabase {
    endpoint: Endpoint,
    name: String,
}

impl TestDatabase {
    /// A fresh database on the shared server of `dialect`.
    pub async fn new(dialect: Dialect) -> Result<Self> {
        DatabaseServer::shared(dialect).create_database().await
    }

    async fn create(endpoint: Endpoint) -> Result<Self> {
        let name = format!("tp_{:016x}", rand::random::<u64>());
        // PostgreSQL needs a database to log in to; MariaDB's `turnpike` may create `tp_…`.
        let admin = TestDatabase { endpoint: endpoint.clone(), name: "turnpike_test".to_owned() };
        admin.execute(&format!("CREATE DATABASE {name}")).await.with_context(|| format!("creating database {name}"))?;
        Ok(TestDatabase { endpoint, name })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its URL without credentials: `postgresql://127.0.0.1:PORT/tp_…` or
    /// `mysql://127.0.0.1:PORT/tp_…`.
    pub fn url(&self) -> String {
        let Endpoint { dialect, host, port } = &self.endpoint;
        format!("{}://{host}:{port}/{}", dialect.scheme(), self.name)
    }

    /// The login, [`USER`].
    pub fn user(&self) -> &'static str {
        USER
    }

    /// The login's password, [`PASSWORD`].
    pub fn password(&self) -> &'static str {
        PASSWORD
    }

    /// The server's dialect.
    pub fn dialect(&self) -> Dialect {
        self.endpoint.dialect
    }

    /// Runs `sql`, one statement or several separated by `;`, and drops any rows it returns.
    pub async fn execute(&self, sql: &str) -> Result<()> {
        let (endpoint, db, query) = (self.endpoint.clone(), self.name.clone(), sql.to_owned());
        on_helper(async move { run_batch(&endpoint, &db, &query).await })
            .await
            .with_context(|| format!("running `{sql}` in {}", self.name))
    }

    /// The first column of the first row `sql` returns, as an integer (a count, a maximum).
    /// An error if there is no row, the value is NULL, or it is not an integer.
    pub async fn query_i64(&self, sql: &str) -> Result<i64> {
        let (endpoint, db, query) = (self.endpoint.clone(), self.name.clone(), sql.to_owned());
        on_helper(async move { first_integer(&endpoint, &db, &query).await })
            .await
            .with_context(|| format!("running `{sql}` in {}", self.name))
    }

    /// Like [`TestDatabase::query_i64`], waiting for the answer on this thread: for the
    /// closures [`crate::wait_until`] polls.
    pub fn query_i64_blocking(&self, sql: &str) -> Result<i64> {
        let (endpoint, db, query) = (self.endpoint.clone(), self.name.clone(), sql.to_owned());
        block(async move { first_integer(&endpoint, &db, &query).await }).with_context(|| format!("running `{sql}` in {}", self.name))
    }

    /// `SELECT COUNT(*) FROM table`.
    pub async fn count(&self, table: &str) -> Result<i64> {
        self.query_i64(&format!("SELECT COUNT(*) FROM {table}")).await
    }
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs a batch of statements on a connection of its own.
async fn run_batch(endpoint: &Endpoint, db: &str, sql: &str) -> Result<()> {
    match endpoint.dialect {
        Dialect::Postgres => {
            let client = postgres(endpoint, db).await?;
            client.batch_execute(sql).await?;
        }
        Dialect::Mysql => {
            let mut conn = mysql(endpoint, db).await?;
            // Drains every result set, so an error in a later statement is reported too.
            conn.query_drop(sql).await?;
            conn.disconnect().await?;
        }
    }
    Ok(())
}

/// The first column of the first row, read as text (so any integer type will do).
async fn first_integer(endpoint: &Endpoint, db: &str, sql: &str) -> Result<i64> {
    match endpoint.dialect {
        Dialect::Postgres => {
            let client = postgres(endpoint, db).await?;
            let messages = client.simple_query(sql).await?;
            let row = messages
                .iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(row),
                    _ => None,
                })
                .context("the query returned no row")?;
            let text = row.try_get(0)?.context("the value is NULL")?;
            text.parse::<i64>().with_context(|| format!("the value {text:?} is not an integer"))
        }
        Dialect::Mysql => {
            let mut conn = mysql(endpoint, db).await?;
            let row: Option<mysql_async::Row> = conn.query_first(sql).await?;
            conn.disconnect().await?;
            let row = row.context("the query returned no row")?;
            match row.as_ref(0).context("the query returned no column")? {
                mysql_async::Value::Int(n) => Ok(*n),
                mysql_async::Value::UInt(n) => i64::try_from(*n).with_context(|| format!("{n} does not fit an i64")),
                mysql_async::Value::Bytes(bytes) => {
                    let text = String::from_utf8_lossy(bytes);
                    text.parse::<i64>().with_context(|| format!("the value {text:?} is not an integer"))
                }
                mysql_async::Value::NULL => bail!("the value is NULL"),
                other => bail!("the value {other:?} is not an integer"),
            }
        }
    }
}

/// A PostgreSQL connection as [`USER`], its connection task on the helper runtime.
async fn postgres(endpoint: &Endpoint, db: &str) -> Result<tokio_postgres::Client> {
    let mut config = tokio_postgres::Config::new();
    config.host(endpoint.host.as_str()).port(endpoint.port).user(USER).password(PASSWORD).dbname(db).connect_timeout(CONNECT_TIMEOUT);
    let (client, connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .with_context(|| format!("connecting to PostgreSQL at {}:{} as {USER}", endpoint.host, endpoint.port))?;
    tokio::spawn(async move {
        // It ends when the client is dropped; an error here surfaces in the client's calls.
        let _ = connection.await;
    });
    Ok(client)
}

/// A MariaDB connection as [`USER`] over TCP. `prefer_socket` is off: the client would
/// otherwise switch to the server's Unix socket, where `turnpike` has no login.
async fn mysql(endpoint: &Endpoint, db: &str) -> Result<mysql_async::Conn> {
    let opts = mysql_async::OptsBuilder::default().ip_or_hostname(endpoint.host.as_str()).tcp_port(endpoint.port);
    let opts = opts.user(Some(USER)).pass(Some(PASSWORD)).db_name(Some(db)).prefer_socket(false);
    match tokio::time::timeout(CONNECT_TIMEOUT, mysql_async::Conn::new(opts)).await {
        Ok(conn) => conn.with_context(|| format!("connecting to MariaDB at {}:{} as {USER}", endpoint.host, endpoint.port)),
        Err(_) => bail!("connecting to MariaDB at {}:{}: no answer in {CONNECT_TIMEOUT:?}", endpoint.host, endpoint.port),
    }
}

/// The helper runtime, where every client and connection task runs.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("sql-test-helper")
            .enable_all()
            .build()
            .expect("the SQL helper runtime")
    })
}

/// Runs `work` on the helper runtime and awaits it from any runtime.
async fn on_helper<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel();
    runtime().spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.await.expect("an SQL helper request panicked")
}

/// Runs `work` on the helper runtime and waits for it on this thread.
fn block<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime().spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv().expect("an SQL helper request panicked")
}
