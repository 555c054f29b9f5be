//! Asking each of a connector's plugins whether it accepts its configuration, without
//! running the connector: each plugin's `create` runs once in a fresh instance.
//!
//! A connector that broke the rules is checked too, so that its plugins' problems are
//! reported with the rest at once; its steps and limits are then taken as written.
//!
//! Each plugin gets its config with its references resolved, as it would at start; a
//! reference that does not resolve is a problem of its own, and that plugin is not created.
//! Plugins and secrets are the connector's team's, as at start.

use std::time::Duration;

use serde_json::Value;
use turnpike_config::{resolve_at, Connector, ConnectorConfig, Flow, PluginRef, Problem, TeamName, TopicName};
use turnpike_runtime::{CreateError, HttpGrant, InstanceLabels, InstanceLimits, PluginKind, Scrub, SinkInstance, SourceInstance, TransformInstance};
use turnpike_state::SecretStore;

use crate::registry::PluginRegistry;
use crate::supervisor::{instance_limits, limits_with, resolve_kind};

/// What the plugins of one connector are checked with.
pub(crate) struct PluginChecks<'a> {
    connector: String,
    /// The connector's team: the plugins and secrets it may use.
    team: Option<&'a TeamName>,
    steps: Vec<Step<'a>>,
    limits: InstanceLimits,
}

/// One plugin of the connector, with the key its reference is written under.
struct Step<'a> {
    at: String,
    reference: &'a PluginRef,
    config: &'a Value,
    kind: StepKind<'a>,
}

#[derive(Clone, Copy)]
enum StepKind<'a> {
    /// A source, created with the topic its records go to.
    Source { output_topic: &'a str },
    Transform,
    Sink,
}

impl<'a> PluginChecks<'a> {
    /// The plugins of a validated connector, with its limits and HTTP grant.
    pub(crate) fn of(connector: &'a Connector) -> Self {
        let mut steps = Vec::new();
        if let Flow::Source { source, output } = connector.flow() {
            steps.push(Step { at: "source".into(), reference: &source.plugin, config: &source.config, kind: StepKind::Source { output_topic: output.topic.as_str() } });
        }
        steps.extend(transforms(connector.config()));
        if let Flow::Sink { sink, .. } = connector.flow() {
            steps.push(Step { at: "sink".into(), reference: &sink.plugin, config: &sink.config, kind: StepKind::Sink });
        }
        Self { connector: connector.name().to_string(), team: connector.config().team.as_ref(), steps, limits: instance_limits(connector) }
    }

    /// The plugins of a connector that broke the rules, as written, with its limits as
    /// written (the defaults when its HTTP grant does not parse, which is reported already).
    /// A source without an output topic (reported too) is created with none.
    pub(crate) fn as_written(config: &'a ConnectorConfig) -> Self {
        let mut steps = Vec::new();
        if let Some(s) = &config.source {
            let output_topic = config.output_topic.as_ref().map_or("", TopicName::as_str);
            steps.push(Step { at: "source".into(), reference: &s.plugin, config: &s.config, kind: StepKind::Source { output_topic } });
        }
        steps.extend(transforms(config));
        if let Some(s) = &config.sink {
            steps.push(Step { at: "sink".into(), reference: &s.plugin, config: &s.config, kind: StepKind::Sink });
        }
        let h = &config.http;
        let limits = match HttpGrant::parse(&h.allow) {
            Ok(http) => limits_with(&config.limits, http.with_timeouts(Duration::from_millis(h.connect_timeout_ms.get()), Duration::from_millis(h.timeout_ms.get()))),
            Err(_) => InstanceLimits::default(),
        };
        Self { connector: config.name.to_string(), team: config.team.as_ref(), steps, limits }
    }
}

fn transforms(config: &ConnectorConfig) -> impl Iterator<Item = Step<'_>> {
    config.transforms.iter().enumerate().map(|(i, t)| Step { at: format!("transforms[{i}]"), reference: &t.plugin, config: &t.config, kind: StepKind::Transform })
}

/// The plugin versions the connector would run, and every problem found: unresolved
/// plugins, plugins of the wrong kind, references that do not resolve, configurations a
/// plugin refuses, plugins that cannot start.
pub(crate) async fn check_plugins(registry: &PluginRegistry, checks: PluginChecks<'_>, secrets: &SecretStore) -> (Vec<String>, Vec<Problem>) {
    let PluginChecks { connector, team, steps, mut limits } = checks;
    let secrets = secrets.for_team(team.cloned());
    let mut problems = Vec::new();
    let mut labels = Vec::new();
    // Validation only creates instances; a short deadline keeps a bad plugin from stalling it.
    limits.create_timeout = limits.create_timeout.min(Duration::from_secs(30));
    for Step { at, reference, config, kind } in steps {
        let wanted = match kind {
            StepKind::Source { .. } => PluginKind::Source,
            StepKind::Transform => PluginKind::Transform,
            StepKind::Sink => PluginKind::Sink,
        };
        let info = match resolve_kind(registry, reference, wanted, team) {
            Ok(info) => info,
            Err(fault) => {
                problems.push(Problem::new(format!("connector.{at}.plugin"), fault.message));
                continue;
            }
        };
        let resolved = match resolve_at(config, &format!("connector.{at}.config"), &secrets) {
            Ok(resolved) => resolved,
            Err(unresolved) => {
                problems.extend(unresolved);
                continue;
            }
        };
        let labels_for = InstanceLabels { connector: format!("{connector} (validation)"), plugin: info.label() };
        let l = InstanceLimits { scrub: Scrub::new(resolved.secret_values), ..limits.clone() };
        let (plugin, json) = (&info.plugin, resolved.value.to_string());
        let created = match kind {
            StepKind::Transform => TransformInstance::create(plugin, &json, labels_for, l).await.map(drop),
            StepKind::Source { output_topic } => SourceInstance::create(plugin, &json, None, output_topic, labels_for, l).await.map(drop),
            StepKind::Sink => SinkInstance::create(plugin, &json, labels_for, l).await.map(drop),
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
