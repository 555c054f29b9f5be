//! Values in and out, teams kept and enforced, and the files as earlier hosts left them.

use super::*;

fn name(n: &str) -> SecretName {
    SecretName::parse(n).unwrap()
}

fn team(t: &str) -> TeamName {
    TeamName::parse(t).unwrap()
}

fn exercise(store: &SecretStore) {
    let operator = store.for_team(None);
    assert!(store.list().unwrap().is_empty());
    assert_eq!(operator.secret("token"), None);
    store.put(&name("token"), "first-value", None).unwrap();
    store.put(&name("db"), "db-password", None).unwrap();
    store.put(&name("token"), "second-value", None).unwrap();
    assert_eq!(operator.secret("token").as_deref(), Some("second-value"), "a put replaces");
    assert_eq!(store.list().unwrap().into_iter().map(|s| s.name).collect::<Vec<_>>(), ["db", "token"]);
    assert!(store.delete(&name("db")).unwrap());
    assert!(!store.delete(&name("db")).unwrap(), "gone already");
    assert_eq!(operator.secret("db"), None);
    assert_eq!(operator.secret("Not A Name"), None);
    assert!(!format!("{store:?}").contains("second-value"));
    assert!(!format!("{operator:?}").contains("second-value"));
}

/// Each team resolves its own secrets only; the operator's connectors resolve all.
fn exercise_teams(store: &SecretStore) {
    let (analytics, hr) = (team("analytics"), team("hr"));
    store.put(&name("salt"), "analytics-salt", Some(&analytics)).unwrap();
    store.put(&name("payroll"), "hr-password", Some(&hr)).unwrap();
    store.put(&name("broker"), "operator-key", None).unwrap();
    let (theirs, mine, operator) = (store.for_team(Some(hr.clone())), store.for_team(Some(analytics.clone())), store.for_team(None));
    assert_eq!(mine.secret("salt").as_deref(), Some("analytics-salt"));
    assert_eq!(mine.secret("payroll"), None, "another team's secret is not there");
    assert_eq!(mine.secret("broker"), None, "nor is the operator's");
    assert_eq!(theirs.secret("payroll").as_deref(), Some("hr-password"));
    for n in ["salt", "payroll", "broker"] {
        assert!(operator.secret(n).is_some(), "the operator's connectors resolve {n}");
    }
    assert!(!mine.host_references() && operator.host_references());
    let teams: Vec<(String, Option<TeamName>)> = store.list().unwrap().into_iter().map(|s| (s.name, s.team)).collect();
    assert_eq!(teams, [("broker".to_owned(), None), ("payroll".to_owned(), Some(hr.clone())), ("salt".to_owned(), Some(analytics.clone()))]);
    assert_eq!(store.info(&name("salt")).unwrap().and_then(|i| i.team), Some(analytics.clone()));
    assert_eq!(store.info(&name("nothing")).unwrap(), None);

    // Given to another team: the old one loses it with its new value.
    store.put(&name("salt"), "hr-salt-now", Some(&hr)).unwrap();
    assert_eq!(mine.secret("salt"), None);
    assert_eq!(theirs.secret("salt").as_deref(), Some("hr-salt-now"));

    // Deleted, the team is forgotten: stored again without one, it is the operator's.
    assert!(store.delete(&name("payroll")).unwrap());
    store.put(&name("payroll"), "operator-now", None).unwrap();
    assert_eq!(theirs.secret("payroll"), None);
    assert_eq!(store.info(&name("payroll")).unwrap().map(|i| i.team), Some(None));
}

#[test]
fn secrets_are_stored_replaced_listed_and_deleted() {
    exercise(&SecretStore::in_memory());
    let dir = tempfile::tempdir().unwrap();
    exercise(&SecretStore::in_dir(dir.path().join("secrets")));
}

#[test]
fn a_team_resolves_only_its_own_secrets() {
    exercise_teams(&SecretStore::in_memory());
    let dir = tempfile::tempdir().unwrap();
    exercise_teams(&SecretStore::in_dir(dir.path().join("secrets")));
}

#[test]
fn a_secret_file_holds_the_value_alone_readable_by_its_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::StateStore::open(dir.path()).unwrap().secrets();
    store.put(&name("api-token"), "tok-123", None).unwrap();
    let file = dir.path().join("secrets/api-token");
    assert_eq!(fs::read_to_string(&file).unwrap(), "tok-123");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(dir.path().join("secrets")).unwrap().permissions().mode() & 0o777, 0o700);
    }
    // A leftover temporary and a file that is no secret name are not listed.
    fs::write(dir.path().join("secrets/.tmp-half"), "x").unwrap();
    fs::write(dir.path().join("secrets/Upper"), "x").unwrap();
    let names: Vec<String> = store.list().unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["api-token"]);
    // Clones, and a store opened again on the same directory, see the same secrets.
    assert_eq!(crate::StateStore::open(dir.path()).unwrap().secrets().for_team(None).secret("api-token").as_deref(), Some("tok-123"));
}

#[test]
fn teams_are_kept_in_one_private_file_beside_the_values_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::StateStore::open(dir.path()).unwrap().secrets();
    let analytics = team("analytics");
    store.put(&name("api-token"), "tok-123", Some(&analytics)).unwrap();
    // A secret may carry the teams file's name: it is a value like any other.
    store.put(&name("secret-teams.json"), "not-the-teams", None).unwrap();
    let teams_file = dir.path().join("secret-teams.json");
    let owners: serde_json::Value = serde_json::from_slice(&fs::read(&teams_file).unwrap()).unwrap();
    assert_eq!(owners, serde_json::json!({ "api-token": "analytics" }));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&teams_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(fs::read_to_string(dir.path().join("secrets/api-token")).unwrap(), "tok-123", "the value file holds the value alone");

    let reopened = crate::StateStore::open(dir.path()).unwrap().secrets();
    let listed: Vec<(String, Option<TeamName>)> = reopened.list().unwrap().into_iter().map(|s| (s.name, s.team)).collect();
    assert_eq!(listed, [("api-token".to_owned(), Some(analytics.clone())), ("secret-teams.json".to_owned(), None)]);
    assert_eq!(reopened.for_team(Some(analytics)).secret("api-token").as_deref(), Some("tok-123"));

    assert!(reopened.delete(&name("api-token")).unwrap());
    let owners: serde_json::Value = serde_json::from_slice(&fs::read(&teams_file).unwrap()).unwrap();
    assert_eq!(owners, serde_json::json!({}), "delete forgets the team");
}

#[test]
fn secrets_of_a_host_before_teams_are_the_operators() {
    let dir = tempfile::tempdir().unwrap();
    // As an earlier host left them: values, and no teams file.
    fs::create_dir_all(dir.path().join("secrets")).unwrap();
    fs::write(dir.path().join("secrets/old-token"), "tok-old").unwrap();
    let store = crate::StateStore::open(dir.path()).unwrap().secrets();
    let listed: Vec<(String, Option<TeamName>)> = store.list().unwrap().into_iter().map(|s| (s.name, s.team)).collect();
    assert_eq!(listed, [("old-token".to_owned(), None)]);
    assert_eq!(store.for_team(Some(team("analytics"))).secret("old-token"), None);
    assert_eq!(store.for_team(None).secret("old-token").as_deref(), Some("tok-old"));
    assert!(!dir.path().join("secret-teams.json").exists(), "reading writes nothing");
}

#[test]
fn a_corrupt_teams_file_is_named_and_hides_every_secret_from_teams() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::StateStore::open(dir.path()).unwrap().secrets();
    let analytics = team("analytics");
    store.put(&name("salt"), "analytics-salt", Some(&analytics)).unwrap();
    fs::write(dir.path().join("secret-teams.json"), b"{\"salt\": ").unwrap();
    assert!(store.list().unwrap_err().to_string().contains("secret-teams.json"));
    assert_eq!(store.for_team(Some(analytics)).secret("salt"), None);
    assert_eq!(store.for_team(None).secret("salt").as_deref(), Some("analytics-salt"));
}
