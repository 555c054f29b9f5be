//! What an object holds: JSON lines, raw value bytes, or a Parquet file. Each record is
//! first made into a [`Piece`] (which may fail for that record alone), then added to an
//! object's [`Body`].

pub mod bytes;
pub mod json;
pub mod parquet;
pub mod stream;

use serde_json::Value;
use turnpike_sdk::{Record, RecordError};

use self::parquet::{Column, Row, Table};
use self::stream::Stream;

/// `format.class`.
#[derive(Debug, Clone)]
pub enum Format {
    /// One JSON value per line.
    Json,
    /// The value bytes, each followed by `separator`.
    Bytes { separator: Vec<u8> },
    /// A Parquet file, its schema given or inferred from each object's first record.
    Parquet { codec: Codec, schema: Option<Vec<Column>> },
}

/// `s3.compression.type` (JSON and bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
}

/// `parquet.codec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Snappy,
}

/// One record, encoded for its object.
pub enum Piece {
    /// Bytes to append (a line).
    Line(Vec<u8>),
    /// A Parquet row, fitted to the object's schema when it is added.
    Row(Row),
}

/// Whether the Kafka key and headers go into each record.
#[derive(Debug, Clone, Copy)]
pub struct Extras {
    pub key: bool,
    pub headers: bool,
}

impl Format {
    /// The object key's extension (Confluent's).
    pub fn extension(&self, compression: Compression) -> &'static str {
        match (self, compression) {
            (Format::Json, Compression::None) => "json",
            (Format::Json, Compression::Gzip) => "json.gz",
            (Format::Bytes { .. }, Compression::None) => "bin",
            (Format::Bytes { .. }, Compression::Gzip) => "bin.gz",
            (Format::Parquet { codec: Codec::Snappy, .. }, _) => "snappy.parquet",
            (Format::Parquet { codec: Codec::None, .. }, _) => "parquet",
        }
    }

    /// `record` (with value `value`, and `parsed` if the settings parse values) as a piece.
    pub fn piece(&self, record: &Record<'_>, value: &[u8], parsed: Option<Value>, extras: Extras) -> Result<Piece, RecordError> {
        match self {
            Format::Json => json::line(record, value, parsed.as_ref(), extras).map(Piece::Line),
            Format::Bytes { separator } => Ok(Piece::Line(bytes::line(value, separator))),
            Format::Parquet { .. } => {
                let parsed = match parsed {
                    Some(v) => v,
                    None => json::parse(value)?,
                };
                Row::new(record, parsed, extras).map(Piece::Row)
            }
        }
    }

    /// An empty body for an object whose first piece is `first` (which may fix its schema).
    pub fn body(&self, compression: Compression, first: &Piece, extras: Extras) -> Result<Body, RecordError> {
        Ok(match (self, first) {
            (Format::Parquet { codec, schema }, Piece::Row(row)) => Body::Table(Table::new(schema.as_deref(), *codec, row, extras)?),
            _ => Body::Lines(Stream::new(compression == Compression::Gzip)),
        })
    }
}

/// An open object's content.
pub enum Body {
    /// JSON or bytes lines, streamed out (gzipped or not) as they fill.
    Lines(Stream),
    /// Parquet rows, kept until the object closes (a Parquet file is written whole).
    Table(Table),
}

impl Body {
    /// Adds a record. An error is the record's; the body is then unchanged.
    pub fn push(&mut self, piece: Piece) -> Result<(), RecordError> {
        match (self, piece) {
            (Body::Lines(stream), Piece::Line(line)) => stream.append(&line),
            (Body::Table(table), Piece::Row(row)) => table.push(row),
            _ => Err(RecordError::fatal("s3-sink bug: a record encoded for another format")),
        }
    }

    /// Bytes ready to upload, once at least `at_least` are.
    pub fn take_ready(&mut self, at_least: usize) -> Option<Vec<u8>> {
        match self {
            Body::Lines(stream) => stream.take_ready(at_least),
            Body::Table(_) => None,
        }
    }

    /// The rest of the object.
    pub fn finish(self) -> Result<Vec<u8>, RecordError> {
        match self {
            Body::Lines(stream) => stream.finish(),
            Body::Table(table) => table.finish(),
        }
    }
}
