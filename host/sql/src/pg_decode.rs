//! PostgreSQL result values (always in the binary format, which tokio-postgres asks for) as
//! the canonical texts of `wit/sql.wit`.
//!
//! Every column is read as raw bytes ([`Raw`]) and decoded here, so nothing is rounded on
//! the way: NUMERIC comes out with its exact digits whatever its size, timestamps keep
//! their microseconds and `infinity`. Types without a decoder are refused when the
//! statement is prepared, before it runs, with the cast that makes them readable.

use std::error::Error;
use std::fmt::Write;

use chrono::{NaiveDate, TimeDelta};
use tokio_postgres::types::{FromSql, Kind, Type};

use crate::rows::{self, Civil, RowSetBuilder};
use crate::{Column, SqlError, ValueKind};

/// A column value as the server sent it; `None` is SQL `NULL`.
pub(crate) struct Raw<'a>(pub Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(Some(raw)))
    }

    fn from_sql_null(_ty: &Type) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(None))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decode {
    Bool,
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    /// The binary format is the text (text types, `json`, enums, `xml`) or the bytes (`bytea`).
    Verbatim,
    Jsonb,
    Date,
    Time,
    Timestamp,
    TimestampTz,
    Uuid,
}

/// How one result column is decoded, and what the plugin is told it is.
#[derive(Debug)]
pub(crate) struct Plan {
    pub column: Column,
    decode: Decode,
}

/// Plans every column of a prepared statement, or refuses the statement at the first column
/// the host cannot decode.
pub(crate) fn plan_columns(columns: &[tokio_postgres::Column]) -> Result<Vec<Plan>, SqlError> {
    columns
        .iter()
        .map(|column| {
            let ty = column.type_();
            let (decode, kind) = decoder(ty).ok_or_else(|| {
                SqlError::Refused(format!(
                    "column {:?} has type {}, which the host cannot return: cast it in the query, e.g. CAST(... AS text)",
                    column.name(),
                    shown_type(ty)
                ))
            })?;
            Ok(Plan { column: Column { name: column.name().to_owned(), kind, type_name: ty.name().to_owned() }, decode })
        })
        .collect()
}

fn decoder(ty: &Type) -> Option<(Decode, ValueKind)> {
    let found = match *ty {
        Type::BOOL => (Decode::Bool, ValueKind::Boolean),
        Type::INT2 => (Decode::Int2, ValueKind::Integer),
        Type::INT4 => (Decode::Int4, ValueKind::Integer),
        Type::INT8 => (Decode::Int8, ValueKind::Integer),
        Type::OID => (Decode::Oid, ValueKind::Integer),
        Type::FLOAT4 => (Decode::Float4, ValueKind::Float),
        Type::FLOAT8 => (Decode::Float8, ValueKind::Float),
        Type::NUMERIC => (Decode::Numeric, ValueKind::Decimal),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::CHAR | Type::UNKNOWN => {
            (Decode::Verbatim, ValueKind::Text)
        }
        Type::BYTEA => (Decode::Verbatim, ValueKind::Bytes),
        Type::DATE => (Decode::Date, ValueKind::Date),
        Type::TIME => (Decode::Time, ValueKind::Time),
        Type::TIMESTAMP => (Decode::Timestamp, ValueKind::Timestamp),
        Type::TIMESTAMPTZ => (Decode::TimestampTz, ValueKind::TimestampTz),
        Type::JSON => (Decode::Verbatim, ValueKind::Json),
        Type::JSONB => (Decode::Jsonb, ValueKind::Json),
        Type::UUID => (Decode::Uuid, ValueKind::Uuid),
        Type::XML => (Decode::Verbatim, ValueKind::Other),
        ref other => match other.kind() {
            // A domain is sent as the type under it.
            Kind::Domain(inner) => return decoder(inner),
            // An enum's binary format is its label.
            Kind::Enum(_) => (Decode::Verbatim, ValueKind::Other),
            Kind::Simple if other.name() == "citext" => (Decode::Verbatim, ValueKind::Text),
            _ => return None,
        },
    };
    Some(found)
}

/// `int4[]` rather than PostgreSQL's internal `_int4`, for messages.
fn shown_type(ty: &Type) -> String {
    match ty.kind() {
        Kind::Array(element) => format!("{}[]", element.name()),
        _ => ty.name().to_owned(),
    }
}

impl Plan {
    /// Appends one non-NULL value to `out`.
    pub(crate) fn write(&self, raw: &[u8], out: &mut RowSetBuilder) -> Result<(), SqlError> {
        let text = match self.decode {
            Decode::Verbatim => return out.push_bytes(raw),
            Decode::Jsonb => match raw.split_first() {
                Some((1, json)) => return out.push_bytes(json),
                _ => return Err(self.malformed("unknown jsonb format version")),
            },
            Decode::Bool => match raw {
                [0] => "false".to_owned(),
                [_] => "true".to_owned(),
                _ => return Err(self.malformed("a boolean is one byte")),
            },
            Decode::Int2 => i16::from_be_bytes(self.fixed(raw)?).to_string(),
            Decode::Int4 => i32::from_be_bytes(self.fixed(raw)?).to_string(),
            Decode::Int8 => i64::from_be_bytes(self.fixed(raw)?).to_string(),
            Decode::Oid => u32::from_be_bytes(self.fixed(raw)?).to_string(),
            Decode::Float4 => rows::float32_text(f32::from_be_bytes(self.fixed(raw)?)),
            Decode::Float8 => rows::float_text(f64::from_be_bytes(self.fixed(raw)?)),
            Decode::Numeric => numeric_text(raw).map_err(|detail| self.malformed(detail))?,
            Decode::Date => date_text(i32::from_be_bytes(self.fixed(raw)?)).ok_or_else(|| self.malformed("date out of range"))?,
            Decode::Time => {
                let micros = i64::from_be_bytes(self.fixed(raw)?);
                let micros = u64::try_from(micros).map_err(|_| self.malformed("negative time of day"))?;
                rows::time_text(
                    false,
                    micros / 3_600_000_000,
                    ((micros / 60_000_000) % 60) as u32,
                    ((micros / 1_000_000) % 60) as u32,
                    (micros % 1_000_000) as u32,
                )
            }
            Decode::Timestamp | Decode::TimestampTz => {
                let micros = i64::from_be_bytes(self.fixed(raw)?);
                timestamp_text(micros, self.decode == Decode::TimestampTz).ok_or_else(|| self.malformed("timestamp out of range"))?
            }
            Decode::Uuid => uuid::Uuid::from_slice(raw).map_err(|_| self.malformed("a uuid is 16 bytes"))?.to_string(),
        };
        out.push_text(&text)
    }

    fn fixed<const N: usize>(&self, raw: &[u8]) -> Result<[u8; N], SqlError> {
        raw.try_into().map_err(|_| self.malformed(format!("expected {N} bytes, got {}", raw.len())))
    }

    fn malformed(&self, detail: impl std::fmt::Display) -> SqlError {
        SqlError::Refused(format!(
            "column {:?} ({}) came back in a form the host cannot read ({detail}): cast it to text in the query",
            self.column.name, self.column.type_name
        ))
    }
}

/// Days since 2000-01-01; PostgreSQL's `infinity` and `-infinity` are the extreme values.
fn date_text(days: i32) -> Option<String> {
    match days {
        i32::MAX => Some("infinity".to_owned()),
        i32::MIN => Some("-infinity".to_owned()),
        _ => {
            let epoch = NaiveDate::from_ymd_opt(2000, 1, 1)?;
            let date = epoch.checked_add_signed(TimeDelta::try_days(i64::from(days))?)?;
            Some(Civil::from_naive(&date.and_hms_opt(0, 0, 0)?).date_text())
        }
    }
}

/// Microseconds since 2000-01-01 00:00:00 (UTC for `timestamptz`).
fn timestamp_text(micros: i64, zulu: bool) -> Option<String> {
    match micros {
        i64::MAX => Some("infinity".to_owned()),
        i64::MIN => Some("-infinity".to_owned()),
        _ => {
            let epoch = NaiveDate::from_ymd_opt(2000, 1, 1)?.and_hms_opt(0, 0, 0)?;
            let value = epoch.checked_add_signed(TimeDelta::microseconds(micros))?;
            Some(Civil::from_naive(&value).timestamp_text(zulu))
        }
    }
}

const NUMERIC_NEGATIVE: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_POSITIVE_INFINITY: u16 = 0xD000;
const NUMERIC_NEGATIVE_INFINITY: u16 = 0xF000;

/// NUMERIC's binary format (base-10000 digits, a weight, a sign, the display scale) as
/// PostgreSQL itself prints it: every digit, the scale's trailing zeros kept (`12.50`).
fn numeric_text(raw: &[u8]) -> Result<String, String> {
    let word = |at: usize| raw.get(at..at + 2).map(|pair| u16::from_be_bytes([pair[0], pair[1]]));
    let header = (word(0), word(2), word(4), word(6));
    let (Some(count), Some(weight), Some(sign), Some(scale)) = header else {
        return Err("a numeric has an 8-byte header".to_owned());
    };
    let count = usize::from(count);
    let weight = i32::from(weight as i16);
    if raw.len() != 8 + 2 * count {
        return Err(format!("a numeric with {count} digit groups is {} bytes, got {}", 8 + 2 * count, raw.len()));
    }
    let mut groups = Vec::with_capacity(count);
    for index in 0..count {
        let group = word(8 + 2 * index).unwrap_or(0);
        if group > 9999 {
            return Err(format!("digit group {group} is not below 10000"));
        }
        groups.push(group);
    }
    let negative = match sign {
        0 => false,
        NUMERIC_NEGATIVE => true,
        NUMERIC_NAN => return Ok("NaN".to_owned()),
        NUMERIC_POSITIVE_INFINITY => return Ok("Infinity".to_owned()),
        NUMERIC_NEGATIVE_INFINITY => return Ok("-Infinity".to_owned()),
        other => return Err(format!("unknown numeric sign {other:#06x}")),
    };
    // Group `i` is worth 10000^(weight - i); groups outside `groups` are zero.
    let group = |index: i32| usize::try_from(index).ok().and_then(|index| groups.get(index)).copied().unwrap_or(0);
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        for index in 0..=weight {
            // Writing to a String cannot fail.
            let _ = if index == 0 { write!(out, "{}", group(index)) } else { write!(out, "{:04}", group(index)) };
        }
    }
    let scale = usize::from(scale);
    if scale > 0 {
        let mut fraction = String::with_capacity(scale + 4);
        let mut index = weight + 1;
        while fraction.len() < scale {
            let _ = write!(fraction, "{:04}", group(index));
            index += 1;
        }
        fraction.truncate(scale);
        out.push('.');
        out.push_str(&fraction);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NUMERIC's binary form, as the server would send it.
    fn numeric(weight: i16, sign: u16, scale: u16, groups: &[u16]) -> Vec<u8> {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(groups.len() as u16).to_be_bytes());
        raw.extend_from_slice(&weight.to_be_bytes());
        raw.extend_from_slice(&sign.to_be_bytes());
        raw.extend_from_slice(&scale.to_be_bytes());
        for group in groups {
            raw.extend_from_slice(&group.to_be_bytes());
        }
        raw
    }

    #[test]
    fn numeric_keeps_every_digit_and_the_scale() {
        assert_eq!(numeric_text(&numeric(0, NUMERIC_NEGATIVE, 2, &[12, 5000])).unwrap(), "-12.50");
        assert_eq!(numeric_text(&numeric(-1, 0, 3, &[10])).unwrap(), "0.001");
        assert_eq!(numeric_text(&numeric(1, 0, 0, &[1])).unwrap(), "10000");
        assert_eq!(numeric_text(&numeric(0, 0, 0, &[])).unwrap(), "0");
        assert_eq!(numeric_text(&numeric(0, 0, 4, &[])).unwrap(), "0.0000");
        assert_eq!(numeric_text(&numeric(-2, 0, 6, &[1200])).unwrap(), "0.000012");
        // 40 significant digits: far beyond a 128-bit decimal.
        let big = numeric(9, 0, 0, &[1234, 5678, 9012, 3456, 7890, 1234, 5678, 9012, 3456, 7890]);
        assert_eq!(numeric_text(&big).unwrap(), "1234567890123456789012345678901234567890");
        assert_eq!(numeric_text(&numeric(0, NUMERIC_NAN, 0, &[])).unwrap(), "NaN");
        assert_eq!(numeric_text(&numeric(0, NUMERIC_NEGATIVE_INFINITY, 0, &[])).unwrap(), "-Infinity");
        assert!(numeric_text(&[0, 1]).is_err());
        assert!(numeric_text(&numeric(0, 0, 0, &[10_000])).is_err());
    }

    #[test]
    fn dates_and_timestamps_count_from_2000_with_infinities() {
        assert_eq!(date_text(0).unwrap(), "2000-01-01");
        assert_eq!(date_text(-1).unwrap(), "1999-12-31");
        assert_eq!(date_text(i32::MAX).unwrap(), "infinity");
        assert_eq!(timestamp_text(0, false).unwrap(), "2000-01-01T00:00:00");
        assert_eq!(timestamp_text(1_500_000, true).unwrap(), "2000-01-01T00:00:01.5Z");
        assert_eq!(timestamp_text(i64::MIN, true).unwrap(), "-infinity");
    }

    #[test]
    fn values_decode_to_the_canonical_texts() {
        let plans = |ty: Type| Plan { column: Column { name: "c".into(), kind: ValueKind::Other, type_name: ty.name().into() }, decode: decoder(&ty).unwrap().0 };
        let text = |ty: Type, raw: &[u8]| {
            let mut out = RowSetBuilder::new(Vec::new());
            plans(ty).write(raw, &mut out).unwrap();
            String::from_utf8(out.finish().data).unwrap()
        };
        assert_eq!(text(Type::BOOL, &[1]), "true");
        assert_eq!(text(Type::INT8, &(-42i64).to_be_bytes()), "-42");
        assert_eq!(text(Type::FLOAT8, &f64::NAN.to_be_bytes()), "NaN");
        assert_eq!(text(Type::FLOAT4, &0.1f32.to_be_bytes()), "0.1");
        assert_eq!(text(Type::TIME, &49_500_123_456i64.to_be_bytes()), "13:45:00.123456");
        assert_eq!(text(Type::JSONB, b"\x01{\"a\": 1}"), "{\"a\": 1}");
        let uuid = [0x67, 0xe5, 0x50, 0x44, 0x10, 0xb1, 0x42, 0x6f, 0x92, 0x47, 0xbb, 0x68, 0x0e, 0x5f, 0xe0, 0xc8];
        assert_eq!(text(Type::UUID, &uuid), "67e55044-10b1-426f-9247-bb680e5fe0c8");
        let mut out = RowSetBuilder::new(Vec::new());
        assert!(matches!(plans(Type::INT4).write(&[0, 1], &mut out), Err(SqlError::Refused(m)) if m.contains("cast it to text")));
        assert_eq!(decoder(&Type::INTERVAL), None);
        assert_eq!(decoder(&Type::INT4_ARRAY), None);
        assert_eq!(shown_type(&Type::INT4_ARRAY), "int4[]");
    }
}
