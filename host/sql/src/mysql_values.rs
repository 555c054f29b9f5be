//! MySQL / MariaDB values both ways: result columns (binary protocol) as the canonical
//! texts of `wit/sql.wit`, and plugin parameters as protocol values.
//!
//! MySQL does not say what type a `?` expects, so parameters go as they are (text as a
//! string, which the server converts where the statement compares it with a column); the
//! one exception is an instant with a zone (`…Z`, `+00:00`), which MySQL and MariaDB do not
//! all read as a string, sent as a DATETIME in UTC, the session's time zone.

use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::Value;

use crate::rows::{self, Civil, RowSetBuilder};
use crate::{Column, Param, SqlError, ValueKind};

/// The collation id of the `binary` character set: string columns with it hold bytes.
const BINARY_CHARSET: u16 = 63;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decode {
    /// Integers and floats arrive as numbers.
    Number,
    /// Strings, bytes, DECIMAL (its exact digits), JSON, ENUM and SET arrive as bytes.
    Verbatim,
    Date,
    DateTime { zulu: bool },
    Time,
    /// BIT(n) arrives as big-endian bytes; shown as its unsigned value.
    Bit,
}

/// How one result column is decoded, and what the plugin is told it is.
#[derive(Debug)]
pub(crate) struct Plan {
    pub column: Column,
    decode: Decode,
}

/// Plans every column, or refuses the statement at the first one the host cannot return.
pub(crate) fn plan_columns(columns: &[mysql_async::Column]) -> Result<Vec<Plan>, SqlError> {
    columns.iter().map(plan).collect()
}

fn plan(column: &mysql_async::Column) -> Result<Plan, SqlError> {
    use ColumnType as T;
    let flags = column.flags();
    let binary = column.character_set() == BINARY_CHARSET;
    let integer = |name: &str| {
        let name = if flags.contains(ColumnFlags::UNSIGNED_FLAG) { format!("{name} unsigned") } else { name.to_owned() };
        (name, ValueKind::Integer, Decode::Number)
    };
    let fixed = |name: &str, kind: ValueKind, decode: Decode| (name.to_owned(), kind, decode);
    let string = |text: &str, bytes: &str| {
        if binary {
            fixed(bytes, ValueKind::Bytes, Decode::Verbatim)
        } else {
            fixed(text, ValueKind::Text, Decode::Verbatim)
        }
    };
    let (type_name, kind, decode) = match column.column_type() {
        T::MYSQL_TYPE_TINY => integer("tinyint"),
        T::MYSQL_TYPE_SHORT => integer("smallint"),
        T::MYSQL_TYPE_INT24 => integer("mediumint"),
        T::MYSQL_TYPE_LONG => integer("int"),
        T::MYSQL_TYPE_LONGLONG => integer("bigint"),
        T::MYSQL_TYPE_YEAR => fixed("year", ValueKind::Integer, Decode::Number),
        T::MYSQL_TYPE_FLOAT => fixed("float", ValueKind::Float, Decode::Number),
        T::MYSQL_TYPE_DOUBLE => fixed("double", ValueKind::Float, Decode::Number),
        T::MYSQL_TYPE_DECIMAL | T::MYSQL_TYPE_NEWDECIMAL => fixed("decimal", ValueKind::Decimal, Decode::Verbatim),
        T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => fixed("date", ValueKind::Date, Decode::Date),
        T::MYSQL_TYPE_TIME | T::MYSQL_TYPE_TIME2 => fixed("time", ValueKind::Time, Decode::Time),
        T::MYSQL_TYPE_DATETIME | T::MYSQL_TYPE_DATETIME2 => {
            fixed("datetime", ValueKind::Timestamp, Decode::DateTime { zulu: false })
        }
        // The session's time zone is UTC, so a TIMESTAMP comes back as the UTC instant.
        T::MYSQL_TYPE_TIMESTAMP | T::MYSQL_TYPE_TIMESTAMP2 => {
            fixed("timestamp", ValueKind::TimestampTz, Decode::DateTime { zulu: true })
        }
        T::MYSQL_TYPE_JSON => fixed("json", ValueKind::Json, Decode::Verbatim),
        T::MYSQL_TYPE_BIT => fixed("bit", ValueKind::Other, Decode::Bit),
        T::MYSQL_TYPE_NULL => fixed("null", ValueKind::Text, Decode::Verbatim),
        T::MYSQL_TYPE_ENUM => fixed("enum", ValueKind::Other, Decode::Verbatim),
        T::MYSQL_TYPE_SET => fixed("set", ValueKind::Other, Decode::Verbatim),
        T::MYSQL_TYPE_STRING if flags.contains(ColumnFlags::ENUM_FLAG) => fixed("enum", ValueKind::Other, Decode::Verbatim),
        T::MYSQL_TYPE_STRING if flags.contains(ColumnFlags::SET_FLAG) => fixed("set", ValueKind::Other, Decode::Verbatim),
        T::MYSQL_TYPE_STRING => string("char", "binary"),
        T::MYSQL_TYPE_VARCHAR | T::MYSQL_TYPE_VAR_STRING => string("varchar", "varbinary"),
        T::MYSQL_TYPE_TINY_BLOB | T::MYSQL_TYPE_MEDIUM_BLOB | T::MYSQL_TYPE_LONG_BLOB | T::MYSQL_TYPE_BLOB => {
            string("text", "blob")
        }
        T::MYSQL_TYPE_GEOMETRY => return Err(unsupported(column, "geometry", "ST_AsText(...)")),
        T::MYSQL_TYPE_VECTOR => return Err(unsupported(column, "vector", "VECTOR_TO_STRING(...)")),
        other => return Err(unsupported(column, &format!("{other:?}"), "CAST(... AS CHAR)")),
    };
    Ok(Plan { column: Column { name: column.name_str().into_owned(), kind, type_name }, decode })
}

fn unsupported(column: &mysql_async::Column, type_name: &str, fix: &str) -> SqlError {
    SqlError::Refused(format!(
        "column {:?} has type {type_name}, which the host cannot return: convert it in the query, e.g. {fix}",
        column.name_str()
    ))
}

impl Plan {
    /// Appends one value (`None` and `Value::NULL` are SQL `NULL`) to `out`.
    pub(crate) fn write(&self, value: Option<Value>, out: &mut RowSetBuilder) -> Result<(), SqlError> {
        let text = match value {
            None | Some(Value::NULL) => {
                out.push_null();
                return Ok(());
            }
            Some(Value::Bytes(bytes)) if self.decode == Decode::Bit => bit_value(&bytes).to_string(),
            Some(Value::Bytes(bytes)) => return out.push_bytes(&bytes),
            Some(Value::Int(number)) => number.to_string(),
            Some(Value::UInt(number)) => number.to_string(),
            Some(Value::Float(number)) => rows::float32_text(number),
            Some(Value::Double(number)) => rows::float_text(number),
            Some(Value::Date(year, month, day, hour, minute, second, micros)) => {
                let civil = Civil {
                    year: i32::from(year),
                    month: u32::from(month),
                    day: u32::from(day),
                    hour: u32::from(hour),
                    minute: u32::from(minute),
                    second: u32::from(second),
                    micros,
                };
                match self.decode {
                    Decode::Date => civil.date_text(),
                    Decode::DateTime { zulu } => civil.timestamp_text(zulu),
                    _ => civil.timestamp_text(false),
                }
            }
            Some(Value::Time(negative, days, hours, minutes, seconds, micros)) => rows::time_text(
                negative,
                u64::from(days) * 24 + u64::from(hours),
                u32::from(minutes),
                u32::from(seconds),
                micros,
            ),
        };
        out.push_text(&text)
    }
}

/// BIT(n) is at most 64 bits, big-endian.
fn bit_value(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |value, byte| (value << 8) | u64::from(*byte))
}

/// The plugin's parameters as protocol values, in order.
pub(crate) fn to_values(params: &[Param]) -> Vec<Value> {
    params
        .iter()
        .map(|param| match param {
            Param::Null => Value::NULL,
            Param::Boolean(value) => Value::Int(i64::from(*value)),
            Param::Integer(value) => Value::Int(*value),
            Param::Float(value) => Value::Double(*value),
            Param::Text(text) => instant(text).unwrap_or_else(|| Value::Bytes(text.as_bytes().to_vec())),
        })
        .collect()
}

/// A timestamp with a zone, as a DATETIME in UTC; `None` for any other text.
fn instant(text: &str) -> Option<Value> {
    let (utc, zoned) = rows::parse_timestamp(text)?;
    if !zoned {
        return None;
    }
    let civil = Civil::from_naive(&utc);
    let year = u16::try_from(civil.year).ok().filter(|year| *year <= 9999)?;
    let small = |part: u32| u8::try_from(part).ok();
    Some(Value::Date(
        year,
        small(civil.month)?,
        small(civil.day)?,
        small(civil.hour)?,
        small(civil.minute)?,
        small(civil.second)?,
        civil.micros,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(ty: ColumnType, flags: ColumnFlags, charset: u16) -> Plan {
        let column = mysql_async::Column::new(ty).with_name(b"c").with_flags(flags).with_character_set(charset);
        plan(&column).unwrap()
    }

    fn text(plan: &Plan, value: Value) -> Option<String> {
        let mut out = RowSetBuilder::new(vec![plan.column.clone()]);
        plan.write(Some(value), &mut out).unwrap();
        out.end_row();
        let set = out.finish();
        set.value(0, 0).map(|bytes| String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[test]
    fn column_types_map_to_kinds_and_names() {
        let none = ColumnFlags::empty();
        let unsigned = plan_of(ColumnType::MYSQL_TYPE_LONGLONG, ColumnFlags::UNSIGNED_FLAG, BINARY_CHARSET);
        assert_eq!((unsigned.column.kind, unsigned.column.type_name.as_str()), (ValueKind::Integer, "bigint unsigned"));
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_BLOB, none, BINARY_CHARSET).column.kind, ValueKind::Bytes);
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_BLOB, none, 255).column.kind, ValueKind::Text);
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_VAR_STRING, none, 45).column.type_name, "varchar");
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_STRING, ColumnFlags::ENUM_FLAG, 45).column.kind, ValueKind::Other);
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_TIMESTAMP, none, BINARY_CHARSET).column.kind, ValueKind::TimestampTz);
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_DATETIME, none, BINARY_CHARSET).column.kind, ValueKind::Timestamp);
        assert_eq!(plan_of(ColumnType::MYSQL_TYPE_NEWDECIMAL, none, BINARY_CHARSET).column.kind, ValueKind::Decimal);
        let geometry = mysql_async::Column::new(ColumnType::MYSQL_TYPE_GEOMETRY).with_name(b"shape");
        assert!(matches!(plan(&geometry), Err(SqlError::Refused(m)) if m.contains("\"shape\"") && m.contains("ST_AsText")));
    }

    #[test]
    fn values_print_in_the_canonical_forms() {
        let none = ColumnFlags::empty();
        let stamp = plan_of(ColumnType::MYSQL_TYPE_TIMESTAMP, none, BINARY_CHARSET);
        assert_eq!(text(&stamp, Value::Date(2026, 12, 1, 13, 45, 0, 123_456)).unwrap(), "2026-12-01T13:45:00.123456Z");
        let datetime = plan_of(ColumnType::MYSQL_TYPE_DATETIME, none, BINARY_CHARSET);
        assert_eq!(text(&datetime, Value::Date(2026, 12, 1, 13, 45, 0, 0)).unwrap(), "2026-12-01T13:45:00");
        let date = plan_of(ColumnType::MYSQL_TYPE_DATE, none, BINARY_CHARSET);
        assert_eq!(text(&date, Value::Date(2026, 12, 1, 0, 0, 0, 0)).unwrap(), "2026-12-01");
        let time = plan_of(ColumnType::MYSQL_TYPE_TIME, none, BINARY_CHARSET);
        assert_eq!(text(&time, Value::Time(true, 1, 2, 3, 4, 500_000)).unwrap(), "-26:03:04.5");
        let decimal = plan_of(ColumnType::MYSQL_TYPE_NEWDECIMAL, none, BINARY_CHARSET);
        assert_eq!(text(&decimal, Value::Bytes(b"-12.50".to_vec())).unwrap(), "-12.50");
        let double = plan_of(ColumnType::MYSQL_TYPE_DOUBLE, none, BINARY_CHARSET);
        assert_eq!(text(&double, Value::Double(0.1)).unwrap(), "0.1");
        let float = plan_of(ColumnType::MYSQL_TYPE_FLOAT, none, BINARY_CHARSET);
        assert_eq!(text(&float, Value::Float(0.1)).unwrap(), "0.1");
        let bit = plan_of(ColumnType::MYSQL_TYPE_BIT, none, BINARY_CHARSET);
        assert_eq!(text(&bit, Value::Bytes(vec![0x01, 0x02])).unwrap(), "258");
        assert_eq!(text(&double, Value::NULL), None);
    }

    #[test]
    fn parameters_keep_their_kind_and_zoned_instants_become_utc_datetimes() {
        let values = to_values(&[
            Param::Null,
            Param::Boolean(true),
            Param::Integer(-3),
            Param::Float(1.5),
            Param::Text("2026-12-01T14:45:00.25+01:00".into()),
            Param::Text("2026-12-01T13:45:00".into()),
            Param::Text("-12.50".into()),
        ]);
        assert_eq!(
            values,
            vec![
                Value::NULL,
                Value::Int(1),
                Value::Int(-3),
                Value::Double(1.5),
                Value::Date(2026, 12, 1, 13, 45, 0, 250_000),
                Value::Bytes(b"2026-12-01T13:45:00".to_vec()),
                Value::Bytes(b"-12.50".to_vec()),
            ]
        );
    }
}
