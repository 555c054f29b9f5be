//! Confluent's S3 sink (`io.confluent.connect.s3.S3SinkConnector`) as the `s3-sink` plugin
//! and the connector's `storage:` grant. s3-sink keeps Confluent's option names; only what it
//! offers is carried over, and only where it has an effect (s3-sink refuses an option that
//! the chosen partitioner or format does not use).

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, list, literal, Ctx};

pub(crate) const CLASS: &str = "io.confluent.connect.s3.S3SinkConnector";

const PARTITIONERS: &str = "io.confluent.connect.storage.partitioner.";

/// The `sink:` step and the `storage:` grant (none without a bucket).
pub(crate) struct Sink {
    pub(crate) step: Value,
    pub(crate) storage: Option<Value>,
}

/// The plugin config being written.
struct Config(Map<String, Value>);

impl Config {
    fn set(&mut self, ctx: &mut Ctx, option: &str, value: Value) {
        self.0.insert(option.to_owned(), value);
        ctx.map(option, format!("sink.config.{option}"));
    }

    /// A whole-number option copied as a number when `ok` accepts it.
    fn number(&mut self, ctx: &mut Ctx, option: &str, ok: impl Fn(i64) -> bool, rule: &str) {
        let Some(text) = ctx.value(option) else { return };
        match int(&text).filter(|n| ok(*n)) {
            Some(n) => self.set(ctx, option, json!(n)),
            None => ctx.skip(option, format!("{text:?} is not {rule}")),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Bytes,
    Parquet,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Partitioner {
    Default,
    Field,
    Time,
}

pub(crate) fn sink(ctx: &mut Ctx) -> Sink {
    let mut c = Config(Map::new());
    ctx.map("storage.class", "— s3-sink is the storage");
    if let Some(dir) = ctx.value("topics.dir") {
        c.set(ctx, "topics.dir", json!(literal(&dir)));
    }
    c.number(ctx, "flush.size", |n| (1..=10_000_000).contains(&n), "a record count from 1 to 10000000");
    c.number(ctx, "rotate.interval.ms", |n| n == -1 || n > 0, "a number of milliseconds (or -1)");
    c.number(ctx, "rotate.schedule.interval.ms", |n| n == -1 || n > 0, "a number of milliseconds (or -1)");
    c.number(ctx, "filename.offset.zero.pad.width", |n| (0..=20).contains(&n), "a width from 0 to 20");
    let format = format(ctx, &mut c);
    let partitioner = partitioner(ctx, &mut c);
    let scheduled = ctx.value("rotate.schedule.interval.ms").and_then(|v| int(&v)).is_some_and(|n| n > 0);
    if partitioner == Partitioner::Time || scheduled {
        timezone(ctx, &mut c);
    } else {
        ctx.skip("timezone", "only used by time-based partitioners and rotate.schedule.interval.ms; Kafka Connect ignored it here");
    }
    match ctx.value("behavior.on.null.values").map(|v| v.to_ascii_lowercase()).as_deref() {
        Some(v @ ("ignore" | "fail")) => c.set(ctx, "behavior.on.null.values", json!(v)),
        Some("write") => ctx.skip("behavior.on.null.values", "write is not supported: s3-sink skips tombstones (ignore) or rejects them (fail)"),
        Some(other) => ctx.skip("behavior.on.null.values", format!("{other:?} is not ignore, fail or write")),
        None => {
            c.0.insert("behavior.on.null.values".into(), json!("fail"));
            ctx.note("behavior.on.null.values is written as fail, Confluent's default (s3-sink's own default is ignore, which skips tombstones): change it to ignore if tombstones should not stop the connector");
        }
    }
    for option in ["store.kafka.keys", "store.kafka.headers"] {
        let Some(text) = ctx.value(option) else { continue };
        match boolean(&text) {
            Some(true) if format == Format::Bytes => ctx.skip(option, "s3-sink cannot store keys or headers with format bytes (the value bytes are written as they are)"),
            Some(on) => {
                c.set(ctx, option, json!(on));
                if on {
                    ctx.note(format!("{option}: s3-sink writes them into each JSON line (or Parquet row) beside the value, not into separate files as Confluent does"));
                }
            }
            None => ctx.skip(option, format!("{text:?} is not true or false")),
        }
    }
    for option in ["keys.format.class", "headers.format.class"] {
        ctx.skip(option, "s3-sink writes keys and headers into the value's own JSON line or Parquet row (store.kafka.keys / store.kafka.headers), not into files of their own");
    }
    for (option, default) in [("directory.delim", "/"), ("file.delim", "+")] {
        match ctx.raw(option) {
            Some(v) if v == default => ctx.map(option, format!("— s3-sink always uses {default:?}")),
            Some(_) => ctx.skip(option, format!("s3-sink always uses {default:?}; object keys will differ from Kafka Connect's")),
            None => {}
        }
    }
    let storage = storage(ctx);
    Sink { step: json!({"plugin": "s3-sink", "config": Value::Object(c.0)}), storage }
}

fn format(ctx: &mut Ctx, c: &mut Config) -> Format {
    let class = ctx.value("format.class");
    let format = match class.as_deref() {
        None => Format::Json,
        Some(class) => {
            let short = class.strip_prefix("io.confluent.connect.s3.format.").unwrap_or(class);
            match short.to_ascii_lowercase().as_str() {
                "json.jsonformat" | "json" => Some(Format::Json),
                "bytearray.bytearrayformat" | "bytes" => Some(Format::Bytes),
                "parquet.parquetformat" | "parquet" => Some(Format::Parquet),
                "avro.avroformat" => {
                    ctx.skip("format.class", "Avro is not supported by s3-sink; objects are written as JSON lines (its default format) instead: set format.class to parquet for a columnar format");
                    ctx.note("objects are JSON lines, not Avro: readers of the bucket must change too");
                    None
                }
                _ => {
                    ctx.skip("format.class", format!("{class} is not a format s3-sink writes (json, bytes, parquet); objects are written as JSON lines"));
                    None
                }
            }
            .unwrap_or(Format::Json)
        }
    };
    if class.is_some() && !ctx.is_handled("format.class") {
        let name = match format {
            Format::Json => "json",
            Format::Bytes => "bytes",
            Format::Parquet => "parquet",
        };
        c.set(ctx, "format.class", json!(name));
    }
    const BYTES_ONLY: &str = "only used with format.class ByteArrayFormat; Kafka Connect ignored it here";
    const PARQUET_ONLY: &str = "only used with format.class ParquetFormat; Kafka Connect ignored it here";
    match (format, ctx.raw("format.bytearray.separator")) {
        (Format::Bytes, Some(sep)) => c.set(ctx, "format.bytearray.separator", json!(literal(&sep))),
        (_, Some(_)) => ctx.skip("format.bytearray.separator", BYTES_ONLY),
        _ => {}
    }
    ctx.skip("format.bytearray.extension", "s3-sink names bytes objects .bin (.bin.gz when compressed)");
    match (format, ctx.value("parquet.codec").map(|v| v.to_ascii_lowercase())) {
        (Format::Parquet, Some(codec)) if ["snappy", "none", "uncompressed"].contains(&codec.as_str()) => {
            c.set(ctx, "parquet.codec", json!(if codec == "snappy" { "snappy" } else { "none" }));
        }
        (Format::Parquet, Some(codec)) => ctx.skip("parquet.codec", format!("{codec:?} is not supported: s3-sink writes Parquet with snappy (its default) or none")),
        (_, Some(_)) => ctx.skip("parquet.codec", PARQUET_ONLY),
        _ => {}
    }
    match ctx.value("s3.compression.type").map(|v| v.to_ascii_lowercase()).as_deref() {
        Some("none") => c.set(ctx, "s3.compression.type", json!("none")),
        Some("gzip") if format == Format::Parquet => ctx.skip("s3.compression.type", "Parquet objects compress inside the file (parquet.codec); gzip is for json and bytes"),
        Some("gzip") => c.set(ctx, "s3.compression.type", json!("gzip")),
        Some(other) => ctx.skip("s3.compression.type", format!("{other:?} is not supported: s3-sink compresses with gzip or not at all")),
        None => {}
    }
    ctx.skip("s3.compression.level", "s3-sink's gzip level is fixed");
    ctx.skip("avro.codec", "s3-sink does not write Avro");
    format
}

fn partitioner(ctx: &mut Ctx, c: &mut Config) -> Partitioner {
    const TIME_ONLY: &str = "only used by time-based partitioners; Kafka Connect ignored it here";
    let class = ctx.value("partitioner.class");
    let short = class.as_deref().map(|cl| cl.strip_prefix(PARTITIONERS).unwrap_or(cl).to_owned());
    let (kind, preset) = match short.as_deref() {
        None | Some("DefaultPartitioner") => (Partitioner::Default, None),
        Some("FieldPartitioner") => (Partitioner::Field, None),
        Some("TimeBasedPartitioner") => (Partitioner::Time, None),
        Some("DailyPartitioner") => (Partitioner::Time, Some(("'year'=YYYY/'month'=MM/'day'=dd", 86_400_000))),
        Some("HourlyPartitioner") => (Partitioner::Time, Some(("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000))),
        Some(other) => {
            ctx.skip("partitioner.class", format!("{other} is not a partitioner s3-sink has (default, field, time); objects are partitioned by Kafka partition (the default)"));
            (Partitioner::Default, None)
        }
    };
    // A time partitioner needs a path format s3-sink can write; without one it falls back.
    let path_format = match preset {
        Some((format, _)) => Some(format.to_owned()),
        None => ctx.value("path.format"),
    };
    let kind = match (kind, path_format.as_deref().map(check_path_format)) {
        (Partitioner::Time, Some(Err(why))) => {
            ctx.skip("partitioner.class", "its path.format cannot be written by s3-sink (below); objects are partitioned by Kafka partition (the default) instead");
            ctx.skip("path.format", why);
            Partitioner::Default
        }
        (Partitioner::Time, None) => {
            ctx.skip("partitioner.class", "TimeBasedPartitioner without path.format; objects are partitioned by Kafka partition (the default) instead");
            Partitioner::Default
        }
        (k, _) => k,
    };
    if let Some(short) = &short {
        if !ctx.is_handled("partitioner.class") {
            let name = match kind {
                Partitioner::Default => "default",
                Partitioner::Field => "field",
                Partitioner::Time => "time",
            };
            c.set(ctx, "partitioner.class", json!(name));
            if preset.is_some() {
                ctx.note(format!("{short} became partitioner.class time with its path.format and partition.duration.ms written out"));
            }
        }
    }
    match kind {
        Partitioner::Field => match ctx.value("partition.field.name").map(|v| list(&v)) {
            Some(fields) if !fields.is_empty() => c.set(ctx, "partition.field.name", json!(fields)),
            _ => ctx.note("FieldPartitioner needs partition.field.name: add it to the sink config before applying"),
        },
        _ => ctx.skip("partition.field.name", "only used by FieldPartitioner; Kafka Connect ignored it here"),
    }
    if kind == Partitioner::Time {
        let format = path_format.unwrap_or_default();
        match preset {
            Some((_, duration)) => {
                c.0.insert("path.format".into(), json!(format));
                c.0.insert("partition.duration.ms".into(), json!(duration));
                for option in ["path.format", "partition.duration.ms"] {
                    ctx.skip(option, "the Daily/HourlyPartitioner sets its own; Kafka Connect ignored it here");
                }
            }
            None => {
                c.set(ctx, "path.format", json!(literal(&format)));
                match ctx.value("partition.duration.ms").and_then(|v| int(&v)).filter(|n| *n > 0) {
                    Some(n) => c.set(ctx, "partition.duration.ms", json!(n)),
                    None => {
                        ctx.skip("partition.duration.ms", "not a number of milliseconds above 0");
                        ctx.note("a time partitioner needs partition.duration.ms (3600000 for hourly folders): add it to the sink config before applying");
                    }
                }
            }
        }
        extractor(ctx, c);
    } else {
        for option in ["path.format", "partition.duration.ms", "timestamp.extractor", "timestamp.field"] {
            ctx.skip(option, TIME_ONLY);
        }
    }
    ctx.skip("locale", "s3-sink's path.format writes numbers only, which no locale changes");
    kind
}

fn extractor(ctx: &mut Ctx, c: &mut Config) {
    let given = ctx.value("timestamp.extractor");
    let kind = match given.as_deref() {
        None => {
            c.0.insert("timestamp.extractor".into(), json!("Wallclock"));
            ctx.note(
                "timestamp.extractor is written as Wallclock, Confluent's default (s3-sink's own default is Record): Record, the Kafka timestamp, puts a record in the same folder every time it is read",
            );
            "Wallclock"
        }
        Some(e) if e.eq_ignore_ascii_case("Wallclock") => "Wallclock",
        Some(e) if e.eq_ignore_ascii_case("Record") => "Record",
        Some(e) if e.eq_ignore_ascii_case("RecordField") => "RecordField",
        Some(other) => {
            ctx.skip("timestamp.extractor", format!("{other} is not an extractor s3-sink has (Record, RecordField, Wallclock); s3-sink uses Record, the Kafka timestamp"));
            "Record"
        }
    };
    if given.is_some() && !ctx.is_handled("timestamp.extractor") {
        c.set(ctx, "timestamp.extractor", json!(kind));
    }
    match (kind, ctx.value("timestamp.field")) {
        ("RecordField", Some(field)) => c.set(ctx, "timestamp.field", json!(literal(&field))),
        ("RecordField", None) => ctx.note("timestamp.extractor RecordField needs timestamp.field: add it to the sink config before applying"),
        _ => ctx.skip("timestamp.field", "only used with timestamp.extractor RecordField; Kafka Connect ignored it here"),
    }
}

/// `UTC` or a fixed offset, which is all s3-sink's `timezone` takes.
fn timezone(ctx: &mut Ctx, c: &mut Config) {
    let Some(zone) = ctx.value("timezone") else { return };
    let utc = ["UTC", "GMT", "Z", "Etc/UTC", "Etc/GMT", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu", "GMT0", "Etc/GMT0"];
    let offset = zone.strip_prefix("UTC").or_else(|| zone.strip_prefix("GMT")).unwrap_or(&zone);
    let fixed = match offset.as_bytes() {
        [s @ (b'+' | b'-'), h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => {
            Some(format!("{}{}{}:{}{}", *s as char, *h1 as char, *h2 as char, *m1 as char, *m2 as char))
        }
        [s @ (b'+' | b'-'), h1, h2, m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => Some(format!("{}{}{}:{}{}", *s as char, *h1 as char, *h2 as char, *m1 as char, *m2 as char)),
        [s @ (b'+' | b'-'), h1, h2] if h1.is_ascii_digit() && h2.is_ascii_digit() => Some(format!("{}{}{}:00", *s as char, *h1 as char, *h2 as char)),
        [s @ (b'+' | b'-'), h] if h.is_ascii_digit() => Some(format!("{}0{}:00", *s as char, *h as char)),
        _ => None,
    };
    if utc.iter().any(|u| u.eq_ignore_ascii_case(&zone)) {
        c.set(ctx, "timezone", json!("UTC"));
    } else if let Some(fixed) = fixed {
        c.set(ctx, "timezone", json!(fixed));
    } else {
        ctx.skip("timezone", format!("{zone:?} is not supported: s3-sink takes UTC or a fixed offset like +02:00 (no daylight-saving rules); paths and schedules are in UTC"));
        ctx.note(format!("time folders and scheduled rotation are in UTC instead of {zone}: folder names and boundaries shift by the zone's offset"));
    }
}

/// Why s3-sink cannot write `format` (its path.format takes YYYY, yyyy, MM, dd, HH, mm, ss
/// and quoted text), if it cannot.
fn check_path_format(format: &str) -> Result<(), String> {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            loop {
                match chars.next() {
                    Some('\'') if chars.peek() == Some(&'\'') => {
                        chars.next();
                    }
                    Some('\'') => break,
                    Some(_) => {}
                    None => return Err(format!("{format:?} has a quote that is not closed")),
                }
            }
        } else if c.is_ascii_alphabetic() {
            let mut run = c.to_string();
            while chars.peek() == Some(&c) {
                run.push(c);
                chars.next();
            }
            if !["YYYY", "yyyy", "MM", "dd", "HH", "mm", "ss"].contains(&run.as_str()) {
                return Err(format!("`{run}` in {format:?} is not supported: s3-sink's path.format takes YYYY, MM, dd, HH, mm, ss and text in single quotes"));
            }
        }
    }
    Ok(())
}

/// `storage:` from the bucket, region, endpoint and credentials.
fn storage(ctx: &mut Ctx) -> Option<Value> {
    let Some(bucket) = ctx.value("s3.bucket.name") else {
        ctx.note("the config names no s3.bucket.name: add `storage: {bucket: …}` to the connector before applying (s3-sink writes nothing without it)");
        return None;
    };
    let mut s = Map::new();
    s.insert("bucket".into(), json!(bucket));
    ctx.map("s3.bucket.name", "storage.bucket");
    match ctx.value("s3.region") {
        Some(region) => {
            s.insert("region".into(), json!(region));
            ctx.map("s3.region", "storage.region");
        }
        None => {
            s.insert("region".into(), json!("us-west-2"));
            ctx.note("storage.region is us-west-2, Confluent's default, since s3.region was not given");
        }
    }
    let mut endpoint = None;
    if let Some(url) = ctx.value("store.url") {
        let authority = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).map(|rest| rest.trim_end_matches('/'));
        match authority {
            Some(a) if !a.is_empty() && !a.contains(['/', '?', '#', '@']) => {
                let url = url.trim_end_matches('/').to_owned();
                s.insert("endpoint".into(), json!(url));
                ctx.map("store.url", "storage.endpoint");
                endpoint = Some(url);
            }
            _ => ctx.skip("store.url", "not an http:// or https:// URL of a host and port only; write storage.endpoint by hand"),
        }
    }
    match ctx.value("s3.path.style.access.enabled").as_deref().map(boolean) {
        Some(Some(on)) => {
            if on {
                s.insert("path_style".into(), json!(true));
            }
            ctx.map("s3.path.style.access.enabled", "storage.path_style");
        }
        Some(None) => ctx.skip("s3.path.style.access.enabled", "not true or false"),
        None if endpoint.is_some() => {
            s.insert("path_style".into(), json!(true));
            ctx.note("storage.path_style is true, Confluent's default, for the store at store.url");
        }
        None => {}
    }
    credentials(ctx, &mut s, endpoint.as_deref());
    if let Some(text) = ctx.value("s3.part.size") {
        const MIB: i64 = 1 << 20;
        match int(&text).map(|b| (b + MIB - 1) / MIB).filter(|m| (5..=512).contains(m)) {
            Some(mib) => {
                s.insert("part_size_mib".into(), json!(mib));
                ctx.map("s3.part.size", "storage.part_size_mib");
                if 2 * mib > 64 {
                    s.insert("max_buffered_mib".into(), json!(2 * mib));
                    ctx.note(format!("storage.max_buffered_mib is {}, two parts of {mib} MiB, the least the host allows", 2 * mib));
                }
            }
            None => ctx.skip("s3.part.size", "Turnpike's part size is 5 to 512 MiB (storage.part_size_mib); the default, 8 MiB, applies"),
        }
    }
    Some(Value::Object(s))
}

fn credentials(ctx: &mut Ctx, s: &mut Map<String, Value>, endpoint: Option<&str>) {
    const ID: &str = "aws.access.key.id";
    const SECRET: &str = "aws.secret.access.key";
    const PROVIDER: &str = "s3.credentials.provider.class";
    let id = ctx.value(ID);
    let secret = ctx.value(SECRET);
    match (id, secret) {
        (Some(id), Some(secret)) => {
            let id_ref = ctx.credential(ID, &id, "aws-access-key-id", "the AWS access key id");
            let secret_ref = ctx.credential(SECRET, &secret, "aws-secret-access-key", "the AWS secret access key");
            s.insert("credentials".into(), json!({"access_key_id": id_ref, "secret_access_key": secret_ref}));
            ctx.map(ID, "storage.credentials.access_key_id (a reference)");
            ctx.map(SECRET, "storage.credentials.secret_access_key (a reference)");
            ctx.skip(PROVIDER, "the static keys are used, as Kafka Connect used them");
        }
        (one, other) => {
            if one.is_some() || other.is_some() {
                for key in [ID, SECRET] {
                    ctx.skip(key, "needs both aws.access.key.id and aws.secret.access.key; the host's AWS credential chain is used instead");
                }
            }
            match ctx.value(PROVIDER).as_deref() {
                Some("com.amazonaws.auth.DefaultAWSCredentialsProviderChain" | "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider") => {
                    ctx.map(PROVIDER, "— the host's AWS credential chain, Turnpike's default");
                }
                Some(_) => ctx.skip(
                    PROVIDER,
                    "Turnpike signs with the host's AWS credential chain (environment, profile, web identity, instance role) or static keys given by reference; a provider class is not supported",
                ),
                None => {}
            }
            let on_this_machine = endpoint.is_none_or(|e| {
                let host = e.split_once("://").map_or(e, |(_, r)| r);
                host.starts_with("localhost") || host.starts_with("127.") || host.starts_with("[::1]")
            });
            if !on_this_machine {
                // The host's own AWS credentials never sign for a store a connector names; the
                // Confluent connector's default chain read these variables.
                s.insert("credentials".into(), json!({"access_key_id": "${env:AWS_ACCESS_KEY_ID}", "secret_access_key": "${env:AWS_SECRET_ACCESS_KEY}"}));
                ctx.note(
                    "the store at store.url needs credentials given in the connector: they are read from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY on the Turnpike host, \
as Confluent's default chain read them (or store them as secrets and write ${secret:NAME})",
                );
            }
        }
    }
    for key in ctx.open_keys("s3.credentials.provider.") {
        ctx.skip(&key, "Turnpike has no credential provider classes (no assumed role named in the connector): the host's AWS credential chain or static keys by reference");
    }
}

/// Why an S3 sink option nobody else claimed is left out.
pub(crate) fn unknown(key: &str) -> String {
    let reason = match key {
        k if k.starts_with("s3.sse") || k == "s3.ssea.name" => "server-side encryption is the bucket's setting (default encryption); the host sends no encryption headers",
        "s3.acl.canned" => "objects get the bucket's default ACL",
        k if k.starts_with("s3.proxy.") => "the host's S3 client has no proxy per connector",
        "s3.retry.backoff.ms" | "s3.part.retries" | "retry.backoff.ms" => "the host retries S3 requests itself; an upload that still fails fails the connector, which restarts per `restart`",
        "s3.wan.mode" => "S3 Transfer Acceleration is not supported",
        "s3.send.digest" | "s3.http.send.expect.continue" | "s3.elastic.buffer.enable" | "s3.elastic.buffer.init.capacity" => {
            "the host's uploader has no such setting (its memory is bounded by storage.max_buffered_mib)"
        }
        "s3.object.tagging" | "s3.object.behavior.on.tagging.error" => "object tags are not supported",
        "enable.conditional.writes" | "max.files.scan.limit" => "objects replace what is at their key; conditional writes are not supported",
        "max.write.duration.ms" | "partitioner.max.open.files" => "the host bounds upload memory with storage.max_buffered_mib and a batch's time with limits.batch_timeout_ms",
        "schema.compatibility" => "Turnpike records carry no Connect schemas, so objects never rotate on a schema change",
        "tombstone.encoded.partition" | "report.null.values.to.dlq" => "tombstones are skipped or rejected per behavior.on.null.values; a rejected one goes to the dead-letter topic",
        "rotate.file.on.partition.change" => "s3-sink keeps an object open per encoded partition and closes it by flush.size or time",
        "s3.schema.partition.affix.type" => "Turnpike records carry no Connect schemas",
        _ => "an option of Confluent's S3 sink that s3-sink does not offer",
    };
    reason.to_owned()
}
