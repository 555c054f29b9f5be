//! Plugin parameters turned into what a prepared PostgreSQL statement expects at each `$n`.
//!
//! The prepared statement tells the parameter types, so a `text` param read from a row set
//! (`2026-12-01T13:45:00Z`, `-12.50`, a UUID) goes back as the type the column has. The
//! common types are parsed here, so a value that does not fit is refused naming `$n`, the
//! type and the value; NUMERIC (exact, any size), JSON and every type without a parser here
//! (enums, intervals, arrays, inet…) are sent in PostgreSQL's text format, and the server
//! reads them with the type's own input function.

use std::error::Error;

use bytes::BytesMut;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use tokio_postgres::types::{to_sql_checked, Format, IsNull, Kind, ToSql, Type};

use crate::{rows, Param, SqlError};

/// One bound value.
#[derive(Debug)]
pub(crate) enum PgValue {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Oid(u32),
    Float4(f32),
    Float8(f64),
    Date(NaiveDate),
    Time(NaiveTime),
    Timestamp(NaiveDateTime),
    TimestampTz(DateTime<Utc>),
    Uuid(uuid::Uuid),
    /// Sent in text format: the server parses it as the parameter's type.
    Text(String),
}

impl ToSql for PgValue {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            PgValue::Null => Ok(IsNull::Yes),
            PgValue::Bool(value) => <bool as ToSql>::to_sql(value, ty, out),
            PgValue::Int2(value) => <i16 as ToSql>::to_sql(value, ty, out),
            PgValue::Int4(value) => <i32 as ToSql>::to_sql(value, ty, out),
            PgValue::Int8(value) => <i64 as ToSql>::to_sql(value, ty, out),
            PgValue::Oid(value) => <u32 as ToSql>::to_sql(value, ty, out),
            PgValue::Float4(value) => <f32 as ToSql>::to_sql(value, ty, out),
            PgValue::Float8(value) => <f64 as ToSql>::to_sql(value, ty, out),
            PgValue::Date(value) => <NaiveDate as ToSql>::to_sql(value, ty, out),
            PgValue::Time(value) => <NaiveTime as ToSql>::to_sql(value, ty, out),
            PgValue::Timestamp(value) => <NaiveDateTime as ToSql>::to_sql(value, ty, out),
            PgValue::TimestampTz(value) => <DateTime<Utc> as ToSql>::to_sql(value, ty, out),
            PgValue::Uuid(value) => <uuid::Uuid as ToSql>::to_sql(value, ty, out),
            PgValue::Text(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
        }
    }

    /// Every value is made for the type of its own `$n` (see [`convert_all`]).
    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();

    fn encode_format(&self, _ty: &Type) -> Format {
        match self {
            PgValue::Text(_) => Format::Text,
            _ => Format::Binary,
        }
    }
}

/// Converts `params` for a statement whose parameter types are `expected`.
pub(crate) fn convert_all(expected: &[Type], params: &[Param]) -> Result<Vec<PgValue>, SqlError> {
    if expected.len() != params.len() {
        return Err(SqlError::Refused(format!(
            "the statement has {} parameter(s) ($1, $2…) but {} value(s) were given: pass one value per $n",
            expected.len(),
            params.len()
        )));
    }
    expected.iter().zip(params).enumerate().map(|(index, (ty, param))| convert(index + 1, ty, param)).collect()
}

fn convert(number: usize, ty: &Type, param: &Param) -> Result<PgValue, SqlError> {
    let base = base_type(ty);
    let converted = match param {
        Param::Null => Some(PgValue::Null),
        Param::Boolean(value) => from_bool(*value, base),
        Param::Integer(value) => from_integer(*value, base),
        Param::Float(value) => from_float(*value, base),
        Param::Text(text) => from_text(text, base),
    };
    converted.ok_or_else(|| {
        let given = match param {
            Param::Null => "NULL".to_owned(),
            Param::Boolean(value) => format!("the boolean {value}"),
            Param::Integer(value) => format!("the integer {value}"),
            Param::Float(value) => format!("the float {}", rows::float_text(*value)),
            Param::Text(text) => format!("the text {:?}", shorten(text)),
        };
        SqlError::Refused(format!(
            "parameter ${number} does not fit: the statement expects {} there, and {given} is not one",
            ty.name()
        ))
    })
}

/// A domain is sent as the type under it.
fn base_type(ty: &Type) -> &Type {
    match ty.kind() {
        Kind::Domain(inner) => base_type(inner),
        _ => ty,
    }
}

fn is_text_like(ty: &Type) -> bool {
    match *ty {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => true,
        ref other => other.name() == "citext",
    }
}

fn from_bool(value: bool, ty: &Type) -> Option<PgValue> {
    match *ty {
        Type::BOOL => Some(PgValue::Bool(value)),
        ref other if is_text_like(other) => Some(PgValue::Text(value.to_string())),
        _ => None,
    }
}

fn from_integer(value: i64, ty: &Type) -> Option<PgValue> {
    match *ty {
        Type::INT2 => i16::try_from(value).ok().map(PgValue::Int2),
        Type::INT4 => i32::try_from(value).ok().map(PgValue::Int4),
        Type::INT8 => Some(PgValue::Int8(value)),
        Type::OID => u32::try_from(value).ok().map(PgValue::Oid),
        Type::FLOAT4 => Some(PgValue::Float4(value as f32)),
        Type::FLOAT8 => Some(PgValue::Float8(value as f64)),
        Type::NUMERIC => Some(PgValue::Text(value.to_string())),
        ref other if is_text_like(other) => Some(PgValue::Text(value.to_string())),
        _ => None,
    }
}

fn from_float(value: f64, ty: &Type) -> Option<PgValue> {
    match *ty {
        Type::FLOAT4 => Some(PgValue::Float4(value as f32)),
        Type::FLOAT8 => Some(PgValue::Float8(value)),
        Type::NUMERIC => Some(PgValue::Text(numeric_of_float(value))),
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => whole(value).and_then(|whole| from_integer(whole, ty)),
        ref other if is_text_like(other) => Some(PgValue::Text(rows::float_text(value))),
        _ => None,
    }
}

/// `value` as an `i64` when it is a whole number in range.
fn whole(value: f64) -> Option<i64> {
    // 2^63 is exactly representable; anything from it up does not fit an i64.
    let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&value);
    (value.is_finite() && value.fract() == 0.0 && in_range).then_some(value as i64)
}

/// NUMERIC's own spelling of a float (`Infinity`, not `inf`).
fn numeric_of_float(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{value}")
    }
}

fn from_text(text: &str, ty: &Type) -> Option<PgValue> {
    let trimmed = text.trim();
    let infinite = || trimmed.eq_ignore_ascii_case("infinity") || trimmed.eq_ignore_ascii_case("-infinity");
    match *ty {
        Type::BOOL => parse_bool(trimmed).map(PgValue::Bool),
        Type::INT2 => trimmed.parse().ok().map(PgValue::Int2),
        Type::INT4 => trimmed.parse().ok().map(PgValue::Int4),
        Type::INT8 => trimmed.parse().ok().map(PgValue::Int8),
        Type::OID => trimmed.parse().ok().map(PgValue::Oid),
        Type::FLOAT4 => trimmed.parse().ok().map(PgValue::Float4),
        Type::FLOAT8 => trimmed.parse().ok().map(PgValue::Float8),
        Type::NUMERIC => is_numeric_literal(trimmed).then(|| PgValue::Text(trimmed.to_owned())),
        Type::DATE if infinite() => Some(PgValue::Text(trimmed.to_owned())),
        Type::DATE => NaiveDate::parse_from_str(trimmed, "%Y-%m-%d").ok().map(PgValue::Date),
        Type::TIME => NaiveTime::parse_from_str(trimmed, "%H:%M:%S%.f")
            .or_else(|_| NaiveTime::parse_from_str(trimmed, "%H:%M"))
            .ok()
            .map(PgValue::Time),
        Type::TIMESTAMP | Type::TIMESTAMPTZ if infinite() => Some(PgValue::Text(trimmed.to_owned())),
        // An offset on a plain TIMESTAMP is applied: the value is the UTC wall-clock time.
        Type::TIMESTAMP => rows::parse_timestamp(trimmed).map(|(naive, _)| PgValue::Timestamp(naive)),
        // No offset on a TIMESTAMPTZ means UTC, the session's time zone.
        Type::TIMESTAMPTZ => rows::parse_timestamp(trimmed).map(|(naive, _)| PgValue::TimestampTz(naive.and_utc())),
        Type::UUID => uuid::Uuid::parse_str(trimmed).ok().map(PgValue::Uuid),
        Type::JSON | Type::JSONB => serde_json::from_str::<serde_json::Value>(text).ok().map(|_| PgValue::Text(text.to_owned())),
        // Text types, bytea (`\x…`), enums, intervals, arrays, ranges, inet…: the server's
        // input function decides.
        _ => Some(PgValue::Text(text.to_owned())),
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// What NUMERIC's input accepts: `-12.50`, `.5`, `1e-3`, `NaN`, `Infinity`.
fn is_numeric_literal(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if ["nan", "infinity", "inf"].iter().any(|word| unsigned.eq_ignore_ascii_case(word)) {
        return true;
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    let mantissa_ok = digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|exp| {
        let exp = exp.strip_prefix(['-', '+']).unwrap_or(exp);
        !exp.is_empty() && digits(exp)
    });
    mantissa_ok && exponent_ok
}

/// A value for an error message: long texts cut at 60 characters.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(ty: Type, param: Param) -> Result<PgValue, SqlError> {
        convert_all(&[ty], &[param]).map(|mut values| values.remove(0))
    }

    #[test]
    fn canonical_texts_go_back_as_the_type_expected() {
        let instant = rows::parse_timestamp("2026-12-01T13:45:00.123456").unwrap().0;
        assert!(matches!(one(Type::INT8, Param::Text("42".into())), Ok(PgValue::Int8(42))));
        assert!(matches!(one(Type::BOOL, Param::Text("false".into())), Ok(PgValue::Bool(false))));
        assert!(matches!(one(Type::FLOAT8, Param::Text("NaN".into())), Ok(PgValue::Float8(v)) if v.is_nan()));
        assert!(matches!(one(Type::FLOAT8, Param::Text("-inf".into())), Ok(PgValue::Float8(v)) if v == f64::NEG_INFINITY));
        assert!(matches!(one(Type::NUMERIC, Param::Text("-12.50".into())), Ok(PgValue::Text(t)) if t == "-12.50"));
        assert!(matches!(one(Type::TIMESTAMPTZ, Param::Text("2026-12-01T13:45:00.123456Z".into())), Ok(PgValue::TimestampTz(t)) if t.naive_utc() == instant));
        assert!(matches!(one(Type::TIMESTAMPTZ, Param::Text("2026-12-01 14:45:00.123456+01:00".into())), Ok(PgValue::TimestampTz(t)) if t.naive_utc() == instant));
        assert!(matches!(one(Type::TIMESTAMP, Param::Text("2026-12-01T13:45:00.123456".into())), Ok(PgValue::Timestamp(t)) if t == instant));
        assert!(matches!(one(Type::DATE, Param::Text("2026-12-01".into())), Ok(PgValue::Date(_))));
        assert!(matches!(one(Type::TIME, Param::Text("13:45:00.5".into())), Ok(PgValue::Time(_))));
        assert!(matches!(one(Type::UUID, Param::Text("67E55044-10B1-426F-9247-BB680E5FE0C8".into())), Ok(PgValue::Uuid(_))));
        assert!(matches!(one(Type::JSONB, Param::Text("{\"a\": 1.50}".into())), Ok(PgValue::Text(t)) if t == "{\"a\": 1.50}"));
        assert!(matches!(one(Type::INTERVAL, Param::Text("1 day".into())), Ok(PgValue::Text(_))));
        assert!(matches!(one(Type::INT2, Param::Integer(7)), Ok(PgValue::Int2(7))));
        assert!(matches!(one(Type::NUMERIC, Param::Integer(7)), Ok(PgValue::Text(t)) if t == "7"));
        assert!(matches!(one(Type::INT4, Param::Float(3.0)), Ok(PgValue::Int4(3))));
        assert!(matches!(one(Type::INT4, Param::Null), Ok(PgValue::Null)));
    }

    #[test]
    fn a_value_that_does_not_fit_is_refused_naming_the_parameter_type_and_value() {
        for (ty, param, says) in [
            (Type::INT4, Param::Text("abc".into()), "parameter $1 does not fit: the statement expects int4 there, and the text \"abc\""),
            (Type::INT2, Param::Integer(70_000), "expects int2 there, and the integer 70000"),
            (Type::INT8, Param::Float(1.5), "the float 1.5"),
            (Type::UUID, Param::Integer(1), "expects uuid"),
            (Type::NUMERIC, Param::Text("12,5".into()), "expects numeric"),
            (Type::TIMESTAMPTZ, Param::Text("yesterday".into()), "expects timestamptz"),
            (Type::JSON, Param::Text("{oops".into()), "expects json"),
            (Type::BOOL, Param::Text("maybe".into()), "expects bool"),
        ] {
            match one(ty, param) {
                Err(SqlError::Refused(message)) => assert!(message.contains(says), "{message}"),
                other => panic!("expected Refused containing {says:?}, got {other:?}"),
            }
        }
        match convert_all(&[Type::INT4, Type::TEXT], &[Param::Integer(1)]) {
            Err(SqlError::Refused(message)) => assert!(message.contains("2 parameter(s)") && message.contains("1 value(s)"), "{message}"),
            other => panic!("expected Refused, got {other:?}"),
        }
    }

    #[test]
    fn numeric_literals_are_checked_before_the_server_sees_them() {
        for good in ["0", "-12.50", ".5", "5.", "1e-3", "+2E10", "NaN", "-Infinity"] {
            assert!(is_numeric_literal(good), "{good}");
        }
        for bad in ["", ".", "1.2.3", "12,5", "1e", "e5", "0x10", "1 000"] {
            assert!(!is_numeric_literal(bad), "{bad}");
        }
    }
}
