//! Dry runs: a transform plugin on sample records given by a person, in a fresh sandboxed
//! instance, with no broker involved. How a data scientist tries a mask before deploying it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use turnpike_runtime::{BatchBuilder, CallError, CreateError, HttpGrant, InstanceLabels, InstanceLimits, OutputView, RecordRef, Scrub, TransformInstance};

use turnpike_config::RecordSelector;

use crate::registry::PluginInfo;
use crate::selection;

/// Sample records one dry run may take.
pub const MAX_SAMPLE_RECORDS: usize = 1_000;

/// A sample input record. Text fields: samples are typed by people.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleRecord {
    /// The key; absent for a null key.
    #[serde(default)]
    pub key: Option<String>,
    /// The value; absent for a tombstone.
    #[serde(default)]
    pub value: Option<String>,
    /// Headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// An output of a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SampleOutput {
    /// Index of the sample it came from.
    pub input: u32,
    /// Key (lossy UTF-8), or null.
    pub key: Option<String>,
    /// Value (lossy UTF-8), or null.
    pub value: Option<String>,
    /// Headers (values lossy UTF-8).
    pub headers: BTreeMap<String, String>,
    /// The topic the plugin routed it to, or null for the connector's output topic.
    pub topic: Option<String>,
}

/// A sample the plugin rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SampleError {
    /// Index of the sample.
    pub input: u32,
    /// `invalid_record`, `retriable` or `fatal`.
    pub kind: &'static str,
    /// The plugin's message.
    pub message: String,
}

/// What a dry run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DryRunResult {
    /// The plugin version that ran, `name@version`.
    pub plugin: String,
    /// Outputs, in order.
    pub outputs: Vec<SampleOutput>,
    /// Rejected samples.
    pub errors: Vec<SampleError>,
}

/// Why a dry run produced nothing.
#[derive(Debug, thiserror::Error)]
pub enum DryRunError {
    /// Too many samples.
    #[error("{0} sample records given; at most {MAX_SAMPLE_RECORDS} are accepted")]
    TooMany(usize),
    /// The plugin refused its configuration.
    #[error(transparent)]
    Create(#[from] CreateError),
    /// The plugin faulted or failed the whole batch.
    #[error(transparent)]
    Call(#[from] CallError),
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `plugin` with `config` (references resolved) on `samples`. What `scrub` holds is
/// hidden in the plugin's errors (by the sandbox) and in every output shown (here): a person
/// trying a config must not see the secrets it references.
/// With a predicate (`selector`), the plugin runs on the samples it selects and the others
/// come out unchanged, as in a connector's chain.
pub(crate) async fn dry_run(
    plugin: &PluginInfo,
    config: &serde_json::Value,
    selector: Option<&RecordSelector>,
    scrub: &Scrub,
    samples: &[SampleRecord],
    http: HttpGrant,
) -> Result<DryRunResult, DryRunError> {
    if samples.len() > MAX_SAMPLE_RECORDS {
        return Err(DryRunError::TooMany(samples.len()));
    }
    let labels = InstanceLabels { connector: "(dry run)".into(), plugin: plugin.label() };
    let limits = InstanceLimits { scrub: scrub.clone(), http, ..InstanceLimits::default() };
    let mut instance = TransformInstance::create(&plugin.plugin, &config.to_string(), labels, limits).await?;
    let mut batch = BatchBuilder::default();
    for (i, s) in samples.iter().enumerate() {
        let record = RecordRef {
            key: s.key.as_deref().map(str::as_bytes),
            value: s.value.as_deref().map(str::as_bytes),
            timestamp: None,
            topic: "sample",
            partition: 0,
            offset: i as i64,
        };
        batch.push(record, s.headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes())));
    }
    let batch = batch.finish();
    let out = match selector.map(|s| selection::selected(s, &batch, &[])) {
        Some(picked) if picked.len() < samples.len() => {
            let part = match picked.is_empty() {
                true => None,
                false => Some(instance.transform(&crate::batches::subset(&batch, &picked)).await?),
            };
            selection::merge(&batch, &picked, part, Vec::new()).0
        }
        _ => instance.transform(&batch).await?,
    };
    let view = OutputView::new(&out);
    let shown = |bytes: &[u8]| scrub.clean_string(text(bytes));
    let outputs = view
        .iter()
        .map(|p| SampleOutput {
            input: p.input,
            key: p.key.map(shown),
            value: p.value.map(shown),
            headers: view.headers(&p).map(|(k, v)| (scrub.clean_string(k.to_owned()), shown(v))).collect(),
            topic: p.topic.map(|t| scrub.clean_string(t.to_owned())),
        })
        .collect();
    let errors = out.errors.iter().map(|e| SampleError { input: e.input, kind: e.error.kind.as_str(), message: scrub.clean_string(e.error.message.clone()) }).collect();
    Ok(DryRunResult { plugin: plugin.label(), outputs, errors })
}
