//! The topics a team's connector may touch: every topic it reads, writes, routes to or
//! dead-letters to must match one of its team's patterns (`teams.<team>.topics`), so one
//! team cannot read another's data through a connector or write into its topics.

use std::collections::BTreeMap;

use turnpike_config::{ConnectorConfig, Problem, TeamName, TeamPolicy};

/// Problems with `config`'s topics for its team; none for a connector without a team (the
/// operator's).
pub(super) fn topic_problems(config: &ConnectorConfig, teams: &BTreeMap<TeamName, TeamPolicy>) -> Vec<Problem> {
    let Some(team) = &config.team else { return Vec::new() };
    let Some(policy) = teams.get(team) else {
        let known: Vec<&str> = teams.keys().map(TeamName::as_str).collect();
        let known = if known.is_empty() { "none are defined".to_owned() } else { format!("defined: {}", known.join(", ")) };
        return vec![Problem::new("connector.team", format!("team {:?} is not defined in the host config's `teams` ({known})", team.as_str()))];
    };
    let mut named: Vec<(String, &str)> = config.topics.iter().enumerate().map(|(i, t)| (format!("connector.topics[{i}]"), t.as_str())).collect();
    named.extend(config.output_topic.iter().map(|t| ("connector.output_topic".to_owned(), t.as_str())));
    named.extend(config.routes.iter().enumerate().map(|(i, t)| (format!("connector.routes[{i}]"), t.as_str())));
    named.extend(config.errors.dead_letter_topic.iter().map(|t| ("connector.errors.dead_letter_topic".to_owned(), t.as_str())));
    named
        .into_iter()
        .filter(|(_, topic)| !policy.allows_topic(topic))
        .map(|(key, topic)| {
            let patterns = if policy.topics.is_empty() { "it has none".to_owned() } else { policy.topics.join(", ") };
            Problem::new(key, format!("topic {topic:?} is outside team {:?}'s topics ({patterns}); use one of them, or ask an admin to add it to teams.{team}.topics", team.as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connector(yaml: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").expect("connector")
    }

    fn teams() -> BTreeMap<TeamName, TeamPolicy> {
        BTreeMap::from([(TeamName::parse("analytics").unwrap(), TeamPolicy { topics: vec!["analytics.*".into(), "customers.masked".into()] })])
    }

    #[test]
    fn every_topic_a_team_connector_names_must_match_its_patterns() {
        let c = connector(
            "{name: m, team: analytics, topics: [analytics.in, payments.raw], output_topic: customers.masked, routes: [analytics.b, hr.salaries], errors: {tolerance: all, dead_letter_topic: payments.dlq}, transforms: [{plugin: identity}]}",
        );
        let keys: Vec<String> = topic_problems(&c, &teams()).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["connector.topics[1]", "connector.routes[1]", "connector.errors.dead_letter_topic"]);
        let first = &topic_problems(&c, &teams())[0].message;
        assert!(first.starts_with("topic \"payments.raw\" is outside team \"analytics\"'s topics (analytics.*, customers.masked)"), "{first}");
    }

    #[test]
    fn an_undefined_team_is_named_and_an_operator_connector_is_free() {
        let c = connector("{name: m, team: hr, topics: [a], output_topic: b, transforms: [{plugin: identity}]}");
        let problems = topic_problems(&c, &teams());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, "team \"hr\" is not defined in the host config's `teams` (defined: analytics)");
        let operator = connector("{name: m, topics: [a], output_topic: b, transforms: [{plugin: identity}]}");
        assert!(topic_problems(&operator, &teams()).is_empty());
    }
}
