//! Numbers with a documented range, checked while parsing so that a bad value is reported
//! with its line and column.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An integer in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Ranged<const MIN: u64, const MAX: u64>(u64);

/// A value outside its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} is out of range {min}..={max}")]
pub struct OutOfRange {
    value: u64,
    min: u64,
    max: u64,
}

impl<const MIN: u64, const MAX: u64> Ranged<MIN, MAX> {
    /// A value known at compile time to be in range (for defaults).
    pub const fn constant(value: u64) -> Self {
        assert!(value >= MIN && value <= MAX, "default outside its own range");
        Self(value)
    }

    /// The value.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl<const MIN: u64, const MAX: u64> utoipa::PartialSchema for Ranged<MIN, MAX> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Integer)
            .minimum(Some(MIN as f64))
            .maximum(Some(MAX as f64))
            .into()
    }
}

/// Named by its range, so that schemas of different ranges do not collide.
impl<const MIN: u64, const MAX: u64> utoipa::ToSchema for Ranged<MIN, MAX> {
    fn name() -> std::borrow::Cow<'static, str> {
        format!("Integer_{MIN}_to_{MAX}").into()
    }
}

impl<const MIN: u64, const MAX: u64> TryFrom<u64> for Ranged<MIN, MAX> {
    type Error = OutOfRange;
    fn try_from(value: u64) -> Result<Self, OutOfRange> {
        if (MIN..=MAX).contains(&value) {
            Ok(Self(value))
        } else {
            Err(OutOfRange { value, min: MIN, max: MAX })
        }
    }
}

impl<const MIN: u64, const MAX: u64> From<Ranged<MIN, MAX>> for u64 {
    fn from(r: Ranged<MIN, MAX>) -> u64 {
        r.0
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Display for Ranged<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
