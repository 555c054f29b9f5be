//! The secrets store as the API reaches it: store, list (never a value) and delete secrets,
//! and check that a connector's references resolve before it is accepted.
//!
//! Deleting a secret a connector references is allowed: the connector keeps running with the
//! value it started with, and fails (class `config`, naming the reference) at its next start
//! until the secret is stored again.
//!
//! Each secret belongs to a team or to the operator; a team's connector resolves its team's
//! secrets only (`crate::resolve`), so another team's secret is missing to it, as one never
//! stored.

use std::time::SystemTime;

use turnpike_config::{check_secret_value, referenced_secrets, ConnectorConfig, Problem, SecretName, TeamName};

use super::{Host, HostError};
use crate::resolve::resolve_connector;

/// A secret as the API lists it: never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretEntry {
    /// The name (`${secret:NAME}`).
    pub name: String,
    /// When it was last stored.
    pub updated_at: SystemTime,
    /// The team that owns it; `None`: the operator's.
    pub team: Option<TeamName>,
    /// Connectors whose configuration references it.
    pub used_by: Vec<String>,
}

impl Host {
    /// Stores (creates or replaces) a secret for `team` (`None`: the operator's), its team
    /// replaced too. Running connectors keep the value they started with; each gets the new
    /// one at its next start, if its team may have it.
    pub fn put_secret(&self, name: &SecretName, value: &str, team: Option<TeamName>) -> Result<(), HostError> {
        check_secret_value(value).map_err(|why| HostError::Invalid(vec![Problem::new("value", why)]))?;
        self.shared.secrets.put(name, value, team.as_ref()).map_err(HostError::NotSaved)?;
        let team_label = team.as_ref().map_or("", TeamName::as_str);
        tracing::info!(secret = %name, team = team_label, users = ?self.secret_users(name.as_str()), "secret stored");
        Ok(())
    }

    /// Every secret, by name, with when it was stored, its team and who references it.
    pub fn secrets(&self) -> Result<Vec<SecretEntry>, HostError> {
        let stored = self.shared.secrets.list().map_err(|e| HostError::Internal(format!("listing secrets: {e}")))?;
        Ok(stored.into_iter().map(|s| SecretEntry { used_by: self.secret_users(&s.name), name: s.name, updated_at: s.updated_at, team: s.team }).collect())
    }

    /// The team secret `name` belongs to: `None` if there is no such secret, `Some(None)` if
    /// it is the operator's. For the API, which answers another team's secret as unknown. A
    /// store that cannot say counts as the operator's, which only admins see.
    pub fn secret_team(&self, name: &SecretName) -> Option<Option<TeamName>> {
        match self.shared.secrets.info(name) {
            Ok(info) => info.map(|i| i.team),
            Err(e) => {
                tracing::error!(secret = %name, error = %e, "cannot read the secret's team; only admins may see it");
                Some(None)
            }
        }
    }

    /// Deletes a secret; `false` when there was none of that name.
    pub fn delete_secret(&self, name: &SecretName) -> Result<bool, HostError> {
        let existed = self.shared.secrets.delete(name).map_err(HostError::NotSaved)?;
        let users = self.secret_users(name.as_str());
        if existed && !users.is_empty() {
            tracing::warn!(secret = %name, connectors = ?users, "secret deleted while connectors reference it; each fails at its next start until it is stored again");
        }
        Ok(existed)
    }

    /// Every problem [`Host::put_connector`] would report for `config`, and besides every
    /// reference in its plugins' configs that does not resolve now (a secret not stored, a
    /// variable the host lacks, a file it cannot read), at once. For the API: a connector
    /// given there is refused rather than left to fail at start. Connectors of the host's
    /// config file are not checked so, since their secrets may be stored only once the API
    /// is up; they fail at start with the same problems.
    pub fn check_connector(&self, config: &ConnectorConfig) -> Result<(), HostError> {
        let mut problems = self.checked(config).err().unwrap_or_default();
        if let Err(unresolved) = resolve_connector(config, "connector", &self.shared.secrets) {
            // A malformed reference is one of the rules' problems already.
            let new: Vec<Problem> = unresolved.into_iter().filter(|p| !problems.contains(p)).collect();
            problems.extend(new);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(HostError::Invalid(problems))
        }
    }

    /// The connectors whose plugin configs, storage credentials or database password
    /// reference secret `name`.
    fn secret_users(&self, name: &str) -> Vec<String> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors
            .iter()
            .filter(|(_, r)| {
                let c = r.definition.config();
                // A sink that signs in with it fails its next start too once it is deleted.
                let keys = c.storage.as_ref().and_then(|s| s.credentials.as_ref());
                let key_texts = keys.into_iter().flat_map(|k| [Some(&k.access_key_id), Some(&k.secret_access_key), k.session_token.as_ref()]);
                // A source that signs in to its database with it, likewise.
                let password = c.database.as_ref().and_then(|d| d.password.as_ref());
                let in_keys = key_texts.flatten().chain(password).any(|text| referenced_secrets(&serde_json::Value::String(text.clone())).contains(name));
                let mut steps = c.source.iter().map(|s| &s.config).chain(c.transforms.iter().map(|t| &t.config)).chain(c.sink.iter().map(|s| &s.config));
                in_keys || steps.any(|config| referenced_secrets(config).contains(name))
            })
            .map(|(n, _)| n.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host::new(crate::Runtime::new().expect("engine"), Vec::new(), crate::SandboxConfig::default())
    }

    fn connector(yaml: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").expect("parses")
    }

    #[test]
    fn a_connector_is_refused_until_its_secret_is_stored_with_every_problem_at_once() {
        let host = host();
        let c = connector("name: s\ntopics: [a]\noutput_topic: b\nsink: {plugin: http-sink, config: {headers: {Authorization: 'Bearer ${secret:token}'}}}\n");
        let Err(HostError::Invalid(problems)) = host.check_connector(&c) else { panic!("refused") };
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|p| p == r#"connector.sink.config.headers.Authorization: ${secret:token}: no secret named "token" (create it with PUT /v1/secrets/token)"#), "{text:#?}");
        assert!(text.iter().any(|p| p.starts_with("connector.output_topic: a sink connector")), "the rules' problems come too: {text:#?}");

        let name = SecretName::parse("token").unwrap();
        host.put_secret(&name, "tok-abcdef", None).unwrap();
        let fine = connector("name: s\ntopics: [a]\nsink: {plugin: http-sink, config: {headers: {Authorization: 'Bearer ${secret:token}'}}}\n");
        assert!(host.check_connector(&fine).is_ok());
        let listed = host.secrets().unwrap();
        assert_eq!(listed.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["token"]);
        assert!(matches!(host.put_secret(&name, "", None), Err(HostError::Invalid(_))), "an empty value is refused");
        assert!(host.delete_secret(&name).unwrap());
        assert!(!host.delete_secret(&name).unwrap());
        assert!(host.check_connector(&fine).is_err(), "refused again once deleted");
    }

    #[test]
    fn a_team_connector_is_refused_another_teams_secret_as_if_it_did_not_exist() {
        let teams = [("analytics", "analytics.*"), ("hr", "hr.*")].map(|(t, p)| (TeamName::parse(t).unwrap(), turnpike_config::TeamPolicy { topics: vec![p.into()], ..Default::default() }));
        let host = host().with_teams(teams.into_iter().collect());
        let (analytics, hr) = (TeamName::parse("analytics").unwrap(), TeamName::parse("hr").unwrap());
        let payroll = SecretName::parse("payroll").unwrap();
        host.put_secret(&payroll, "hr-password", Some(hr.clone())).unwrap();
        let yaml = |team: &str| format!("name: s\nteam: {team}\ntopics: [{team}.in]\nsink: {{plugin: http-sink, config: {{headers: {{Authorization: 'Bearer ${{secret:payroll}}'}}}}}}\n");
        let Err(HostError::Invalid(problems)) = host.check_connector(&connector(&yaml("analytics"))) else { panic!("refused") };
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|p| p == r#"connector.sink.config.headers.Authorization: ${secret:payroll}: no secret named "payroll" (create it with PUT /v1/secrets/payroll)"#), "{text:#?}");
        assert!(host.check_connector(&connector(&yaml("hr"))).is_ok(), "its own team's secret resolves");

        assert_eq!(host.secret_team(&payroll), Some(Some(hr.clone())));
        assert_eq!(host.secret_team(&SecretName::parse("nothing").unwrap()), None);
        assert_eq!(host.secrets().unwrap().into_iter().map(|s| s.team).collect::<Vec<_>>(), [Some(hr)]);
        // Given to analytics, it is theirs alone.
        host.put_secret(&payroll, "analytics-now", Some(analytics.clone())).unwrap();
        assert!(host.check_connector(&connector(&yaml("analytics"))).is_ok());
        assert!(host.check_connector(&connector(&yaml("hr"))).is_err());
    }
}
