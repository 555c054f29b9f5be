//! `turnpike token …`: the admin API's bearer tokens.
//!
//! On the host (`-c FILE` or `--state-dir DIR`) the commands use its state directory
//! directly: that is how the operator makes the first admin token, with or without a running
//! server (a running host sees the change at its next request). Anywhere else they go through
//! the API, with an admin token. `create` prints the token once, alone on standard output;
//! nothing else ever prints one.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use turnpike_config::{HostConfig, Role, TeamName};
use turnpike_state::{TokenInfo, TokenStore};

use crate::admin_cmds::ApiArgs;
use crate::client::{path, Api};
use crate::output::{self, escape, print, Format};

/// The longest `--expires` taken: 100 years.
const MAX_EXPIRES_S: u64 = 36_500 * 86_400;

#[derive(Subcommand)]
pub enum TokenCmd {
    /// Make a token and print it, this once. Viewers and editors act for one team; an admin
    /// for every team.
    Create {
        /// `viewer`, `editor` or `admin`.
        #[arg(long)]
        role: Role,
        /// The team it acts for: required for viewers and editors (on the host, one of the
        /// config's `teams`).
        #[arg(long)]
        team: Option<String>,
        /// Refuse it after this long: `30d`, `12h` or `90m`. Default: never.
        #[arg(long, value_name = "DURATION")]
        expires: Option<String>,
        /// What it is for, shown in lists.
        #[arg(long)]
        description: Option<String>,
    },
    /// List tokens: id, team, role, times and whether each is active. Never a token.
    #[command(alias = "ls")]
    List,
    /// Revoke a token: it is refused from the next request on, and stays listed as revoked.
    Revoke {
        /// The id (`turnpike token list`; the 12 hex digits after `tpk_`).
        id: String,
    },
}

/// Where the host keeps its tokens, to manage them there instead of through the API.
#[derive(Args)]
pub struct OnHost {
    /// Use the tokens of the host run with this config file (in its `state_dir`), without
    /// the API.
    #[arg(short, long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Use the tokens in this state directory, without the API.
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

/// The tokens of a host on this machine.
struct Local {
    store: TokenStore,
    dir: PathBuf,
    /// The config's teams; `None` without a config (`--state-dir`), so nothing to check.
    teams: Option<Vec<TeamName>>,
    /// The config leaves `admin.auth` off, so the API asks for no token.
    auth_off: bool,
}

pub fn token(cmd: TokenCmd, api: &ApiArgs, host: &OnHost) -> Result<()> {
    match local(host)? {
        Some(local) => on_host(cmd, &local, api.output),
        None => over_api(cmd, api),
    }
}

fn local(host: &OnHost) -> Result<Option<Local>> {
    match (&host.config, &host.state_dir) {
        (Some(_), Some(_)) => bail!("give the host's config (-c FILE) or its state directory (--state-dir DIR), not both"),
        (Some(file), None) => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            let config = HostConfig::from_yaml(&text, &file.display().to_string())?;
            let dir = file.parent().map(PathBuf::from).unwrap_or_default().join(&config.state_dir);
            Ok(Some(Local {
                store: TokenStore::in_dir(&dir),
                dir,
                teams: Some(config.teams.keys().cloned().collect()),
                auth_off: !config.admin.auth,
            }))
        }
        (None, Some(dir)) => Ok(Some(Local { store: TokenStore::in_dir(dir), dir: dir.clone(), teams: None, auth_off: false })),
        (None, None) => Ok(None),
    }
}

fn on_host(cmd: TokenCmd, local: &Local, format: Format) -> Result<()> {
    let context = || format!("the tokens in {}", local.dir.display());
    match cmd {
        TokenCmd::Create { role, team, expires, description } => {
            let team = team_for(role, team.as_deref(), local.teams.as_deref())?;
            let expires_at = match expires.as_deref().map(parse_expires).transpose()? {
                Some(after) => Some(SystemTime::now().checked_add(after).context("--expires: too far ahead")?),
                None => None,
            };
            let (info, token) = local.store.create(team, role, expires_at, description).with_context(context)?;
            show_created(format, &token, &view(&info));
            if local.auth_off {
                eprintln!("note: the config leaves `admin.auth` off, so the API asks for no token until it is set to true");
            }
        }
        TokenCmd::List => {
            let tokens = local.store.list().with_context(context)?;
            show_list(format, &json!({ "tokens": tokens.iter().map(view).collect::<Vec<_>>() }));
        }
        TokenCmd::Revoke { id } => {
            if !local.store.revoke(&id, SystemTime::now()).with_context(context)? {
                bail!("no active token with id {}: `turnpike token list` shows them", escape(&id));
            }
            println!("revoked token {}", escape(&id));
        }
    }
    Ok(())
}

fn over_api(cmd: TokenCmd, args: &ApiArgs) -> Result<()> {
    let api = Api::new(&args.api);
    match cmd {
        TokenCmd::Create { role, team, expires, description } => {
            let team = team_for(role, team.as_deref(), None)?;
            let mut body = json!({ "role": role.as_str() });
            if let Some(team) = &team {
                body["team"] = json!(team.as_str());
            }
            if let Some(expires) = &expires {
                body["expires_in_s"] = json!(parse_expires(expires)?.as_secs());
            }
            if let Some(description) = &description {
                body["description"] = json!(description);
            }
            let answer = api.post(&path(&["v1", "tokens"]), &body)?;
            let token = answer["token"].as_str().context("POST /v1/tokens: the answer has no token")?;
            show_created(args.output, token, &answer["info"]);
        }
        TokenCmd::List => show_list(args.output, &api.get(&path(&["v1", "tokens"]))?),
        TokenCmd::Revoke { id } => {
            api.delete(&path(&["v1", "tokens", &id]))?;
            println!("revoked token {}", escape(&id));
        }
    }
    Ok(())
}

/// The team of a new token: viewers and editors need one, an admin may have one. With the
/// host's config at hand it must be one of the config's teams.
fn team_for(role: Role, team: Option<&str>, known: Option<&[TeamName]>) -> Result<Option<TeamName>> {
    let team = match team {
        None if role == Role::Admin => return Ok(None),
        None => bail!("a {role} token acts for one team: give --team NAME"),
        Some(name) => TeamName::parse(name).context("--team")?,
    };
    if let Some(known) = known {
        if !known.contains(&team) {
            let teams = if known.is_empty() {
                "none yet (add it under `teams:` in the config)".to_owned()
            } else {
                known.iter().map(TeamName::as_str).collect::<Vec<_>>().join(", ")
            };
            bail!("--team: the config has no team {:?}; its teams: {teams}", team.as_str());
        }
    }
    Ok(Some(team))
}

/// `30d`, `12h`, `90m`: a whole number of days, hours or minutes, from 1 minute to 100 years.
fn parse_expires(text: &str) -> Result<Duration> {
    let refuse = || anyhow::anyhow!("--expires: {text:?} is not a duration like 30d, 12h or 90m (days, hours, minutes)");
    let per_unit: u64 = match text.chars().last() {
        Some('d') => 86_400,
        Some('h') => 3_600,
        Some('m') => 60,
        _ => return Err(refuse()),
    };
    // The unit is one ASCII byte, so this slice ends on a character boundary.
    let number = &text[..text.len() - 1];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse());
    }
    let seconds = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(per_unit))
        .filter(|s| (1..=MAX_EXPIRES_S).contains(s))
        .with_context(|| format!("--expires: {text:?} is out of range: give from 1m to 36500d"))?;
    Ok(Duration::from_secs(seconds))
}

/// A token as the API shows it, so both modes print the same.
fn view(info: &TokenInfo) -> Value {
    serde_json::to_value(turnpike_admin::TokenView::from(info)).unwrap_or_default()
}

/// The token alone on standard output (or the whole answer, for `-o json`), and on standard
/// error what it is and how to use it.
fn show_created(format: Format, token: &str, info: &Value) {
    match format {
        Format::Json => println!("{}", output::json(&json!({ "token": token, "info": info }))),
        // Escaped: over the API it is the server's text. A real token is plain ASCII.
        Format::Table => println!("{}", escape(token)),
    }
    let mut what = format!("token {}: {}", escape(info["id"].as_str().unwrap_or("?")), escape(info["role"].as_str().unwrap_or("?")));
    if let Some(team) = info["team"].as_str() {
        let _ = write!(what, " of team {}", escape(team));
    }
    if let Some(at) = info["expires_at"].as_str() {
        let _ = write!(what, ", expires {}", escape(at));
    }
    eprintln!(
        "{what}. It is shown only this once: keep it now. Clients use it with `export TURNPIKE_TOKEN=<token>`, or its first line in ~/.config/turnpike/token"
    );
}

const TOKEN_COLUMNS: &[(&str, &str)] = &[
    ("ID", "/id"),
    ("TEAM", "/team"),
    ("ROLE", "/role"),
    ("CREATED", "/created_at"),
    ("EXPIRES", "/expires_at"),
    ("LAST USED", "/last_used_at"),
    ("STATUS", "/status"),
    ("DESCRIPTION", "/description"),
];

fn show_list(format: Format, answer: &Value) {
    let now = SystemTime::now();
    let rows: Vec<Value> = answer["tokens"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut row| {
            let status = status(&row, now);
            if let Some(fields) = row.as_object_mut() {
                fields.insert("status".into(), json!(status));
            }
            row
        })
        .collect();
    print(format, answer, &rows, TOKEN_COLUMNS);
}

/// `revoked`, `expired` or `active`, from a listed token's times.
fn status(row: &Value, now: SystemTime) -> &'static str {
    let expired = row["expires_at"].as_str().and_then(|at| humantime::parse_rfc3339_weak(at).ok()).is_some_and(|at| at <= now);
    if !row["revoked_at"].is_null() {
        "revoked"
    } else if expired {
        "expired"
    } else {
        "active"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_takes_days_hours_and_minutes_only() {
        assert_eq!(parse_expires("30d").unwrap(), Duration::from_secs(30 * 86_400));
        assert_eq!(parse_expires("12h").unwrap(), Duration::from_secs(12 * 3_600));
        assert_eq!(parse_expires("90m").unwrap(), Duration::from_secs(90 * 60));
        for bad in ["", "d", "30", "30s", "1w", "+5d", "-5d", " 5d", "5 d", "1.5h", "5D", "5dé", "é", "0d", "36501d", "99999999999999999999d"] {
            let err = parse_expires(bad).unwrap_err().to_string();
            assert!(err.starts_with("--expires:"), "{bad:?}: {err}");
        }
        assert!(parse_expires("5s").unwrap_err().to_string().contains("like 30d, 12h or 90m"));
        assert!(parse_expires("36500d").is_ok());
    }

    #[test]
    fn viewers_and_editors_need_a_team_the_config_has() {
        let known = [TeamName::parse("analytics").unwrap(), TeamName::parse("ops").unwrap()];
        assert_eq!(team_for(Role::Admin, None, Some(&known[..])).unwrap(), None);
        assert_eq!(team_for(Role::Editor, Some("ops"), Some(&known[..])).unwrap(), Some(known[1].clone()));
        let missing = team_for(Role::Viewer, None, Some(&known[..])).unwrap_err().to_string();
        assert!(missing.contains("--team"), "{missing}");
        let unknown = team_for(Role::Editor, Some("sales"), Some(&known[..])).unwrap_err().to_string();
        assert!(unknown.contains("\"sales\"") && unknown.contains("analytics, ops"), "{unknown}");
        assert!(team_for(Role::Editor, Some("sales"), Some(&[][..])).unwrap_err().to_string().contains("none yet"));
        assert!(team_for(Role::Editor, Some("sales"), None).is_ok(), "without a config there is nothing to check");
        assert!(team_for(Role::Editor, Some("Not A Team"), None).is_err());
    }

    #[test]
    fn a_listed_token_is_revoked_expired_or_active() {
        let now = humantime::parse_rfc3339("2030-01-01T00:00:00Z").unwrap();
        let row = |expires: Value, revoked: Value| json!({ "id": "0123456789ab", "expires_at": expires, "revoked_at": revoked });
        assert_eq!(status(&row(Value::Null, Value::Null), now), "active");
        assert_eq!(status(&row(json!("2031-01-01T00:00:00Z"), Value::Null), now), "active");
        assert_eq!(status(&row(json!("2030-01-01T00:00:00Z"), Value::Null), now), "expired");
        assert_eq!(status(&row(json!("2029-01-01T00:00:00Z"), json!("2029-06-01T00:00:00Z")), now), "revoked");
    }

    #[test]
    fn the_local_view_has_the_apis_fields_and_never_a_hash() {
        let store = TokenStore::in_memory();
        let (info, token) = store.create(Some(TeamName::parse("ops").unwrap()), Role::Viewer, None, Some("ci".into())).unwrap();
        let shown = view(&info);
        let mut keys: Vec<&str> = shown.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut expected = ["id", "team", "role", "created_at", "expires_at", "last_used_at", "revoked_at", "description"];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!((shown["team"].as_str(), shown["role"].as_str(), shown["expires_at"].is_null()), (Some("ops"), Some("viewer"), true));
        assert!(humantime::parse_rfc3339(shown["created_at"].as_str().unwrap()).is_ok());
        assert!(!shown.to_string().contains(&token));
    }
}
