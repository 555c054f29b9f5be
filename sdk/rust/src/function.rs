//! Function-style transforms: a stateless transform is one function from its configuration and
//! a record to what comes out, exported with [`transform_fn!`](crate::transform_fn). The
//! [`Transform`](crate::Transform) trait stays for plugins that keep state across records or
//! work across a batch; the macro writes that impl for you.

use crate::{NewRecord, Output, Record};

/// What a function-style transform may return for one record.
///
/// - a [`serde_json::Value`], a `String` or a `Vec<u8>`: the input with this value (key,
///   headers and timestamp kept);
/// - [`Unchanged`]: the input as it is;
/// - a [`NewRecord`]: a record built from scratch;
/// - `Option<T>`: `None` drops the record;
/// - `Vec<NewRecord>`: several records.
pub trait IntoOutputs {
    /// Sends what `self` stands for through `out`, for the input `record`.
    fn send(self, record: &Record<'_>, out: &mut Output<'_>);
}

/// The input record, forwarded as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unchanged;

impl IntoOutputs for Unchanged {
    fn send(self, record: &Record<'_>, out: &mut Output<'_>) {
        out.forward(record);
    }
}

impl IntoOutputs for serde_json::Value {
    fn send(self, record: &Record<'_>, out: &mut Output<'_>) {
        out.forward_with_value(record, self.to_string());
    }
}

impl IntoOutputs for String {
    fn send(self, record: &Record<'_>, out: &mut Output<'_>) {
        out.forward_with_value(record, self);
    }
}

impl IntoOutputs for Vec<u8> {
    fn send(self, record: &Record<'_>, out: &mut Output<'_>) {
        out.forward_with_value(record, self);
    }
}

impl IntoOutputs for NewRecord {
    fn send(self, _: &Record<'_>, out: &mut Output<'_>) {
        out.emit(self);
    }
}

impl IntoOutputs for Vec<NewRecord> {
    fn send(self, _: &Record<'_>, out: &mut Output<'_>) {
        for r in self {
            out.emit(r);
        }
    }
}

impl<T: IntoOutputs> IntoOutputs for Option<T> {
    fn send(self, record: &Record<'_>, out: &mut Output<'_>) {
        if let Some(inner) = self {
            inner.send(record, out);
        }
    }
}

/// Exports a function as the plugin's transform, under a type name for tests.
///
/// `transform_fn!(Redact = redact(Config))` for `fn redact(config: &Config, record: &Record)
/// -> Result<impl IntoOutputs, RecordError>`, or `transform_fn!(Upper = upper)` for a function
/// without configuration (`fn upper(record: &Record) -> Result<…, RecordError>`). `Config`
/// is deserialized from the connector's `config` as for [`Transform::Config`](crate::Transform::Config).
/// `Redact` is then a [`Transform`](crate::Transform): `testing::create::<Redact>(…)` runs it
/// natively.
///
/// ```
/// use turnpike_sdk::prelude::*;
///
/// fn upper(record: &Record) -> Result<Vec<u8>, RecordError> {
///     Ok(record.value().unwrap_or_default().to_ascii_uppercase())
/// }
///
/// transform_fn!(Upper = upper);
///
/// let out = turnpike_sdk::testing::run(&mut Upper, [TestRecord::value("hi")]).unwrap();
/// assert_eq!(out.values(), ["HI"]);
/// ```
#[macro_export]
macro_rules! transform_fn {
    ($name:ident = $f:ident($config:ty)) => {
        /// The transform `transform_fn!` made of a function.
        pub struct $name($config);

        impl $crate::Transform for $name {
            type Config = $config;
            fn create(config: $config) -> ::core::result::Result<Self, $crate::ConfigError> {
                Ok($name(config))
            }
            fn transform(&mut self, record: &$crate::Record<'_>, out: &mut $crate::Output<'_>) -> ::core::result::Result<(), $crate::RecordError> {
                $crate::IntoOutputs::send($f(&self.0, record)?, record, out);
                Ok(())
            }
        }

        $crate::export_transform!($name);
    };
    ($name:ident = $f:ident) => {
        /// The transform `transform_fn!` made of a function.
        pub struct $name;

        impl $crate::Transform for $name {
            type Config = $crate::NoConfig;
            fn create(_: $crate::NoConfig) -> ::core::result::Result<Self, $crate::ConfigError> {
                Ok($name)
            }
            fn transform(&mut self, record: &$crate::Record<'_>, out: &mut $crate::Output<'_>) -> ::core::result::Result<(), $crate::RecordError> {
                $crate::IntoOutputs::send($f(record)?, record, out);
                Ok(())
            }
        }

        $crate::export_transform!($name);
    };
}
