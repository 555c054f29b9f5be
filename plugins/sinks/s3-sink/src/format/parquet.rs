//! `format.class: parquet`: each object one Parquet file of flat, optional columns, written
//! with the pure-Rust `parquet` crate (no Arrow). A file's footer describes every column
//! chunk, so the rows are kept, column by column, until the object closes.
//!
//! The schema is `parquet.schema`, or else inferred from each object's first record: an
//! integer is INT64, another number DOUBLE, a boolean BOOLEAN, a string UTF8, anything else
//! (an object, an array, null) its JSON text in a UTF8 column.

use std::sync::Arc;

use ::parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use ::parquet::column::writer::ColumnWriter;
use ::parquet::data_type::ByteArray;
use ::parquet::errors::ParquetError;
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::types::Type;
use serde_json::{Map, Value};
use turnpike_sdk::{Record, RecordError};

use super::{json, Codec, Extras};
use crate::partitioner::kind;

/// A column's type, as `parquet.schema` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    String,
    Long,
    Int,
    Double,
    Float,
    Boolean,
    /// Any JSON value, as its text in a UTF8 column.
    Json,
}

impl ColumnType {
    pub fn parse(name: &str) -> Option<ColumnType> {
        Some(match name.to_ascii_lowercase().as_str() {
            "string" => ColumnType::String,
            "long" => ColumnType::Long,
            "int" => ColumnType::Int,
            "double" => ColumnType::Double,
            "float" => ColumnType::Float,
            "boolean" => ColumnType::Boolean,
            "json" => ColumnType::Json,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            ColumnType::String => "string",
            ColumnType::Long => "long",
            ColumnType::Int => "int",
            ColumnType::Double => "double",
            ColumnType::Float => "float",
            ColumnType::Boolean => "boolean",
            ColumnType::Json => "json",
        }
    }

    /// The type inferred from a first record's field.
    fn infer(value: &Value) -> ColumnType {
        match value {
            Value::Number(n) if n.is_i64() => ColumnType::Long,
            Value::Number(_) => ColumnType::Double,
            Value::Bool(_) => ColumnType::Boolean,
            Value::String(_) => ColumnType::String,
            _ => ColumnType::Json,
        }
    }

    fn physical(self) -> (PhysicalType, Option<LogicalType>) {
        match self {
            ColumnType::String | ColumnType::Json => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            ColumnType::Long => (PhysicalType::INT64, None),
            ColumnType::Int => (PhysicalType::INT32, None),
            ColumnType::Double => (PhysicalType::DOUBLE, None),
            ColumnType::Float => (PhysicalType::FLOAT, None),
            ColumnType::Boolean => (PhysicalType::BOOLEAN, None),
        }
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: ColumnType,
}

/// A record as a row: its value's fields, and its key and headers when they are stored.
pub struct Row {
    fields: Map<String, Value>,
    key: Option<String>,
    headers: Option<String>,
    offset: i64,
}

impl Row {
    pub fn new(record: &Record<'_>, value: Value, extras: Extras) -> Result<Row, RecordError> {
        let fields = match value {
            Value::Object(fields) => fields,
            other => return Err(RecordError::invalid(format!("Parquet needs each value to be a JSON object; this one is {}", kind(&other)))),
        };
        for (name, on, option) in [("_key", extras.key, "store.kafka.keys"), ("_headers", extras.headers, "store.kafka.headers")] {
            if on && fields.contains_key(name) {
                return Err(RecordError::invalid(format!("the value has a field `{name}`, which clashes with the column {option} adds")));
            }
        }
        let key = if extras.key { record.key().map(|k| String::from_utf8_lossy(k).into_owned()) } else { None };
        let headers = extras.headers.then(|| json::headers(record).to_string());
        Ok(Row { fields, key, headers, offset: record.offset() })
    }
}

/// One cell, already of its column's type.
enum Cell {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(ByteArray),
}

/// `value` as a cell of type `kind`, if it fits.
fn fit(kind: ColumnType, value: Option<&Value>) -> Option<Cell> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Some(Cell::Null);
    };
    Some(match (kind, value) {
        (ColumnType::Json, v) => Cell::Bytes(ByteArray::from(v.to_string().into_bytes())),
        (ColumnType::String, Value::String(s)) => Cell::Bytes(ByteArray::from(s.as_str())),
        (ColumnType::Long, Value::Number(n)) => Cell::Long(n.as_i64()?),
        (ColumnType::Int, Value::Number(n)) => Cell::Int(i32::try_from(n.as_i64()?).ok()?),
        (ColumnType::Double, Value::Number(n)) => Cell::Double(n.as_f64()?),
        (ColumnType::Float, Value::Number(n)) => Cell::Float(n.as_f64()? as f32),
        (ColumnType::Boolean, Value::Bool(b)) => Cell::Bool(*b),
        _ => return None,
    })
}

/// A column's values so far, and its definition levels (0: null, 1: a value).
enum Values {
    Bool(Vec<bool>),
    Int(Vec<i32>),
    Long(Vec<i64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Bytes(Vec<ByteArray>),
}

struct ColumnData {
    values: Values,
    defs: Vec<i16>,
}

impl ColumnData {
    fn new(kind: ColumnType) -> ColumnData {
        let values = match kind {
            ColumnType::String | ColumnType::Json => Values::Bytes(Vec::new()),
            ColumnType::Long => Values::Long(Vec::new()),
            ColumnType::Int => Values::Int(Vec::new()),
            ColumnType::Double => Values::Double(Vec::new()),
            ColumnType::Float => Values::Float(Vec::new()),
            ColumnType::Boolean => Values::Bool(Vec::new()),
        };
        ColumnData { values, defs: Vec::new() }
    }

    fn push(&mut self, cell: Cell) {
        let stored = match (&mut self.values, cell) {
            (Values::Bool(v), Cell::Bool(x)) => append(v, x),
            (Values::Int(v), Cell::Int(x)) => append(v, x),
            (Values::Long(v), Cell::Long(x)) => append(v, x),
            (Values::Float(v), Cell::Float(x)) => append(v, x),
            (Values::Double(v), Cell::Double(x)) => append(v, x),
            (Values::Bytes(v), Cell::Bytes(x)) => append(v, x),
            // Null, or (never: `fit` makes cells of the column's type) a cell of another type.
            _ => false,
        };
        self.defs.push(i16::from(stored));
    }
}

/// Stores a value; true.
fn append<T>(values: &mut Vec<T>, value: T) -> bool {
    values.push(value);
    true
}

/// An open Parquet object's rows.
pub struct Table {
    /// The value's columns, then `_key` and `_headers` if stored.
    columns: Vec<Column>,
    data: Vec<ColumnData>,
    value_columns: usize,
    /// Whether the schema came from the first record (then fields outside it are refused).
    inferred: bool,
    first_offset: i64,
    codec: Codec,
    extras: Extras,
}

impl Table {
    /// A table for `configured` columns, or for the columns of `first`.
    pub fn new(configured: Option<&[Column]>, codec: Codec, first: &Row, extras: Extras) -> Result<Table, RecordError> {
        let (mut columns, inferred) = match configured {
            Some(columns) => (columns.to_vec(), false),
            None => (first.fields.iter().map(|(name, v)| Column { name: name.clone(), kind: ColumnType::infer(v) }).collect(), true),
        };
        let value_columns = columns.len();
        if extras.key {
            columns.push(Column { name: "_key".into(), kind: ColumnType::String });
        }
        if extras.headers {
            columns.push(Column { name: "_headers".into(), kind: ColumnType::String });
        }
        if columns.is_empty() {
            return Err(RecordError::invalid("Parquet needs at least one column, and this value (the object's first) has no field; set parquet.schema"));
        }
        let data = columns.iter().map(|c| ColumnData::new(c.kind)).collect();
        Ok(Table { columns, data, value_columns, inferred, first_offset: first.offset, codec, extras })
    }

    /// Adds a row; a field that does not fit its column (or, with an inferred schema, a
    /// field outside it) is the record's error, and the table is then unchanged.
    pub fn push(&mut self, row: Row) -> Result<(), RecordError> {
        let mut cells = Vec::with_capacity(self.columns.len());
        let mut present = 0;
        for column in &self.columns[..self.value_columns] {
            let value = row.fields.get(&column.name);
            present += usize::from(value.is_some());
            let cell = fit(column.kind, value).ok_or_else(|| {
                let v = value.map(|v| short(&v.to_string())).unwrap_or_default();
                RecordError::invalid(format!("the field `{}` is {v}, which does not fit the column's type {}", column.name, column.kind.name()))
            })?;
            cells.push(cell);
        }
        if self.inferred && present < row.fields.len() {
            let known = &self.columns[..self.value_columns];
            let extra = row.fields.keys().find(|k| !known.iter().any(|c| &c.name == *k)).map_or("?", String::as_str);
            return Err(RecordError::invalid(format!(
                "the field `{extra}` is not in this object's schema, inferred from its first record (offset {}); list every field in parquet.schema",
                self.first_offset
            )));
        }
        if self.extras.key {
            cells.push(row.key.map_or(Cell::Null, |k| Cell::Bytes(ByteArray::from(k.into_bytes()))));
        }
        if self.extras.headers {
            cells.push(row.headers.map_or(Cell::Null, |h| Cell::Bytes(ByteArray::from(h.into_bytes()))));
        }
        for (data, cell) in self.data.iter_mut().zip(cells) {
            data.push(cell);
        }
        Ok(())
    }

    /// The whole Parquet file.
    pub fn finish(self) -> Result<Vec<u8>, RecordError> {
        write_file(&self.columns, &self.data, self.codec).map_err(|e| RecordError::fatal(format!("writing a Parquet file: {e}")))
    }
}

/// At most 80 characters of `text`, for messages.
fn short(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// One row group holding every row (the crate splits columns into pages).
fn write_file(columns: &[Column], data: &[ColumnData], codec: Codec) -> Result<Vec<u8>, ParquetError> {
    let fields = columns
        .iter()
        .map(|c| {
            let (physical, logical) = c.kind.physical();
            Type::primitive_type_builder(&c.name, physical).with_repetition(Repetition::OPTIONAL).with_logical_type(logical).build().map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Arc::new(Type::group_type_builder("record").with_fields(fields).build()?);
    let compression = match codec {
        Codec::Snappy => Compression::SNAPPY,
        Codec::None => Compression::UNCOMPRESSED,
    };
    let properties = Arc::new(WriterProperties::builder().set_compression(compression).build());
    let mut writer = SerializedFileWriter::new(Vec::new(), schema, properties)?;
    let mut group = writer.next_row_group()?;
    let mut data = data.iter();
    while let Some(mut column) = group.next_column()? {
        let d = data.next().ok_or_else(|| ParquetError::General("the schema has more columns than the data".into()))?;
        write_column(column.untyped(), d)?;
        column.close()?;
    }
    group.close()?;
    writer.into_inner()
}

fn write_column(writer: &mut ColumnWriter<'_>, data: &ColumnData) -> Result<(), ParquetError> {
    let defs = Some(data.defs.as_slice());
    match (writer, &data.values) {
        (ColumnWriter::BoolColumnWriter(w), Values::Bool(v)) => w.write_batch(v, defs, None),
        (ColumnWriter::Int32ColumnWriter(w), Values::Int(v)) => w.write_batch(v, defs, None),
        (ColumnWriter::Int64ColumnWriter(w), Values::Long(v)) => w.write_batch(v, defs, None),
        (ColumnWriter::FloatColumnWriter(w), Values::Float(v)) => w.write_batch(v, defs, None),
        (ColumnWriter::DoubleColumnWriter(w), Values::Double(v)) => w.write_batch(v, defs, None),
        (ColumnWriter::ByteArrayColumnWriter(w), Values::Bytes(v)) => w.write_batch(v, defs, None),
        _ => Err(ParquetError::General("a column's writer and data differ in type".into())),
    }
    .map(drop)
}
