//! Teams and roles on a shared host: who may do what, and which topics each team's connectors
//! may read and write.
//!
//! A token belongs to one team and has one role. Roles are ordered: a viewer reads its
//! team's connectors, plugins and secrets' names; an editor also creates, changes, pauses and
//! deletes its team's connectors and plugins; an admin does everything, for every team, and
//! manages tokens and secrets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Problem;

/// What a token may do. `Viewer < Editor < Admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads its team's connectors, plugins, secrets' names and events.
    Viewer,
    /// A viewer that also creates, changes, pauses, resumes, restarts and deletes its team's
    /// connectors and plugins, and runs dry runs and validations.
    Editor,
    /// Everything, for every team: tokens, secrets, and other teams' connectors.
    Admin,
}

impl Role {
    /// Every role, weakest first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Editor, Role::Admin];

    /// The role's name as written in configs, tokens and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Role::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| format!("role: {s:?} is not one of viewer, editor, admin"))
    }
}

/// What one team may touch (`teams.<name>` in the host config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamPolicy {
    /// Topics the team's connectors may read and write (inputs, outputs, routes and dead
    /// letters), as names or patterns where `*` stands for any run of characters:
    /// `["analytics.*", "customers.masked"]`. Default: none.
    #[serde(default)]
    pub topics: Vec<String>,
    /// What the team's connectors may name in `http.allow`, as `host:port` patterns
    /// (`"api.example.com:443"`, `"*.partner.example:443"`). Default: none, so a team's
    /// connector cannot reach the network (the host's own, its cloud metadata service, the
    /// admin API) unless an admin says where.
    #[serde(default)]
    pub http: Vec<String>,
    /// Buckets the team's connectors may write to (patterns). A team's connector must also
    /// bring its own `storage.credentials`: the host's credential chain is the operator's.
    /// Default: none.
    #[serde(default)]
    pub buckets: Vec<String>,
    /// Databases the team's connectors may read, as `host:port` patterns of their URLs.
    /// Default: none.
    #[serde(default)]
    pub databases: Vec<String>,
}

impl TeamPolicy {
    /// Whether `topic` matches one of the team's patterns.
    pub fn allows_topic(&self, topic: &str) -> bool {
        self.topics.iter().any(|pattern| glob_matches(pattern, topic))
    }

    /// Problems with the patterns, keyed under `key` (e.g. `teams.analytics`).
    pub fn validate(&self, key: &str) -> Vec<Problem> {
        let topic_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '*');
        let mut problems: Vec<Problem> = self
            .topics
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_empty() || p.len() > 249 || !p.chars().all(topic_char))
            .map(|(i, p)| Problem::new(format!("{key}.topics[{i}]"), format!("{p:?} is not a topic name or pattern: use a-z, A-Z, 0-9, '.', '_', '-' and '*' for any run of characters")))
            .collect();
        for (field, patterns) in [("http", &self.http), ("buckets", &self.buckets), ("databases", &self.databases)] {
            for (i, p) in patterns.iter().enumerate().filter(|(_, p)| p.is_empty() || p.chars().any(|c| c.is_whitespace() || c == '/')) {
                problems.push(Problem::new(format!("{key}.{field}[{i}]"), format!("{p:?} is not a pattern like `api.example.com:443` (`*` for any run of characters)")));
            }
        }
        problems
    }
}

/// Whether `text` matches `pattern`, in which `*` matches any run of characters (none
/// included) and every other character only itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    // Greedy match with one backtrack point: the position after the last `*` seen.
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("analytics.*", "analytics.clicks"));
        assert!(glob_matches("analytics.*", "analytics."));
        assert!(!glob_matches("analytics.*", "analytics"));
        assert!(!glob_matches("analytics.*", "xanalytics.clicks"));
        assert!(glob_matches("customers.masked", "customers.masked"));
        assert!(!glob_matches("customers.masked", "customers.masked2"));
        assert!(glob_matches("*.masked", "customers.masked"));
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(!glob_matches("a*b*c", "aXbYbZ"));
        assert!(glob_matches("*", ""));
    }

    #[test]
    fn roles_are_ordered_and_spelled_in_the_users_words() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Admin);
        assert_eq!("editor".parse::<Role>(), Ok(Role::Editor));
        assert_eq!("owner".parse::<Role>().unwrap_err(), "role: \"owner\" is not one of viewer, editor, admin");
    }

    #[test]
    fn bad_patterns_are_named() {
        let policy = TeamPolicy { topics: vec!["ok.*".into(), "bad topic".into(), String::new()], http: vec!["a b:1".into()], ..TeamPolicy::default() };
        let keys: Vec<_> = policy.validate("teams.a").into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["teams.a.topics[1]", "teams.a.topics[2]", "teams.a.http[0]"]);
    }
}
