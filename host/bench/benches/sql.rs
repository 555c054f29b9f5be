//! Rows per second from a PostgreSQL table into Kafka through the `sql-source` built-in, next
//! to the same `SELECT` read straight with tokio-postgres in the same run, as a ratio to it
//! (the goal is at least 0.7x).
//!
//! The baseline is what a naive native connector does: one `SELECT * FROM bench ORDER BY id`,
//! streamed, each row turned into a JSON key and value with serde_json. The `sql-source` rows
//! run the real plugin in a sandbox with a real `SqlGrant` (the host's `turnpike-sql` client):
//! `incrementing` mode, polls of `batch.max.rows` = 10,000 until every row is read; then the
//! same with each polled record produced to a real Kafka topic and every acknowledgement
//! awaited (what a source connector does before it stores its position).
//!
//! Needs PostgreSQL and, for the Kafka row, a broker:
//! `tests/sql/postgres.sh start .cache/pg-run` and `tests/kafka/kafka.sh start .cache/kafka-run`, then
//! `TURNPIKE_TEST_POSTGRES_URL=$(cat .cache/pg-run/url) TURNPIKE_TEST_BOOTSTRAP=$(cat .cache/kafka-run/bootstrap) cargo bench -p turnpike-bench --bench sql`.
//! `TURNPIKE_BENCH_SQL_ROWS` sets the table's size (default 1,000,000). The table lives in a
//! fresh database `tp_bench_<hex>`, dropped at the end. Not a test: it asserts nothing beyond
//! every row being read (and acknowledged).

use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use futures::TryStreamExt as _;
use tokio_postgres::types::{FromSql, Type};
// Linked for its global allocator only: the one the `turnpike` binary uses.
use turnpike_bench as _;
use turnpike_kafka::{Delivery, OutgoingRecord, Producer};
use turnpike_runtime::{input_len, input_record, InstanceLabels, InstanceLimits, Plugin, Runtime, SourceInstance, SqlGrant};
use turnpike_sql::{Database, DatabaseConfig, Tls};

/// The login `tests/sql/postgres.sh` creates (`tests/src/sql.rs`).
const USER: &str = "turnpike";
const PASSWORD: &str = "turnpike-test";
/// Rows per poll (`batch.max.rows`, and what the host asks for).
const BATCH: u32 = 10_000;
/// Rounds per measurement; the fastest is reported.
const ROUNDS: usize = 3;
/// Polled batches whose acknowledgements may be outstanding, as in a source connector.
const IN_FLIGHT: usize = 8;

/// One measured way of reading the table.
struct Row {
    path: &'static str,
    best: Duration,
    /// Key and value bytes of one round's records.
    bytes: usize,
}

fn main() -> anyhow::Result<()> {
    let Ok(url) = std::env::var("TURNPIKE_TEST_POSTGRES_URL") else {
        println!("TURNPIKE_TEST_POSTGRES_URL is not set: start PostgreSQL with `tests/sql/postgres.sh start .cache/pg-run` and set it to the URL printed (also in .cache/pg-run/url)");
        return Ok(());
    };
    let bootstrap = std::env::var("TURNPIKE_TEST_BOOTSTRAP").ok();
    let rows: u32 = std::env::var("TURNPIKE_BENCH_SQL_ROWS").ok().and_then(|v| v.parse::<u32>().ok()).filter(|&n| n > 0).unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run(&url, bootstrap.as_deref(), rows))
}

async fn run(url: &str, bootstrap: Option<&str>, rows: u32) -> anyhow::Result<()> {
    let server = Server::parse(url)?;
    let admin = server.connect(&server.admin_db).await?;
    let db = format!("tp_bench_{:016x}", RandomState::new().hash_one(Instant::now()));
    admin.batch_execute(&format!("CREATE DATABASE {db}")).await.with_context(|| format!("creating database {db}"))?;
    let client = server.connect(&db).await?;
    let started = Instant::now();
    client.batch_execute(&fill(rows)).await.context("filling the table")?;
    // Sets hint bits and statistics now, so the first measured round does not pay for them.
    client.batch_execute("VACUUM ANALYZE bench").await?;
    println!("filled {db}.bench with {rows} rows in {:.1} s", started.elapsed().as_secs_f64());

    let database = Arc::new(Database::new(DatabaseConfig {
        url: format!("postgresql://{}:{}/{db}", server.host, server.port),
        user: USER.to_owned(),
        password: Some(PASSWORD.to_owned()),
        tables: vec!["bench".to_owned()],
        tls: Tls::Disable,
        ca_file: None,
        statement_timeout: Duration::from_secs(60),
        connect_timeout: Duration::from_secs(10),
        max_rows: BATCH,
        retry_budget: Duration::from_secs(5),
    })?);
    database.check().await?;
    let grant = SqlGrant::new(database.clone(), Duration::from_secs(120));
    // Compiled once, outside the rounds: a connector compiles its plugin once too.
    let wasm = turnpike_builtins::get("sql-source").ok_or_else(|| anyhow::anyhow!("sql-source is built in"))?.wasm;
    let plugin = Runtime::new()?.load(wasm)?;

    // The baseline comes first: every other row is reported relative to it.
    let (best, bytes) = best_of(|| direct(&client, rows, None)).await?;
    let mut table = vec![Row { path: "tokio-postgres SELECT, rows to JSON (baseline)", best, bytes }];
    let (best, bytes) = best_of(|| through_source(&plugin, &grant, rows, None)).await?;
    table.push(Row { path: "sql-source through the runtime", best, bytes });
    match bootstrap {
        Some(bootstrap) => {
            let settings = [("bootstrap.servers".to_owned(), bootstrap.to_owned())];
            let producer = Producer::new(&settings)?;
            let topic = format!("bench-sql-{:016x}", RandomState::new().hash_one(Instant::now()));
            // The broker creates the topic on first use: done before the rounds, not in them.
            let warm_up = OutgoingRecord { topic: &topic, key: None, value: Some(b"warm-up"), timestamp: None };
            producer.send(warm_up, []).await?.wait().await.context("producing a first record (is the broker at TURNPIKE_TEST_BOOTSTRAP up?)")?;
            let kafka = Kafka { producer: &producer, topic: &topic };
            // The same Kafka work behind both paths: what remains between them is the plugin.
            let (best, bytes) = best_of(|| direct(&client, rows, Some(kafka))).await?;
            table.push(Row { path: "tokio-postgres SELECT, rows to JSON, into Kafka", best, bytes });
            let (best, bytes) = best_of(|| through_source(&plugin, &grant, rows, Some(kafka))).await?;
            table.push(Row { path: "sql-source through the runtime, into Kafka", best, bytes });
        }
        None => println!(
            "TURNPIKE_TEST_BOOTSTRAP is not set, so the Kafka row is left out: start a broker with `tests/kafka/kafka.sh start .cache/kafka-run` and set it to the address printed (also in .cache/kafka-run/bootstrap)"
        ),
    }

    println!("\nSQL source throughput, {rows} rows of bench(id, name, amount, updated_at), best of {ROUNDS} rounds, PostgreSQL at {}:{}; polls of {BATCH}", server.host, server.port);
    println!("{:<46} {:>9} {:>8} {:>11} {:>10} {:>12}", "path", "rows", "best s", "rows/s", "bytes/row", "vs baseline");
    println!("(the Kafka rows are compared with the baseline into Kafka)");
    // Each path against the baseline that does the same work: with Kafka, the one into Kafka.
    let (plain, into_kafka) = (table[0].best.as_secs_f64(), table.get(2).map(|r| r.best.as_secs_f64()));
    for row in &table {
        let secs = row.best.as_secs_f64();
        let baseline = if row.path.ends_with("into Kafka") { into_kafka.unwrap_or(plain) } else { plain };
        let per_row = row.bytes as f64 / f64::from(rows);
        println!("{:<46} {:>9} {:>8.2} {:>11.0} {:>10.1} {:>11.2}x", row.path, rows, secs, f64::from(rows) / secs, per_row, baseline / secs);
    }
    println!("bytes/row: the JSON key and value of each record; goal for sql-source: at least 0.70x the baseline");
    println!("database reconnects during the run: {}", database.retries());

    drop(client);
    if let Err(e) = admin.batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)")).await {
        println!("could not drop {db}: {e}");
    }
    Ok(())
}

/// The table, filled with one statement: every tenth name NULL, amounts with cents,
/// timestamps with milliseconds.
fn fill(rows: u32) -> String {
    format!(
        "CREATE TABLE bench (id BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(12,2), updated_at TIMESTAMPTZ NOT NULL);
         INSERT INTO bench (id, name, amount, updated_at)
         SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'customer ' || i END, (i % 10000000) / 100.0,
                TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1001 milliseconds'
         FROM generate_series(1, {rows}) AS s(i)"
    )
}

/// The fastest of [`ROUNDS`] runs of `round`, and the bytes the last one read.
async fn best_of<F, Fut>(mut round: F) -> anyhow::Result<(Duration, usize)>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    let (mut best, mut bytes) = (Duration::MAX, 0);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        bytes = round().await?;
        best = best.min(start.elapsed());
    }
    Ok((best, bytes))
}

/// The baseline: the whole table in one streamed query, each row made a JSON key and value;
/// with `kafka`, produced, acknowledged in the background per `BATCH` rows like the source.
async fn direct(client: &tokio_postgres::Client, rows: u32, kafka: Option<Kafka<'_>>) -> anyhow::Result<usize> {
    let (tx, acks) = acknowledger();
    let mut deliveries = Vec::new();
    let stream = client.query_raw("SELECT * FROM bench ORDER BY id", std::iter::empty::<i64>()).await?;
    let mut stream = std::pin::pin!(stream);
    let (mut read, mut bytes) = (0u32, 0usize);
    while let Some(row) = stream.try_next().await? {
        let id: i64 = row.try_get(0)?;
        let name: Option<&str> = row.try_get(1)?;
        let amount: Option<Numeric> = row.try_get(2)?;
        let updated_at: SystemTime = row.try_get(3)?;
        let updated_at = iso_utc(updated_at)?;
        let amount = amount.map(|a| a.0);
        let value = serde_json::json!({ "id": id, "name": name, "amount": amount, "updated_at": updated_at }).to_string();
        let key = serde_json::json!({ "id": id }).to_string();
        bytes += key.len() + value.len();
        read += 1;
        if let Some(kafka) = kafka {
            let out = OutgoingRecord { topic: kafka.topic, key: Some(key.as_bytes()), value: Some(value.as_bytes()), timestamp: None };
            deliveries.push(kafka.producer.send(out, []).await?);
            if deliveries.len() == BATCH as usize && tx.send(std::mem::take(&mut deliveries)).await.is_err() {
                break;
            }
        }
    }
    if !deliveries.is_empty() {
        let _ = tx.send(deliveries).await;
    }
    drop(tx);
    let acknowledged = acks.await??;
    anyhow::ensure!(read == rows, "the SELECT returned {read} rows, not {rows}");
    if kafka.is_some() {
        anyhow::ensure!(acknowledged == read as usize, "Kafka acknowledged {acknowledged} of {read} records");
    }
    Ok(bytes)
}

/// A task that waits for batches of deliveries in order, as a connector's committer does
/// (at most `IN_FLIGHT` batches queued), and counts the acknowledged records.
fn acknowledger() -> (tokio::sync::mpsc::Sender<Vec<Delivery>>, tokio::task::JoinHandle<Result<usize, turnpike_kafka::KafkaError>>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<Delivery>>(IN_FLIGHT);
    let acks = tokio::spawn(async move {
        let mut acknowledged = 0usize;
        while let Some(batch) = rx.recv().await {
            for delivery in batch {
                delivery.wait().await?;
                acknowledged += 1;
            }
        }
        Ok(acknowledged)
    });
    (tx, acks)
}

/// Where polled records go in the Kafka row.
#[derive(Clone, Copy)]
struct Kafka<'a> {
    producer: &'a Producer,
    topic: &'a str,
}

/// The table through the `sql-source` plugin, from its first row (no stored position), poll
/// after poll until every row is read; with `kafka`, each poll's records produced and every
/// acknowledgement awaited, batches acknowledged in the background as a connector does.
async fn through_source(plugin: &Plugin, grant: &SqlGrant, rows: u32, kafka: Option<Kafka<'_>>) -> anyhow::Result<usize> {
    let config = serde_json::json!({
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "table.whitelist": "bench",
        "batch.max.rows": BATCH,
        "poll.interval.ms": 60_000,
        "table.poll.interval.ms": 0,
    })
    .to_string();
    let limits = InstanceLimits {
        sql: Some(grant.clone()),
        memory_bytes: 256 << 20,
        batch_timeout: Duration::from_secs(30),
        max_output_records: BATCH as usize,
        ..InstanceLimits::default()
    };
    let labels = InstanceLabels { connector: "bench".into(), plugin: "sql-source".into() };
    let output_topic = kafka.map_or("bench", |k| k.topic);
    let mut source = SourceInstance::create(plugin, &config, None, output_topic, labels, limits).await?;

    let (tx, acks) = acknowledger();
    let (mut read, mut bytes) = (0usize, 0usize);
    while read < rows as usize {
        let polled = source.poll(BATCH).await?;
        let n = input_len(&polled.batch);
        anyhow::ensure!(n > 0, "sql-source returned nothing after {read} of {rows} rows");
        if let Some(e) = polled.errors.first() {
            anyhow::bail!("sql-source could not read record {}: {}", e.input, e.error.message);
        }
        let mut deliveries = Vec::with_capacity(if kafka.is_some() { n } else { 0 });
        for i in 0..n {
            let (record, headers) = input_record(&polled.batch, i);
            bytes += record.key.map_or(0, <[u8]>::len) + record.value.map_or(0, <[u8]>::len);
            if let Some(kafka) = kafka {
                let out = OutgoingRecord { topic: record.topic, key: record.key, value: record.value, timestamp: record.timestamp };
                deliveries.push(kafka.producer.send(out, headers).await?);
            }
        }
        read += n;
        // A closed channel means the acknowledgement task stopped at a failed delivery: its
        // error is reported below.
        if kafka.is_some() && tx.send(deliveries).await.is_err() {
            break;
        }
    }
    drop(tx);
    let acknowledged = acks.await??;
    anyhow::ensure!(read == rows as usize, "sql-source returned {read} rows, not {rows}");
    if kafka.is_some() {
        anyhow::ensure!(acknowledged == read, "Kafka acknowledged {acknowledged} of {read} records");
    }
    Ok(bytes)
}

/// NUMERIC as text with its exact digits (`12.50`), decoded from the binary format (base-10000
/// digit groups, a weight, a sign, the display scale) as a native connector must: tokio-postgres
/// has no NUMERIC type of its own.
struct Numeric(String);

impl<'a> FromSql<'a> for Numeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let word = |i: usize| raw.get(2 * i..2 * i + 2).map(|w| u16::from_be_bytes([w[0], w[1]]));
        let (Some(count), Some(weight), Some(sign), Some(scale)) = (word(0), word(1), word(2), word(3)) else {
            return Err("a numeric has an 8-byte header".into());
        };
        let (count, weight, scale) = (usize::from(count), i32::from(weight as i16), usize::from(scale));
        match sign {
            0 | 0x4000 => {}
            0xC000 => return Ok(Numeric("NaN".to_owned())),
            other => return Err(format!("numeric sign {other:#06x} is not a finite number").into()),
        }
        // Group `i` is worth 10000^(weight - i); groups past `count` are zero.
        let group = |i: i32| usize::try_from(i).ok().filter(|&i| i < count).and_then(|i| word(4 + i)).unwrap_or(0);
        let mut out = String::with_capacity(16);
        if sign == 0x4000 {
            out.push('-');
        }
        if weight < 0 {
            out.push('0');
        }
        for i in 0..=weight {
            let _ = if i == 0 { write!(out, "{}", group(i)) } else { write!(out, "{:04}", group(i)) };
        }
        if scale > 0 {
            let mut fraction = String::with_capacity(scale + 4);
            let mut i = weight + 1;
            while fraction.len() < scale {
                let _ = write!(fraction, "{:04}", group(i));
                i += 1;
            }
            fraction.truncate(scale);
            out.push('.');
            out.push_str(&fraction);
        }
        Ok(Numeric(out))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

/// `2026-01-01T00:16:41.001Z`: ISO-8601 in UTC, the fraction without trailing zeros, as
/// `sql-source` writes timestamps.
fn iso_utc(time: SystemTime) -> anyhow::Result<String> {
    let since = time.duration_since(UNIX_EPOCH).context("a timestamp before 1970")?;
    let secs = i64::try_from(since.as_secs())?;
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's `civil_from_days`).
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hour, minute, second) = (of_day / 3_600, of_day / 60 % 60, of_day % 60);
    let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    let micros = since.subsec_micros();
    if micros > 0 {
        let digits = format!("{micros:06}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out.push('Z');
    Ok(out)
}

/// The PostgreSQL server of `TURNPIKE_TEST_POSTGRES_URL`.
struct Server {
    host: String,
    port: u16,
    /// The database the URL names, to log in to while creating the bench's own.
    admin_db: String,
}

impl Server {
    /// Reads `postgresql://turnpike@127.0.0.1:PORT/turnpike_test`, as `postgres.sh` prints it.
    fn parse(url: &str) -> anyhow::Result<Self> {
        let url = url.trim();
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (authority, admin_db) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = authority.rsplit_once(':').with_context(|| format!("TURNPIKE_TEST_POSTGRES_URL {url:?} has no port"))?;
        let port = port.parse::<u16>().with_context(|| format!("TURNPIKE_TEST_POSTGRES_URL {url:?} has a bad port"))?;
        let admin_db = if admin_db.is_empty() { "turnpike_test" } else { admin_db };
        Ok(Server { host: host.to_owned(), port, admin_db: admin_db.to_owned() })
    }

    /// A connection to `db` as [`USER`], its connection task on the runtime.
    async fn connect(&self, db: &str) -> anyhow::Result<tokio_postgres::Client> {
        let mut config = tokio_postgres::Config::new();
        config.host(self.host.as_str()).port(self.port).user(USER).password(PASSWORD).dbname(db).connect_timeout(Duration::from_secs(10));
        let (client, connection) = config
            .connect(tokio_postgres::NoTls)
            .await
            .with_context(|| format!("connecting to PostgreSQL at {}:{} as {USER}", self.host, self.port))?;
        tokio::spawn(async move {
            // It ends when the client is dropped; an error here surfaces in the client's calls.
            let _ = connection.await;
        });
        Ok(client)
    }
}
