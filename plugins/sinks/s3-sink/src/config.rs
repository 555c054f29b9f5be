//! The configuration, in the key names of Confluent's S3 sink, and its validation into
//! [`Settings`]. Numbers and booleans are taken as JSON numbers or as text (`"1000"`), as a
//! Kafka Connect config pasted over writes them; every problem is reported at once.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::ConfigError;

use crate::format::parquet::{Column, ColumnType};
use crate::format::{Codec, Compression, Format};
use crate::partitioner::{Extractor, FieldPath, Partitioner};
use crate::time::{PathFormat, Zone};

mod checks;

use checks::{check_path, choice, unknown_key, Problems};

/// The configuration as written. Defaults are in the README and in [`Config::validate`].
#[derive(Debug, Deserialize)]
pub struct Config {
    #[serde(rename = "topics.dir")]
    topics_dir: Option<String>,
    #[serde(rename = "flush.size")]
    flush_size: Option<Value>,
    #[serde(rename = "rotate.interval.ms")]
    rotate_interval_ms: Option<Value>,
    #[serde(rename = "rotate.schedule.interval.ms")]
    rotate_schedule_interval_ms: Option<Value>,
    timezone: Option<String>,
    #[serde(rename = "partitioner.class")]
    partitioner_class: Option<String>,
    #[serde(rename = "partition.field.name")]
    partition_field_name: Option<Value>,
    #[serde(rename = "path.format")]
    path_format: Option<String>,
    #[serde(rename = "partition.duration.ms")]
    partition_duration_ms: Option<Value>,
    #[serde(rename = "timestamp.extractor")]
    timestamp_extractor: Option<String>,
    #[serde(rename = "timestamp.field")]
    timestamp_field: Option<String>,
    #[serde(rename = "filename.offset.zero.pad.width")]
    pad_width: Option<Value>,
    #[serde(rename = "format.class")]
    format_class: Option<String>,
    #[serde(rename = "format.bytearray.separator")]
    separator: Option<String>,
    #[serde(rename = "s3.compression.type")]
    compression: Option<String>,
    #[serde(rename = "parquet.codec")]
    parquet_codec: Option<String>,
    #[serde(rename = "parquet.schema")]
    parquet_schema: Option<Vec<ColumnSpec>>,
    #[serde(rename = "behavior.on.null.values")]
    on_null: Option<String>,
    #[serde(rename = "store.kafka.keys")]
    store_keys: Option<Value>,
    #[serde(rename = "store.kafka.headers")]
    store_headers: Option<Value>,
    /// Every other key: each is reported, with where it belongs if it is Confluent's.
    #[serde(flatten)]
    unknown: BTreeMap<String, Value>,
}

/// One `parquet.schema` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    name: String,
    #[serde(rename = "type")]
    kind: String,
}

/// A checked configuration.
#[derive(Debug)]
pub struct Settings {
    /// Without leading or trailing `/`.
    pub topics_dir: String,
    pub flush_size: u64,
    pub rotate_interval_ms: Option<i64>,
    pub schedule_interval_ms: Option<i64>,
    pub zone: Zone,
    pub partitioner: Partitioner,
    pub extractor: Extractor,
    pub pad_width: usize,
    pub format: Format,
    pub compression: Compression,
    /// `behavior.on.null.values: fail`.
    pub fail_on_null: bool,
    pub store_keys: bool,
    pub store_headers: bool,
}

impl Settings {
    /// Whether each value is parsed as JSON (for a field, a timestamp field or Parquet).
    pub fn needs_json(&self) -> bool {
        matches!(self.partitioner, Partitioner::Field(_)) || matches!(self.extractor, Extractor::RecordField(_)) || matches!(self.format, Format::Parquet { .. })
    }

    /// Whether each record needs a timestamp (for time partitions or time rotation).
    pub fn needs_timestamp(&self) -> bool {
        matches!(self.partitioner, Partitioner::Time { .. }) || self.rotate_interval_ms.is_some()
    }
}

impl Config {
    /// Checks everything; no I/O (the host may call `create` only to validate).
    pub(crate) fn validate(self) -> Result<Settings, ConfigError> {
        let mut p = Problems::default();
        for key in self.unknown.keys() {
            p.add(key, unknown_key(key));
        }
        let topics_dir = self.topics_dir.as_deref().unwrap_or("topics").trim_matches('/').to_owned();
        if let Err(why) = check_path("topics", &topics_dir) {
            p.add("topics.dir", why);
        }
        let flush_size = p.ranged("flush.size", self.flush_size.as_ref(), 1..=10_000_000, 1000) as u64;
        let rotate_interval_ms = p.interval("rotate.interval.ms", self.rotate_interval_ms.as_ref());
        let schedule_interval_ms = p.interval("rotate.schedule.interval.ms", self.rotate_schedule_interval_ms.as_ref());
        let zone = match Zone::parse(self.timezone.as_deref().unwrap_or("UTC")) {
            Ok(z) => z,
            Err(why) => {
                p.add("timezone", why);
                Zone::UTC
            }
        };
        let pad_width = p.ranged("filename.offset.zero.pad.width", self.pad_width.as_ref(), 0..=20, 10) as usize;
        let partitioner = self.partitioner(&mut p);
        let extractor = self.extractor(&mut p);
        let (format, compression) = self.format(&mut p);
        let store_keys = p.flag("store.kafka.keys", self.store_keys.as_ref());
        let store_headers = p.flag("store.kafka.headers", self.store_headers.as_ref());
        if matches!(format, Format::Bytes { .. }) {
            for (key, on) in [("store.kafka.keys", store_keys), ("store.kafka.headers", store_headers)] {
                if on {
                    p.add(key, "not supported with format.class bytes (the value bytes are written as they are); use json or parquet");
                }
            }
        }
        if let Format::Parquet { schema: Some(columns), .. } = &format {
            for (name, on, key) in [("_key", store_keys, "store.kafka.keys"), ("_headers", store_headers, "store.kafka.headers")] {
                if on && columns.iter().any(|c| c.name == name) {
                    p.add("parquet.schema", format!("the column `{name}` clashes with the one {key} adds"));
                }
            }
        }
        let fail_on_null = match self.on_null.as_deref().unwrap_or("ignore") {
            s if s.eq_ignore_ascii_case("ignore") => false,
            s if s.eq_ignore_ascii_case("fail") => true,
            other => {
                p.add("behavior.on.null.values", format!("{other:?} is not one of ignore, fail"));
                false
            }
        };
        p.finish()?;
        Ok(Settings {
            topics_dir,
            flush_size,
            rotate_interval_ms,
            schedule_interval_ms,
            zone,
            partitioner,
            extractor,
            pad_width,
            format,
            compression,
            fail_on_null,
            store_keys,
            store_headers,
        })
    }

    fn partitioner(&self, p: &mut Problems) -> Partitioner {
        let given = self.partitioner_class.as_deref().unwrap_or("default");
        const CLASSES: [&str; 3] = [
            "io.confluent.connect.storage.partitioner.DefaultPartitioner",
            "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        ];
        let kind = choice(given, &["default", "field", "time"], &CLASSES);
        if kind.is_some() && kind != Some("field") {
            p.unused("partition.field.name", &self.partition_field_name, "partitioner.class field");
        }
        if kind.is_some() && kind != Some("time") {
            p.unused("path.format", &self.path_format, "partitioner.class time");
            p.unused("partition.duration.ms", &self.partition_duration_ms, "partitioner.class time");
        }
        match kind {
            Some("field") => Partitioner::Field(field_names(p, self.partition_field_name.as_ref())),
            Some("time") => {
                let format = match self.path_format.as_deref().map(PathFormat::parse) {
                    None => {
                        p.add("path.format", "required with partitioner.class time, e.g. \"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH\"");
                        None
                    }
                    Some(Err(why)) => {
                        p.add("path.format", why);
                        None
                    }
                    Some(Ok(f)) => match check_path("", &f.format(0)) {
                        Ok(()) => Some(f),
                        Err(why) => {
                            p.add("path.format", why);
                            None
                        }
                    },
                };
                let duration = p.int("partition.duration.ms", self.partition_duration_ms.as_ref());
                let duration_ms = match duration {
                    Some(d) if d > 0 => d,
                    Some(d) => {
                        p.add("partition.duration.ms", format!("{d} must be above 0"));
                        1
                    }
                    None => {
                        if self.partition_duration_ms.as_ref().is_none_or(Value::is_null) {
                            p.add("partition.duration.ms", "required with partitioner.class time: how long each time partition is, e.g. 3600000 for an hour");
                        }
                        1
                    }
                };
                // Without a format there is a problem, so these settings are never used.
                Partitioner::Time { format: format.unwrap_or_default(), duration_ms }
            }
            _ => {
                if kind.is_none() {
                    p.add("partitioner.class", format!("{given:?} is not one of default, field, time (or Confluent's DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner)"));
                }
                Partitioner::Default
            }
        }
    }

    fn extractor(&self, p: &mut Problems) -> Extractor {
        let given = self.timestamp_extractor.as_deref().unwrap_or("Record");
        let kind = choice(given, &["Record", "RecordField", "Wallclock"], &[]);
        if kind.is_some() && kind != Some("RecordField") {
            p.unused("timestamp.field", &self.timestamp_field, "timestamp.extractor RecordField");
        }
        match kind {
            Some("RecordField") => match self.timestamp_field.as_deref().map(FieldPath::parse) {
                Some(Ok(path)) => Extractor::RecordField(path),
                Some(Err(why)) => {
                    p.add("timestamp.field", why);
                    Extractor::Record
                }
                None => {
                    p.add("timestamp.field", "required with timestamp.extractor RecordField: the value field holding the time");
                    Extractor::Record
                }
            },
            Some("Wallclock") => Extractor::Wallclock,
            Some(_) => Extractor::Record,
            None => {
                p.add("timestamp.extractor", format!("{given:?} is not one of Record, RecordField, Wallclock"));
                Extractor::Record
            }
        }
    }

    fn format(&self, p: &mut Problems) -> (Format, Compression) {
        let given = self.format_class.as_deref().unwrap_or("json");
        const CLASSES: [&str; 3] = [
            "io.confluent.connect.s3.format.json.JsonFormat",
            "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "io.confluent.connect.s3.format.parquet.ParquetFormat",
        ];
        let kind = choice(given, &["json", "bytes", "parquet"], &CLASSES);
        if kind.is_some() && kind != Some("bytes") {
            p.unused("format.bytearray.separator", &self.separator, "format.class bytes");
        }
        if kind.is_some() && kind != Some("parquet") {
            p.unused("parquet.codec", &self.parquet_codec, "format.class parquet");
            p.unused("parquet.schema", &self.parquet_schema, "format.class parquet");
        }
        let compression = match self.compression.as_deref().unwrap_or("none") {
            s if s.eq_ignore_ascii_case("none") => Compression::None,
            s if s.eq_ignore_ascii_case("gzip") && kind == Some("parquet") => {
                p.add("s3.compression.type", "gzip is for json and bytes; Parquet compresses inside the file: set parquet.codec (snappy or none)");
                Compression::None
            }
            s if s.eq_ignore_ascii_case("gzip") => Compression::Gzip,
            other => {
                p.add("s3.compression.type", format!("{other:?} is not one of none, gzip"));
                Compression::None
            }
        };
        let format = match kind {
            Some("bytes") => Format::Bytes { separator: self.separator.clone().unwrap_or_else(|| "\n".into()).into_bytes() },
            Some("parquet") => {
                let codec = match self.parquet_codec.as_deref().unwrap_or("snappy") {
                    s if s.eq_ignore_ascii_case("snappy") => Codec::Snappy,
                    s if s.eq_ignore_ascii_case("none") || s.eq_ignore_ascii_case("uncompressed") => Codec::None,
                    other => {
                        p.add("parquet.codec", format!("{other:?} is not one of snappy, none"));
                        Codec::None
                    }
                };
                Format::Parquet { codec, schema: self.parquet_schema.as_deref().map(|s| columns(p, s)) }
            }
            Some(_) => Format::Json,
            None => {
                let why = if given.to_ascii_lowercase().contains("avro") { " (Avro is not supported)" } else { "" };
                p.add("format.class", format!("{given:?} is not one of json, bytes, parquet{why}"));
                Format::Json
            }
        };
        (format, compression)
    }
}

/// `partition.field.name`: a list of fields, or Confluent's comma-separated text.
fn field_names(p: &mut Problems, value: Option<&Value>) -> Vec<FieldPath> {
    const KEY: &str = "partition.field.name";
    let names: Vec<String> = match value {
        Some(Value::String(s)) => s.split(',').map(|n| n.trim().to_owned()).collect(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        None | Some(Value::Null) => {
            p.add(KEY, "required with partitioner.class field: the value fields to partition by, e.g. [\"region\", \"shop.id\"]");
            return Vec::new();
        }
        Some(other) => {
            p.add(KEY, format!("{other} is not a list of field names"));
            return Vec::new();
        }
    };
    let mut paths = Vec::new();
    for name in &names {
        match FieldPath::parse(name) {
            Ok(path) => paths.push(path),
            Err(why) => p.add(KEY, why),
        }
    }
    if names.is_empty() {
        p.add(KEY, "names no field");
    }
    paths
}

/// `parquet.schema` entries as columns.
fn columns(p: &mut Problems, specs: &[ColumnSpec]) -> Vec<Column> {
    let mut out: Vec<Column> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let key = format!("parquet.schema[{i}]");
        let Some(kind) = ColumnType::parse(&spec.kind) else {
            p.add(&format!("{key}.type"), format!("{:?} is not one of string, long, int, double, float, boolean, json", spec.kind));
            continue;
        };
        if spec.name.is_empty() {
            p.add(&format!("{key}.name"), "is empty");
        } else if out.iter().any(|c| c.name == spec.name) {
            p.add(&format!("{key}.name"), format!("`{}` is listed twice", spec.name));
        } else {
            out.push(Column { name: spec.name.clone(), kind });
        }
    }
    if specs.is_empty() {
        p.add("parquet.schema", "lists no column; leave it out to infer the schema from each object's first record");
    }
    out
}
