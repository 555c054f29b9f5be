//! Confluent's S3 sink (`io.confluent.connect.s3.S3SinkConnector`) as the `s3-sink` plugin
//! and the connector's `storage:` grant. s3-sink keeps Confluent's option names; only what it
//! offers is carried over, and only where it has an effect (s3-sink refuses an option that
//! the chosen partitioner or format does not use).
//!
//! `sink` reads the rotation and record options; `format` the object format, `partitioner`
//! the object keys (and the time zone of time folders), `storage` the grant.

mod format;
mod partitioner;
mod storage;

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, literal, Ctx};
use format::Format;
use partitioner::Partitioner;

pub(crate) const CLASS: &str = "io.confluent.connect.s3.S3SinkConnector";

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
    let format = format::format(ctx, &mut c);
    let partitioner = partitioner::partitioner(ctx, &mut c);
    let scheduled = ctx.value("rotate.schedule.interval.ms").and_then(|v| int(&v)).is_some_and(|n| n > 0);
    if partitioner == Partitioner::Time || scheduled {
        partitioner::timezone(ctx, &mut c);
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
    let storage = storage::storage(ctx);
    Sink { step: json!({"plugin": "s3-sink", "config": Value::Object(c.0)}), storage }
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
