//! The one check a connector passes before the host keeps or builds it: its own rules and
//! the operator's maxima ([`turnpike_config::Connector::validate`]), then the host's rules
//! (internal topics, groups and names across connectors, capacity).

use std::collections::BTreeMap;

use turnpike_config::{Connector, ConnectorConfig, PluginName, Problem, TeamName};

use super::table::Entry;
use super::{Host, HostError};
use crate::registry::usable_by;

impl Host {
    /// `config` validated, or every problem, each with its key: the connector's own rules,
    /// the operator's maxima, and the host's: internal topics are never a connector's output,
    /// and no two connectors share a consumer group, a name that differs only in case, or
    /// overlapping storage prefixes in one bucket.
    pub(super) fn checked(&self, config: &ConnectorConfig) -> Result<Connector, Vec<Problem>> {
        let (validated, mut problems) = match Connector::validate(config.clone(), &self.sandbox, "connector") {
            Ok(connector) => (Some(connector), Vec::new()),
            Err(problems) => (None, problems),
        };
        let positions = self.shared.positions_topic.as_str();
        let internal = |topic: &str| topic == positions;
        if config.output_topic.as_ref().is_some_and(|t| internal(t.as_str())) {
            problems.push(Problem::new("connector.output_topic", format!("{positions:?} is the host's internal source-positions topic")));
        }
        for (i, t) in config.routes.iter().enumerate().filter(|(_, t)| internal(t.as_str())) {
            problems.push(Problem::new(format!("connector.routes[{i}]"), format!("{:?} is the host's internal source-positions topic", t.as_str())));
        }
        if config.errors.dead_letter_topic.as_ref().is_some_and(|t| internal(t.as_str())) {
            problems.push(Problem::new("connector.errors.dead_letter_topic", format!("{positions:?} is the host's internal source-positions topic")));
        }
        problems.extend(super::team_rules::topic_problems(config, &self.teams));
        problems.extend(plugin_team_problems(config, |name| self.registry().team(name)));
        problems.extend(host_rules(config, &self.connectors.lock().unwrap_or_else(|p| p.into_inner())));
        match validated {
            Some(connector) if problems.is_empty() => Ok(connector),
            _ => Err(problems),
        }
    }

    /// [`Host::checked`], its problems as the error callers return.
    pub(super) fn validated(&self, config: &ConnectorConfig) -> Result<Connector, HostError> {
        self.checked(config).map_err(HostError::Invalid)
    }

    /// Refuses a connector that would take the host past its connector count or its memory
    /// budget for instances (each plugin of each task of each connector may grow to
    /// `limits.memory_mib`; a connector scaling by lag counts its `max` tasks).
    /// A change that asks for no more than the connector had is always allowed, so lowering
    /// a maximum below what runs never blocks a change that shrinks.
    pub(super) fn check_capacity(&self, config: &ConnectorConfig, connectors: &BTreeMap<String, Entry>) -> Result<(), HostError> {
        let weight = |c: &ConnectorConfig| c.limits.memory_mib.get() * c.plugin_refs().len() as u64 * c.tasks.most();
        let before = connectors.get(config.name.as_str()).map(|r| weight(r.definition.config()));
        let others = connectors.iter().filter(|(n, _)| n.as_str() != config.name.as_str());
        let (count, memory) = others.fold((0u64, 0u64), |(n, m), (_, r)| (n + 1, m + weight(r.definition.config())));
        let max = self.sandbox.max_connectors.get();
        if before.is_none() && count + 1 > max {
            return Err(HostError::Full(format!("the host already runs {count} connectors, its maximum (sandbox.max_connectors = {max}); delete one or raise the maximum")));
        }
        let (asked, budget) = (weight(config), self.sandbox.max_total_memory_mib.get());
        if before.is_none_or(|b| asked > b) && memory + asked > budget {
            return Err(HostError::Full(format!(
                "this connector may use {asked} MiB of plugin memory and the others {memory} MiB, over the host's budget of {budget} MiB (sandbox.max_total_memory_mib); lower limits.memory_mib or raise the budget"
            )));
        }
        Ok(())
    }
}

/// The rules across connectors: no two share a consumer group, nor a name that differs only
/// in case (one file on a case-insensitive file system).
pub(super) fn host_rules(config: &ConnectorConfig, connectors: &BTreeMap<String, Entry>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let name = config.name.as_str();
    let group = config.group_id();
    for (other, r) in connectors.iter().filter(|(other, _)| other.as_str() != name) {
        if r.definition.config().group_id() == group {
            problems.push(Problem::new("connector.group_id", format!("consumer group {group:?} is already used by connector {other:?}; each connector needs its own")));
        }
        // A connector's start aborts the uploads left open under its prefix: prefixes that
        // overlap would abort each other's.
        if let (Some(mine), Some(theirs)) = (&config.storage, &r.definition.config().storage) {
            if mine.bucket == theirs.bucket && (mine.prefix.starts_with(&theirs.prefix) || theirs.prefix.starts_with(&mine.prefix)) {
                let shown = |p: &str| if p.is_empty() { "the whole bucket".to_owned() } else { format!("{p:?}") };
                problems.push(Problem::new(
                    "connector.storage.prefix",
                    format!("{} overlaps {} of connector {other:?} in bucket {:?}; give each connector a prefix of its own", shown(&mine.prefix), shown(&theirs.prefix), mine.bucket),
                ));
            }
        }
    }
    if let Some(other) = turnpike_state::case_collision(name, connectors.keys().map(String::as_str)) {
        problems.push(Problem::new("connector.name", format!("{name:?} differs from the existing connector {other:?} only in case; choose another name")));
    }
    problems
}

/// The plugins a team's connector names but may not use: another team's, each at its step's
/// key, in words that do not say whose it is. The operator's connectors (no team) may use
/// shared plugins only: a team's next upload must not run with the operator's grants. A name
/// no plugin has is left to the plugin checks (and, once uploaded by another team, is unknown
/// to this connector at its start). `team_of` is [`crate::PluginRegistry::team`].
pub(super) fn plugin_team_problems(config: &ConnectorConfig, team_of: impl Fn(&PluginName) -> Option<Option<TeamName>>) -> Vec<Problem> {
    let team = config.team.as_ref();
    config
        .plugin_refs()
        .into_iter()
        .filter(|(_, r)| team_of(&r.name).is_some_and(|owner| !usable_by(owner.as_ref(), team)))
        .map(|(key, r)| {
            let message = match team {
                Some(team) => format!("plugin {:?} is not available to team {:?}; use one of the team's own plugins or a shared one", r.name.as_str(), team.as_str()),
                None => format!("plugin {:?} belongs to a team: a connector without a team may use shared plugins only; set `team` to the plugin's", r.name.as_str()),
            };
            Problem::new(format!("connector.{key}"), message)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use turnpike_config::{PluginRef, TeamPolicy};

    use super::*;
    use crate::registry::BrokenPlugin;

    fn connector(yaml: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").expect("parses")
    }

    fn team(t: &str) -> TeamName {
        TeamName::parse(t).unwrap()
    }

    /// Plugins by name: `mask` is analytics', `payroll` hr's, `identity` shared.
    fn owners(name: &PluginName) -> Option<Option<TeamName>> {
        match name.as_str() {
            "mask" => Some(Some(team("analytics"))),
            "payroll" => Some(Some(team("hr"))),
            "identity" => Some(None),
            _ => None,
        }
    }

    #[test]
    fn a_team_connector_may_use_its_teams_plugins_and_shared_ones_only() {
        let c = connector("{name: m, team: analytics, topics: [a], output_topic: b, transforms: [{plugin: mask}, {plugin: payroll@1.0.0}, {plugin: identity}, {plugin: not-yet}]}");
        let problems = plugin_team_problems(&c, owners);
        assert_eq!(problems, [Problem::new("connector.transforms[1].plugin", r#"plugin "payroll" is not available to team "analytics"; use one of the team's own plugins or a shared one"#)]);
        assert!(!problems[0].message.contains("hr"), "the owner is not named");
        let sink = connector("{name: s, team: hr, topics: [a], sink: {plugin: mask}}");
        assert_eq!(plugin_team_problems(&sink, owners).iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), ["connector.sink.plugin"]);
        let operator = connector("{name: o, topics: [a], output_topic: b, transforms: [{plugin: mask}, {plugin: payroll}]}");
        let keys: Vec<String> = plugin_team_problems(&operator, owners).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["connector.transforms[0].plugin", "connector.transforms[1].plugin"], "the operator's connectors use shared plugins only");
    }

    #[test]
    fn the_hosts_check_refuses_another_teams_plugin() {
        let teams = BTreeMap::from([(team("analytics"), TeamPolicy { topics: vec!["analytics.*".into()], ..Default::default() }), (team("hr"), TeamPolicy { topics: vec!["hr.*".into()], ..Default::default() })]);
        let host = Host::new(crate::Runtime::new().expect("engine"), Vec::new(), crate::SandboxConfig::default()).with_teams(teams);
        let broken = BrokenPlugin { version: "1".into(), class: turnpike_runtime::FaultClass::WrongWorld, reason: "test".into(), team: Some(team("hr")) };
        host.registry().register_broken(PluginName::parse("payroll").unwrap(), broken);
        let c = connector("{name: m, team: analytics, topics: [analytics.in], output_topic: analytics.out, transforms: [{plugin: payroll}]}");
        let problems = host.checked(&c).expect_err("refused");
        assert!(problems.iter().any(|p| p.key == "connector.transforms[0].plugin" && p.message.starts_with(r#"plugin "payroll" is not available to team "analytics""#)), "{problems:?}");
        let own = connector("{name: h, team: hr, topics: [hr.in], output_topic: hr.out, transforms: [{plugin: payroll}]}");
        assert!(host.checked(&own).is_ok(), "its own team's plugin passes the host's rules");
        // At start, too, another team's plugin is not there for it.
        let reference = PluginRef::try_from("payroll".to_owned()).unwrap();
        assert!(matches!(host.registry().resolve_for(&reference, Some(&team("analytics"))), Err(crate::registry::RegistryError::UnknownPlugin { .. })));
    }
}
