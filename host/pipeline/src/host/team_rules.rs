//! The topics a team's connector may touch: every topic it reads, writes, routes to or
//! dead-letters to must match one of its team's patterns (`teams.<team>.topics`), so one
//! team cannot read another's data through a connector or write into its topics.

use std::collections::BTreeMap;

use turnpike_config::{glob_matches, ConnectorConfig, Problem, TeamName, TeamPolicy};

/// Problems with `config`'s topics for its team; none for a connector without a team (the
/// operator's).
pub(super) fn topic_problems(config: &ConnectorConfig, teams: &BTreeMap<TeamName, TeamPolicy>) -> Vec<Problem> {
    let Some(team) = &config.team else { return Vec::new() };
    let Some(policy) = teams.get(team) else {
        let known: Vec<&str> = teams.keys().map(TeamName::as_str).collect();
        let known = if known.is_empty() { "none are defined".to_owned() } else { format!("defined: {}", known.join(", ")) };
        return vec![Problem::new("connector.team", format!("team {:?} is not defined in the host config's `teams` ({known})", team.as_str()))];
    };
    let mut problems = grant_problems(config, team, policy);
    let mut named: Vec<(String, &str)> = config.topics.iter().enumerate().map(|(i, t)| (format!("connector.topics[{i}]"), t.as_str())).collect();
    named.extend(config.output_topic.iter().map(|t| ("connector.output_topic".to_owned(), t.as_str())));
    named.extend(config.routes.iter().enumerate().map(|(i, t)| (format!("connector.routes[{i}]"), t.as_str())));
    named.extend(config.errors.dead_letter_topic.iter().map(|t| ("connector.errors.dead_letter_topic".to_owned(), t.as_str())));
    problems.extend(named.into_iter().filter(|(_, topic)| !policy.allows_topic(topic)).map(|(key, topic)| {
        let patterns = if policy.topics.is_empty() { "it has none".to_owned() } else { policy.topics.join(", ") };
        Problem::new(key, format!("topic {topic:?} is outside team {:?}'s topics ({patterns}); use one of them, or ask an admin to add it to teams.{team}.topics", team.as_str()))
    }));
    problems
}

/// What a team's connector may reach besides Kafka: only the hosts, buckets and databases its
/// team's policy names, with its own storage credentials and no host file (found by review:
/// topics alone left a team the host's network, cloud credentials and local databases).
fn grant_problems(config: &ConnectorConfig, team: &TeamName, policy: &TeamPolicy) -> Vec<Problem> {
    let allowed = |patterns: &[String], value: &str| patterns.iter().any(|p| glob_matches(p, value));
    let outside = |what: &str, value: &str, field: &str| format!("{what} {value:?} is outside team {:?}'s {field}; ask an admin to add it to teams.{team}.{field}", team.as_str());
    let mut problems = Vec::new();
    for (i, entry) in config.http.allow.iter().enumerate().filter(|(_, e)| !allowed(&policy.http, e)) {
        problems.push(Problem::new(format!("connector.http.allow[{i}]"), outside("host", entry, "http")));
    }
    if let Some(storage) = &config.storage {
        if !allowed(&policy.buckets, &storage.bucket) {
            problems.push(Problem::new("connector.storage.bucket", outside("bucket", &storage.bucket, "buckets")));
        }
        if storage.credentials.is_none() {
            problems.push(Problem::new("connector.storage.credentials", "a team's connector brings its own credentials (as secret references): the host's are the operator's"));
        }
    }
    if let Some(database) = &config.database {
        let address = database_address(&database.url);
        if !allowed(&policy.databases, &address) {
            problems.push(Problem::new("connector.database.url", outside("database", &address, "databases")));
        }
        if database.ca_file.is_some() {
            problems.push(Problem::new("connector.database.ca_file", "a team's connector cannot name a file on the host; the operator's CA roots are used"));
        }
    }
    problems
}

/// `host:port` of a database URL (`postgresql://user@db.internal:5432/app` → `db.internal:5432`).
fn database_address(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    authority.rsplit_once('@').map_or(authority, |(_, host)| host).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connector(yaml: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").expect("connector")
    }

    fn teams() -> BTreeMap<TeamName, TeamPolicy> {
        let policy = TeamPolicy { topics: vec!["analytics.*".into(), "customers.masked".into()], http: vec!["api.example.com:443".into()], buckets: vec!["analytics-*".into()], databases: vec!["db.internal:5432".into()] };
        BTreeMap::from([(TeamName::parse("analytics").unwrap(), policy)])
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

    #[test]
    fn a_team_connector_reaches_only_the_hosts_buckets_and_databases_its_team_names() {
        let c = connector(
            "{name: m, team: analytics, topics: [analytics.in], http: {allow: ['api.example.com:443', '169.254.169.254:80']}, sink: {plugin: s3-sink}, storage: {bucket: payroll}}",
        );
        let keys: Vec<String> = topic_problems(&c, &teams()).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["connector.http.allow[1]", "connector.storage.bucket", "connector.storage.credentials"]);
        let db = connector("{name: s, team: analytics, source: {plugin: sql-source}, output_topic: analytics.rows, database: {url: 'postgresql://app@127.0.0.1:5432/x', user: app, tables: [t], ca_file: /etc/shadow}}");
        let keys: Vec<String> = topic_problems(&db, &teams()).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["connector.database.url", "connector.database.ca_file"]);
        assert_eq!(database_address("postgresql://app@db.internal:5432/x?sslmode=require"), "db.internal:5432");
    }
}
