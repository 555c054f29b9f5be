//! A connector that passed every rule, in the shape the host builds from. [`Connector::validate`]
//! is the one entry point: the config file loader, `PUT`, `POST …/validate` and `run --check`
//! all go through it, and nothing downstream re-derives what it decided (the kind, the output
//! topic, the parsed HTTP grant, the limits checked against the operator's maxima).

use std::time::Duration;

use serde::Serialize;

use crate::connector::{ConnectorConfig, ConnectorKind, SinkStep, SourceStep, TransformStep};
use crate::{AllowedHost, ConnectorName, Problem, SandboxConfig, TopicName};

/// A validated connector. It serializes as the [`ConnectorConfig`] it was made from, so state
/// files and API bodies keep their form; it can only be made by [`Connector::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Connector {
    config: ConnectorConfig,
    flow: Flow,
    http: HttpGrantSpec,
}

/// Where records come from and where they go, with exactly the fields each kind has.
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    /// Topics → transforms → topic.
    Transform {
        /// Topics consumed.
        topics: Vec<TopicName>,
        /// Where outputs go.
        output: Output,
    },
    /// Source plugin → transforms → topic.
    Source {
        /// The source plugin.
        source: SourceStep,
        /// Where outputs go.
        output: Output,
    },
    /// Topics → transforms → sink plugin.
    Sink {
        /// Topics consumed.
        topics: Vec<TopicName>,
        /// The sink plugin.
        sink: SinkStep,
    },
}

/// The topics a transform or source connector writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// Where outputs go unless a plugin names another topic.
    pub topic: TopicName,
    /// The other topics plugins may send a record to.
    pub routes: Vec<TopicName>,
}

/// The outgoing HTTP the connector's plugins are granted, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpGrantSpec {
    /// Hosts the plugins may call; empty: none.
    pub allow: Vec<AllowedHost>,
    /// Longest wait to connect.
    pub connect_timeout: Duration,
    /// Longest wait for a response (first byte, and between body chunks).
    pub timeout: Duration,
}

impl Connector {
    /// Checks `config` against every connector rule and the operator's `sandbox` maxima.
    /// `key` is the connector's path in its document (`connectors[2]`, `connector`); every
    /// problem is returned at once, each with its full key.
    pub fn validate(config: ConnectorConfig, sandbox: &SandboxConfig, key: &str) -> Result<Self, Vec<Problem>> {
        let mut problems = config.rule_problems(key);
        problems.extend(crate::references::plugin_config_syntax(&config, key));
        problems.extend(sandbox.check(&config, key));
        let mut allow = Vec::new();
        for (i, entry) in config.http.allow.iter().enumerate() {
            match AllowedHost::parse(entry) {
                Ok(host) => allow.push(host),
                Err(why) => problems.push(Problem::new(format!("{key}.http.allow[{i}]"), why)),
            }
        }
        let flow = match (&config.source, &config.sink, &config.output_topic) {
            (Some(source), None, Some(topic)) => Some(Flow::Source { source: source.clone(), output: output(topic, &config) }),
            (None, Some(sink), None) => Some(Flow::Sink { topics: config.topics.clone(), sink: sink.clone() }),
            (None, None, Some(topic)) => Some(Flow::Transform { topics: config.topics.clone(), output: output(topic, &config) }),
            // Both a source and a sink, or an output missing or extra: the rules said which.
            _ => None,
        };
        match flow {
            Some(flow) if problems.is_empty() => {
                let http = HttpGrantSpec {
                    allow,
                    connect_timeout: Duration::from_millis(config.http.connect_timeout_ms.get()),
                    timeout: Duration::from_millis(config.http.timeout_ms.get()),
                };
                Ok(Self { config, flow, http })
            }
            _ => {
                // The rules name what is wrong with a connector that has no flow; should one
                // ever not, the connector is still refused with a problem, never an empty list.
                if problems.is_empty() {
                    problems.push(Problem::new(key, "give either `topics` and `output_topic`, a `source` and `output_topic`, or `topics` and a `sink`"));
                }
                Err(problems)
            }
        }
    }

    /// The configuration as written: what is stored and shown.
    pub fn config(&self) -> &ConnectorConfig {
        &self.config
    }

    /// The configuration as written, owned.
    pub fn into_config(self) -> ConnectorConfig {
        self.config
    }

    /// The connector's name.
    pub fn name(&self) -> &ConnectorName {
        &self.config.name
    }

    /// Where records come from and go.
    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// What the connector connects.
    pub fn kind(&self) -> ConnectorKind {
        match self.flow {
            Flow::Transform { .. } => ConnectorKind::Transform,
            Flow::Source { .. } => ConnectorKind::Source,
            Flow::Sink { .. } => ConnectorKind::Sink,
        }
    }

    /// The topics written, for transform and source connectors; `None` for a sink.
    pub fn output(&self) -> Option<&Output> {
        match &self.flow {
            Flow::Transform { output, .. } | Flow::Source { output, .. } => Some(output),
            Flow::Sink { .. } => None,
        }
    }

    /// The topics consumed (empty for a source).
    pub fn topics(&self) -> &[TopicName] {
        match &self.flow {
            Flow::Transform { topics, .. } | Flow::Sink { topics, .. } => topics,
            Flow::Source { .. } => &[],
        }
    }

    /// The transform chain.
    pub fn transforms(&self) -> &[TransformStep] {
        &self.config.transforms
    }

    /// The outgoing HTTP granted.
    pub fn http(&self) -> &HttpGrantSpec {
        &self.http
    }

    /// The consumer group this connector uses.
    pub fn group_id(&self) -> String {
        self.config.group_id()
    }
}

fn output(topic: &TopicName, config: &ConnectorConfig) -> Output {
    Output { topic: topic.clone(), routes: config.routes.clone() }
}

impl Output {
    /// `topic` and `routes`: every topic the connector's plugins may write to.
    pub fn writable(&self) -> impl Iterator<Item = &TopicName> {
        std::iter::once(&self.topic).chain(&self.routes)
    }
}

impl Serialize for Connector {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.config.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> ConnectorConfig {
        serde_yaml_ng::from_str(yaml).expect("parses")
    }

    #[test]
    fn each_kind_gets_exactly_its_fields() {
        let sandbox = SandboxConfig::default();
        let t = Connector::validate(parse("{name: t, topics: [a], output_topic: b, routes: [c], transforms: [{plugin: identity}]}"), &sandbox, "c").unwrap();
        assert_eq!(t.kind(), ConnectorKind::Transform);
        assert_eq!(t.output().map(|o| o.writable().map(TopicName::as_str).collect::<Vec<_>>()), Some(vec!["b", "c"]));
        let s = Connector::validate(parse("{name: s, topics: [a], sink: {plugin: http-sink}, http: {allow: [api.example.com]}}"), &sandbox, "c").unwrap();
        assert_eq!((s.kind(), s.output(), s.topics().len()), (ConnectorKind::Sink, None, 1));
        assert!(s.http().allow[0].allows("api.example.com", 443));
        let src = Connector::validate(parse("{name: g, output_topic: o, source: {plugin: datagen}}"), &sandbox, "c").unwrap();
        assert!(matches!(src.flow(), Flow::Source { .. }) && src.topics().is_empty());
        assert_eq!(serde_json::to_value(&src).unwrap(), serde_json::to_value(src.config()).unwrap(), "serializes as written");
    }

    #[test]
    fn every_problem_is_returned_with_its_key() {
        let sandbox = SandboxConfig { max_memory_mib: crate::Ranged::constant(8), ..SandboxConfig::default() };
        let bad = parse("{name: b, topics: [a], source: {plugin: datagen}, sink: {plugin: s}, http: {allow: ['x://y']}}");
        let keys: std::collections::BTreeSet<String> = Connector::validate(bad, &sandbox, "connectors[3]").unwrap_err().into_iter().map(|p| p.key).collect();
        for key in ["connectors[3].sink", "connectors[3].topics", "connectors[3].http.allow[0]", "connectors[3].limits.memory_mib"] {
            assert!(keys.contains(key), "{key} missing from {keys:?}");
        }
    }
}
