//! The rules of a connector that types alone cannot express, checked purely (no I/O). Only
//! [`crate::Connector::validate`] calls them, so the config file loader, the admin API and
//! `run --check` report the same problems.

use std::collections::BTreeSet;

use crate::connector::{ConnectorConfig, ConnectorKind, ErrorTolerance};
use crate::Problem;

/// Every consumer group a connector uses starts with this, so the API can never read or
/// reset the offsets of another application's group.
pub const GROUP_PREFIX: &str = "turnpike-";

impl ConnectorConfig {
    /// Checks the rules that types alone cannot express. `key` is the path of this connector
    /// in its document (e.g. `connectors[2]`); every problem is returned, none is fatal alone.
    /// `http.allow` entries are parsed (and reported) by the validation that keeps them.
    pub(crate) fn rule_problems(&self, key: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut add = |field: &str, msg: String| problems.push(Problem::new(format!("{key}.{field}"), msg));
        let kind = self.kind();
        if self.source.is_some() && self.sink.is_some() {
            add("sink", "a connector has a source or a sink, not both: make two connectors joined by a topic".into());
        }
        match kind {
            ConnectorKind::Source if !self.topics.is_empty() => add("topics", "a source connector reads from its source plugin; remove `topics`".into()),
            ConnectorKind::Transform | ConnectorKind::Sink if self.topics.is_empty() => add("topics", "list at least one topic to consume".into()),
            _ => {}
        }
        if kind == ConnectorKind::Source && self.tasks != crate::Tasks::default() {
            add("tasks", format!("a source connector runs one task (its plugin keeps one position), not {}; remove `tasks`", self.tasks));
        }
        problems.extend(self.tasks.problems(&format!("{key}.tasks")));
        let mut add = |field: &str, msg: String| problems.push(Problem::new(format!("{key}.{field}"), msg));
        match (kind, &self.output_topic) {
            (ConnectorKind::Sink, Some(_)) => add("output_topic", "a sink connector writes to its sink plugin; remove `output_topic`".into()),
            (ConnectorKind::Transform | ConnectorKind::Source, None) => add("output_topic", "name the topic to write to".into()),
            _ => {}
        }
        if let Some(storage) = &self.storage {
            if kind != ConnectorKind::Sink {
                add("storage", "only a sink connector's plugin writes objects; remove `storage`".into());
            }
            for p in storage.problems("storage") {
                add(&p.key, p.message);
            }
        }
        if let Some(database) = &self.database {
            if kind != ConnectorKind::Source {
                add("database", "only a source connector's plugin reads a database; remove `database`".into());
            }
            for p in database.problems("database") {
                add(&p.key, p.message);
            }
        }
        let mut seen = BTreeSet::new();
        for (i, t) in self.topics.iter().enumerate() {
            if !seen.insert(t) {
                add(&format!("topics[{i}]"), format!("topic {:?} is listed twice", t.as_str()));
            }
        }
        if let Some(dlq) = &self.errors.dead_letter_topic {
            if self.topics.contains(dlq) || Some(dlq) == self.output_topic.as_ref() {
                add("errors.dead_letter_topic", format!("{:?} is also an input or the output topic; use a topic of its own", dlq.as_str()));
            }
            if self.errors.tolerance == ErrorTolerance::None {
                add("errors.dead_letter_topic", "only used with `tolerance: all` (with `none` the first failure stops the connector)".into());
            }
        }
        if self.restart.base_ms.get() > self.restart.max_ms.get() {
            add("restart.base_ms", format!("{} is above restart.max_ms ({})", self.restart.base_ms, self.restart.max_ms));
        }
        if let Some(out) = &self.output_topic {
            if self.topics.contains(out) {
                add("output_topic", format!("{:?} is also an input topic: the connector would consume its own output", out.as_str()));
            }
        }
        if kind == ConnectorKind::Transform && self.transforms.is_empty() {
            add("transforms", "list at least one transform step (use the `identity` plugin to copy records)".into());
        }
        for (i, step) in self.transforms.iter().enumerate() {
            if !step.config.is_object() {
                add(&format!("transforms[{i}].config"), "must be a mapping of keys to values".into());
            }
            if let Some(Err(found)) = step.predicate.as_ref().map(|p| p.compile(&format!("transforms[{i}].predicate"))) {
                for p in found {
                    add(&p.key, p.message);
                }
            }
        }
        for (field, config) in [("source.config", self.source.as_ref().map(|s| &s.config)), ("sink.config", self.sink.as_ref().map(|s| &s.config))] {
            if config.is_some_and(|c| !c.is_object()) {
                add(field, "must be a mapping of keys to values".into());
            }
        }
        if let Some(g) = &self.group_id {
            if !g.starts_with(GROUP_PREFIX) || g.len() == GROUP_PREFIX.len() {
                add("group_id", format!("{g:?} must start with {GROUP_PREFIX:?} and name the group after it (or leave it out: `{GROUP_PREFIX}<connector name>`)"));
            }
        }
        let mut routes = BTreeSet::new();
        for (i, t) in self.routes.iter().enumerate() {
            if kind == ConnectorKind::Sink {
                add("routes", "a sink connector writes to its sink plugin; remove `routes`".into());
                break;
            }
            if !routes.insert(t) {
                add(&format!("routes[{i}]"), format!("topic {:?} is listed twice", t.as_str()));
            } else if self.topics.contains(t) {
                add(&format!("routes[{i}]"), format!("{:?} is also an input topic: the connector would consume its own output", t.as_str()));
            } else if self.errors.dead_letter_topic.as_ref() == Some(t) {
                add(&format!("routes[{i}]"), format!("{:?} is the dead-letter topic: only the host writes there", t.as_str()));
            }
        }
        problems
    }
}
