//! `cast` (Kafka Connect's `Cast`): casts the whole key/value, or fields of it, to a type.

use serde::Deserialize;
use serde_json::{Number, Value};
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, describe, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// A type name, or a map of path to type name.
    spec: Value,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Type {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    /// Turnpike's addition: any value becomes its JSON text.
    Json,
}

impl Type {
    fn name(self) -> &'static str {
        match self {
            Type::Int8 => "int8",
            Type::Int16 => "int16",
            Type::Int32 => "int32",
            Type::Int64 => "int64",
            Type::Float32 => "float32",
            Type::Float64 => "float64",
            Type::Boolean => "boolean",
            Type::String => "string",
            Type::Json => "json",
        }
    }

    fn parse(word: Value, key: &str) -> Result<Self, ConfigError> {
        serde_json::from_value(word).map_err(|e| ConfigError::at(key, e.to_string()))
    }
}

enum Spec {
    Whole(Type),
    Fields(Vec<(Path, Type)>),
}

pub struct Cast {
    spec: Spec,
    on: On,
    on_non_json: NonJson,
}

impl Smt for Cast {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let spec = match config.spec {
            word @ Value::String(_) => Spec::Whole(Type::parse(word, "spec")?),
            Value::Object(fields) if !fields.is_empty() => Spec::Fields(
                fields
                    .into_iter()
                    .map(|(path, word)| {
                        let key = format!("spec.{path}");
                        Ok((Path::any(&path, &key)?, Type::parse(word, &key)?))
                    })
                    .collect::<Result<_, ConfigError>>()?,
            ),
            Value::Object(_) => return Err(ConfigError::at("spec", "name at least one field to cast, or give one type for the whole key or value")),
            other => {
                return Err(ConfigError::at(
                    "spec",
                    format!("expected a type (such as int32) or a map of field paths to types, not {}", describe(&other)),
                ))
            }
        };
        Ok(Self { spec, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for Cast {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        match &self.spec {
            Spec::Whole(to) => value = cast(value, *to, &format!("the {}", self.on))?,
            Spec::Fields(fields) => {
                part::require_container(&value, self.on, "to cast fields of")?;
                for (path, to) in fields {
                    path.for_each_mut::<RecordError>(&mut value, &mut |v| {
                        *v = cast(v.take(), *to, &path.to_string())?;
                        Ok(())
                    })?;
                }
            }
        }
        part::emit(record, out, self.on, &value);
        Ok(())
    }
}

/// Casts one value; `what` names it in errors (`"age"`, `the value`).
fn cast(value: Value, to: Type, what: &str) -> Result<Value, RecordError> {
    let refuse = |why: &str| RecordError::invalid(format!("{what} is {}, {why}", describe(&value)));
    match (to, &value) {
        (_, Value::Null) => Ok(Value::Null),
        (Type::Json, v) => Ok(Value::String(v.to_string())),
        (Type::String, Value::String(_)) => Ok(value),
        (Type::String, v) => Ok(Value::String(v.to_string())),
        (_, Value::Object(_) | Value::Array(_)) => Err(refuse(&format!("which cannot be cast to {} (only to string or json)", to.name()))),
        (Type::Boolean, Value::Bool(_)) => Ok(value),
        (Type::Boolean, Value::Number(n)) => Ok(Value::Bool(n.as_f64() != Some(0.0))),
        (Type::Boolean, Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(refuse("which is not true or false")),
        },
        (Type::Float32 | Type::Float64, v) => {
            let f = number(v).map(|n| n.1).ok_or_else(|| refuse("which is not a number"))?;
            let f = if to == Type::Float32 { narrow(f).ok_or_else(|| refuse("which is out of range for float32"))? } else { f };
            Number::from_f64(f).map(Value::Number).ok_or_else(|| refuse(&format!("which is out of range for {}", to.name())))
        }
        (_, v) => {
            let (lo, hi) = match to {
                Type::Int8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
                Type::Int16 => (i64::from(i16::MIN), i64::from(i16::MAX)),
                Type::Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
                _ => (i64::MIN, i64::MAX),
            };
            let (exact, f) = number(v).ok_or_else(|| refuse("which is not a number"))?;
            // Toward zero, as Java's narrowing casts do; then the type's range.
            let whole = match exact {
                Some(i) => i,
                None if f.is_finite() && f.abs() < 1e20 => f.trunc() as i128,
                None => i128::MAX,
            };
            match i64::try_from(whole).ok().filter(|i| (lo..=hi).contains(i)) {
                Some(i) => Ok(Value::Number(i.into())),
                None => Err(refuse(&format!("which is out of range for {} ({lo} to {hi})", to.name()))),
            }
        }
    }
}

/// A scalar read as a number: its exact integer (if it is one) and its float value. Booleans
/// are 1 and 0; texts are parsed after trimming.
fn number(v: &Value) -> Option<(Option<i128>, f64)> {
    match v {
        Value::Bool(b) => Some((Some(i128::from(*b)), f64::from(u8::from(*b)))),
        Value::Number(n) => {
            let exact = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            Some((exact, n.as_f64()?))
        }
        Value::String(s) => {
            let s = s.trim();
            let f = s.parse::<f64>().ok().filter(|f| f.is_finite())?;
            Some((s.parse::<i128>().ok(), f))
        }
        _ => None,
    }
}

/// `f` as a float32, written back as the shortest decimal that float32 prints (`0.1`, not
/// `0.10000000149011612`), so the JSON shows the value a float32 reader sees.
fn narrow(f: f64) -> Option<f64> {
    let single = f as f32;
    single.is_finite().then(|| single.to_string().parse().unwrap_or(f64::from(single)))
}
