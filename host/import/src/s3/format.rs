//! The object format (`format.class`) and the options only one format uses: s3-sink refuses
//! an option the chosen format ignores, so those are left out here rather than copied.

use serde_json::json;

use super::Config;
use crate::ctx::{literal, Ctx};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Bytes,
    Parquet,
}

pub(super) fn format(ctx: &mut Ctx, c: &mut Config) -> Format {
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
