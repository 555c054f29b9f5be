//! Asking each of a connector's plugins whether it accepts its configuration, without
//! running the connector: each plugin's `create` runs once in a fresh instance.

use std::time::Duration;

use turnpike_config::{ConnectorConfig, Problem};
use turnpike_runtime::{CreateError, InstanceLabels, PluginKind, SinkInstance, SourceInstance, TransformInstance};

use crate::registry::PluginRegistry;
use crate::supervisor::{instance_limits, resolve_kind};

/// The plugin versions the connector would run, and every problem found: unresolved
/// plugins, plugins of the wrong kind, configurations a plugin refuses, plugins that cannot
/// start.
pub(crate) async fn check_plugins(registry: &PluginRegistry, config: &ConnectorConfig) -> (Vec<String>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut labels = Vec::new();
    let mut limits = instance_limits(config).unwrap_or_default();
    // Validation only creates instances; a short deadline keeps a bad plugin from stalling it.
    limits.create_timeout = limits.create_timeout.min(Duration::from_secs(30));
    let mut steps = Vec::new();
    if let Some(s) = &config.source {
        steps.push(("source".to_owned(), &s.plugin, &s.config, PluginKind::Source));
    }
    for (i, t) in config.transforms.iter().enumerate() {
        steps.push((format!("transforms[{i}]"), &t.plugin, &t.config, PluginKind::Transform));
    }
    if let Some(s) = &config.sink {
        steps.push(("sink".to_owned(), &s.plugin, &s.config, PluginKind::Sink));
    }
    for (at, reference, plugin_config, kind) in steps {
        let info = match resolve_kind(registry, reference, kind) {
            Ok(info) => info,
            Err(fault) => {
                problems.push(Problem::new(format!("connector.{at}.plugin"), fault.message));
                continue;
            }
        };
        let labels_for = InstanceLabels { connector: format!("{} (validation)", config.name), plugin: info.label() };
        let (plugin, json, l) = (&info.plugin, plugin_config.to_string(), limits.clone());
        let created = match kind {
            PluginKind::Transform => TransformInstance::create(plugin, &json, labels_for, l).await.map(drop),
            PluginKind::Source => SourceInstance::create(plugin, &json, None, config.output(), labels_for, l).await.map(drop),
            PluginKind::Sink => SinkInstance::create(plugin, &json, labels_for, l).await.map(drop),
        };
        match created {
            Ok(()) => labels.push(info.label()),
            Err(CreateError::Config { key, message }) => {
                let key = key.map(|k| format!(".{k}")).unwrap_or_default();
                problems.push(Problem::new(format!("connector.{at}.config{key}"), format!("{}: {message}", info.label())));
            }
            Err(e) => problems.push(Problem::new(format!("connector.{at}.plugin"), format!("{} could not start: {e}", info.label()))),
        }
    }
    (labels, problems)
}
