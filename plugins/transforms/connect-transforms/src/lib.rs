//! `connect-transforms`: Kafka Connect's sixteen built-in single message transforms in one
//! component, working on JSON records. The host registers it under sixteen names and hands
//! `create` an envelope, `{"transform": NAME, "config": {...}}`; the user's config is parsed
//! into that transform's own type, so an error names the user's key (`spec.age`), never
//! `config.spec.age`. See this plugin's README and `docs/` for each transform.
//!
//! Each transform lives in its own module with its config type beside its logic; adding one
//! means a module and a line in [`TRANSFORMS`].

mod cast;
mod drop_headers;
mod extract_field;
mod filter;
mod flatten;
mod header_from;
mod hoist_field;
mod insert_field;
mod insert_header;
mod javatime;
mod mask_field;
mod part;
mod path;
mod regex_router;
mod replace_field;
mod set_schema_metadata;
mod timestamp_converter;
mod timestamp_router;
mod value_to_key;

#[cfg(test)]
mod tests;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::prelude::*;

/// One configured transform, applied per record.
trait Step {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError>;
}

/// A transform with its own config type.
trait Smt: Step + Sized + 'static {
    type Config: DeserializeOwned;
    fn create(config: Self::Config) -> Result<Self, ConfigError>;
}

/// Parses `config` (JSON text) into `S`'s config and builds it.
fn build<S: Smt>(config: &str) -> Result<Box<dyn Step>, ConfigError> {
    let config = turnpike_sdk::parse_config::<S::Config>(config)?;
    Ok(Box::new(S::create(config)?))
}

type Builder = fn(&str) -> Result<Box<dyn Step>, ConfigError>;

/// The sixteen names the host registers, and how each is built.
const TRANSFORMS: [(&str, Builder); 16] = [
    ("cast", build::<cast::Cast>),
    ("drop-headers", build::<drop_headers::DropHeaders>),
    ("extract-field", build::<extract_field::ExtractField>),
    ("filter", build::<filter::Filter>),
    ("flatten", build::<flatten::Flatten>),
    ("header-from", build::<header_from::HeaderFrom>),
    ("hoist-field", build::<hoist_field::HoistField>),
    ("insert-field", build::<insert_field::InsertField>),
    ("insert-header", build::<insert_header::InsertHeader>),
    ("mask-field", build::<mask_field::MaskField>),
    ("regex-router", build::<regex_router::RegexRouter>),
    ("replace-field", build::<replace_field::ReplaceField>),
    ("set-schema-metadata", build::<set_schema_metadata::SetSchemaMetadata>),
    ("timestamp-converter", build::<timestamp_converter::TimestampConverter>),
    ("timestamp-router", build::<timestamp_router::TimestampRouter>),
    ("value-to-key", build::<value_to_key::ValueToKey>),
];

/// What the host hands `create` for a preset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// One of the sixteen names.
    pub transform: String,
    /// The user's config; absent or null means `{}`.
    #[serde(default)]
    pub config: Option<Value>,
}

/// The plugin: the transform the envelope named, configured.
pub struct ConnectTransforms {
    name: &'static str,
    step: Box<dyn Step>,
}

impl Transform for ConnectTransforms {
    type Config = Envelope;

    fn create(envelope: Envelope) -> Result<Self, ConfigError> {
        let Some(&(name, build)) = TRANSFORMS.iter().find(|(name, _)| *name == envelope.transform) else {
            let names: Vec<&str> = TRANSFORMS.iter().map(|(name, _)| *name).collect();
            return Err(ConfigError::at(
                "transform",
                format!("unknown transform {:?}; expected one of {}", envelope.transform, names.join(", ")),
            ));
        };
        let config = match envelope.config {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(config) => config.to_string(),
        };
        Ok(Self { name, step: build(&config)? })
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        // One component runs under sixteen names: say which one failed.
        self.step.apply(record, out).map_err(|e| RecordError { kind: e.kind, message: format!("{}: {}", self.name, e.message) })
    }
}

export_transform!(ConnectTransforms);
