//! Resolving a connector's references (`${secret:…}`, `${env:…}`, `${file:…}`) in its plugins'
//! configs, just before the plugins are created. The resolved configs live only in the
//! connector's running task; what is saved and shown keeps the references. Every value a
//! reference resolved to goes to the runtime as a [`Scrub`], which hides it in whatever the
//! plugins say.
//!
//! A team's connector resolves its team's secrets only, here, at every start: another team's
//! secret (or the operator's) is missing to it, in the words of a secret no one stored.

use serde_json::Value;
use turnpike_config::{resolve_at, ConnectorConfig, Problem};
use turnpike_runtime::Scrub;
use turnpike_state::SecretStore;

/// A connector's plugin configs with their references resolved, and what to hide.
pub(crate) struct ResolvedConfigs {
    /// The source's config (`None`: no source).
    pub(crate) source: Option<Value>,
    /// Each transform's config, in order.
    pub(crate) transforms: Vec<Value>,
    /// The sink's config (`None`: no sink).
    pub(crate) sink: Option<Value>,
    /// Every value a reference resolved to.
    pub(crate) scrub: Scrub,
}

/// Resolves every plugin config of `config` with the secrets of its team; every problem at
/// once, keyed under `key` (`connector` gives `connector.sink.config.headers.Authorization`;
/// empty gives `sink.config.headers.Authorization`). No problem holds a value.
pub(crate) fn resolve_connector(config: &ConnectorConfig, key: &str, secrets: &SecretStore) -> Result<ResolvedConfigs, Vec<Problem>> {
    let secrets = secrets.for_team(config.team.clone());
    let mut problems = Vec::new();
    let mut values = Vec::new();
    let mut one = |at: String, config: &Value| match resolve_at(config, &under(key, &at), &secrets) {
        Ok(resolved) => {
            values.extend(resolved.secret_values);
            resolved.value
        }
        Err(found) => {
            problems.extend(found);
            Value::Null
        }
    };
    let source = config.source.as_ref().map(|s| one("source.config".into(), &s.config));
    let transforms = config.transforms.iter().enumerate().map(|(i, t)| one(format!("transforms[{i}].config"), &t.config)).collect();
    let sink = config.sink.as_ref().map(|s| one("sink.config".into(), &s.config));
    if problems.is_empty() {
        Ok(ResolvedConfigs { source, transforms, sink, scrub: Scrub::new(values) })
    } else {
        Err(problems)
    }
}

/// `rest` under `key`: `key.rest`, or `rest` alone when `key` is empty.
pub(crate) fn under(key: &str, rest: &str) -> String {
    if key.is_empty() {
        rest.to_owned()
    } else {
        format!("{key}.{rest}")
    }
}

/// The problems as one line, for a status message.
pub(crate) fn one_line(problems: &[Problem]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use turnpike_config::{SecretName, TeamName};

    use super::*;

    fn connector(yaml: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").expect("parses")
    }

    fn store(secrets: &[(&str, &str, Option<&str>)]) -> SecretStore {
        let store = SecretStore::in_memory();
        for (name, value, team) in secrets {
            let team = team.map(|t| TeamName::parse(t).unwrap());
            store.put(&SecretName::parse(name).unwrap(), value, team.as_ref()).unwrap();
        }
        store
    }

    #[test]
    fn every_step_is_resolved_and_every_value_hidden() {
        let secrets = store(&[("token", "tok-abcdef", None), ("salt", "salty-salt", None)]);
        let c = connector("name: s\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {salt: '${secret:salt}'}}]\nsink: {plugin: http-sink, config: {headers: {Authorization: 'Bearer ${secret:token}'}}}\n");
        let resolved = resolve_connector(&c, "connector", &secrets).expect("resolves");
        assert_eq!(resolved.transforms[0]["salt"], "salty-salt");
        assert_eq!(resolved.sink.as_ref().map(|s| s["headers"]["Authorization"].clone()), Some("Bearer tok-abcdef".into()));
        assert!(resolved.source.is_none());
        assert_eq!(resolved.scrub.clean("tok-abcdef and salty-salt"), "*** and ***");
        assert_eq!(c.sink.as_ref().map(|s| s.config["headers"]["Authorization"].clone()), Some("Bearer ${secret:token}".into()), "the config keeps its reference");
    }

    #[test]
    fn missing_references_are_problems_under_the_key_given() {
        let none = store(&[]);
        let c = connector("name: s\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {salt: '${secret:salt}'}}]\nsink: {plugin: http-sink, config: {url: '${secret:url}'}}\n");
        let problems = resolve_connector(&c, "", &none).err().expect("refused");
        let keys: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["transforms[0].config.salt", "sink.config.url"]);
        assert!(one_line(&problems).contains(r#"sink.config.url: ${secret:url}: no secret named "url""#), "{}", one_line(&problems));
    }

    #[test]
    fn a_team_connector_resolves_its_teams_secrets_and_no_one_elses() {
        let secrets = store(&[("salt", "analytics-salt", Some("analytics")), ("payroll", "hr-password", Some("hr")), ("broker", "operator-key", None)]);
        let own = connector("name: s\nteam: analytics\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {salt: '${secret:salt}'}}]\n");
        assert_eq!(resolve_connector(&own, "", &secrets).expect("its own secret").transforms[0]["salt"], "analytics-salt");

        let others = connector("name: s\nteam: analytics\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {a: '${secret:payroll}', b: '${secret:broker}', c: '${secret:nothing}'}}]\n");
        let problems = resolve_connector(&others, "", &secrets).err().expect("refused");
        // Said as of a secret no one stored, so the name tells nothing.
        let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                r#"transforms[0].config.a: ${secret:payroll}: no secret named "payroll" (create it with PUT /v1/secrets/payroll)"#,
                r#"transforms[0].config.b: ${secret:broker}: no secret named "broker" (create it with PUT /v1/secrets/broker)"#,
                r#"transforms[0].config.c: ${secret:nothing}: no secret named "nothing" (create it with PUT /v1/secrets/nothing)"#,
            ]
        );

        let operator = connector("name: s\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {a: '${secret:payroll}', b: '${secret:salt}'}}]\n");
        assert!(resolve_connector(&operator, "", &secrets).is_ok(), "the operator's connector resolves every secret");

        let host_refs = connector("name: s\nteam: analytics\ntopics: [a]\ntransforms: [{plugin: pii-mask, config: {salt: '${env:HOME}'}}]\n");
        let problems = resolve_connector(&host_refs, "", &secrets).err().expect("refused");
        assert!(one_line(&problems).contains("cannot read the host's environment"), "{}", one_line(&problems));
    }
}
