use super::*;

use std::time::UNIX_EPOCH;

fn team(name: &str) -> TeamName {
    TeamName::parse(name).unwrap()
}

/// A fixed time in whole milliseconds, as the file keeps them.
fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

const T0: u64 = 1_800_000_000_000;

fn file_of(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(dir.join("tokens.json")).unwrap()).unwrap()
}

fn exercise(store: &TokenStore) {
    assert!(store.is_empty().unwrap());
    let (info, token) = store.create(Some(team("analytics")), Role::Editor, None, Some("ci".into())).unwrap();
    assert!(!store.is_empty().unwrap());
    assert!(token.starts_with("tpk_") && token.len() == 81, "{token}");
    assert_eq!(parse_token(&token), Some(info.id.as_str()), "the token carries its id");
    let found = store.authenticate(&token, at(T0)).unwrap();
    assert_eq!((found.team, found.role, found.description.as_deref()), (Some(team("analytics")), Role::Editor, Some("ci")));
    assert_eq!(found.last_used_at, Some(at(T0)));
    let (admin, admin_token) = store.create(None, Role::Admin, None, None).unwrap();
    assert_ne!(admin.id, info.id);
    assert_ne!(admin_token, token);
    assert_eq!(store.authenticate(&admin_token, at(T0)).unwrap().team, None);
    let listed: Vec<_> = store.list().unwrap().into_iter().map(|i| (i.id, i.role)).collect();
    assert_eq!(listed, [(info.id, Role::Editor), (admin.id, Role::Admin)], "oldest first");
    assert!(!format!("{store:?}").contains(&token));
}

#[test]
fn a_created_token_authenticates_with_its_role_and_team() {
    exercise(&TokenStore::in_memory());
    let dir = tempfile::tempdir().unwrap();
    exercise(&TokenStore::in_dir(dir.path()));
    // And again from the file alone, as after a restart.
    let again = TokenStore::in_dir(dir.path()).list().unwrap();
    assert_eq!(again.iter().map(|i| i.role).collect::<Vec<_>>(), [Role::Editor, Role::Admin]);
    assert_eq!(again[0].team, Some(team("analytics")));
}

#[test]
fn the_file_holds_a_digest_never_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::StateStore::open(dir.path()).unwrap().tokens();
    let (info, token) = store.create(None, Role::Admin, None, None).unwrap();
    let bytes = fs::read(dir.path().join("tokens.json")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let secret = token.rsplit('_').next().unwrap();
    assert!(!text.contains(&token) && !text.contains(secret), "{text}");
    let file = file_of(dir.path());
    let saved = &file["tokens"][0];
    assert_eq!(saved["sha256"], hex(&sha256(&token)));
    assert_eq!(saved["id"], info.id.as_str());
    assert_eq!(saved["team"], serde_json::Value::Null);
    assert_eq!(file["version"], 1);
}

#[cfg(unix)]
#[test]
fn the_file_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("state");
    let store = TokenStore::in_dir(&fresh);
    store.create(None, Role::Admin, None, None).unwrap();
    assert_eq!(fs::metadata(fresh.join("tokens.json")).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700, "a directory it made");
    store.create(None, Role::Viewer, None, None).unwrap();
    assert_eq!(fs::metadata(fresh.join("tokens.json")).unwrap().permissions().mode() & 0o777, 0o600, "after a rewrite too");
}

#[test]
fn a_wrong_secret_or_an_unknown_id_is_unknown() {
    let store = TokenStore::in_memory();
    let (info, token) = store.create(None, Role::Admin, None, None).unwrap();
    let last = token.chars().last().unwrap();
    let wrong_secret = format!("{}{}", &token[..token.len() - 1], if last == '0' { '1' } else { '0' });
    assert!(matches!(store.authenticate(&wrong_secret, at(T0)), Err(AuthFailure::Unknown)));
    let other_id = if info.id == "000000000000" { "111111111111" } else { "000000000000" };
    let unknown_id = token.replacen(&info.id, other_id, 1);
    assert!(matches!(store.authenticate(&unknown_id, at(T0)), Err(AuthFailure::Unknown)));
    assert!(store.authenticate(&token, at(T0)).is_ok());
}

#[test]
fn anything_not_of_the_exact_shape_is_malformed() {
    let store = TokenStore::in_memory();
    let (_, token) = store.create(None, Role::Admin, None, None).unwrap();
    let hex12 = "0123456789ab";
    let hex64 = "0123456789abcdef".repeat(4);
    let cases = [
        String::new(),
        "tpk_".into(),
        format!("tpk_{hex12}"),
        format!("tpk_{hex12}_"),
        format!("tpk_{hex12}{hex64}"),
        format!("TPK_{hex12}_{hex64}"),
        format!("tok_{hex12}_{hex64}"),
        format!("tpk_{}_{hex64}", hex12.to_uppercase()),
        format!("tpk_{hex12}_{}", hex64.to_uppercase()),
        format!("tpk_{hex12}a_{hex64}"),
        format!("tpk_{hex12}_{hex64}0"),
        format!("tpk_{hex12}_{}", &hex64[1..]),
        format!("tpk_{hex12}_{}g", &hex64[1..]),
        format!("tpk_{hex12}_{}é", &hex64[2..]),
        format!("tpk_{hex12}_{hex64}_{hex64}"),
        format!(" {token}"),
        format!("{token}\n"),
        format!("Bearer {token}"),
    ];
    for case in &cases {
        assert!(matches!(store.authenticate(case, at(T0)), Err(AuthFailure::Malformed)), "{case:?}");
    }
    // The right shape with nothing behind it is unknown, not malformed.
    assert!(matches!(store.authenticate(&format!("tpk_{hex12}_{hex64}"), at(T0)), Err(AuthFailure::Unknown)));
}

#[test]
fn a_token_expires_at_its_time_and_revoked_wins_over_expired() {
    let store = TokenStore::in_memory();
    let expiry = at(T0 + 3_600_000);
    let (info, token) = store.create(None, Role::Viewer, Some(expiry), None).unwrap();
    assert_eq!(info.expires_at, Some(expiry));
    assert!(store.authenticate(&token, at(T0 + 3_599_999)).is_ok());
    assert!(matches!(store.authenticate(&token, expiry), Err(AuthFailure::Expired)), "expires_at <= now");
    assert!(matches!(store.authenticate(&token, at(T0 + 7_200_000)), Err(AuthFailure::Expired)));
    assert!(store.revoke(&info.id, at(T0)).unwrap());
    assert!(matches!(store.authenticate(&token, at(T0 + 7_200_000)), Err(AuthFailure::Revoked)));
}

#[test]
fn a_revoked_token_is_refused_and_kept_in_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::in_dir(dir.path());
    let (info, token) = store.create(Some(team("ops")), Role::Editor, None, None).unwrap();
    let (_, other) = store.create(Some(team("ops")), Role::Editor, None, None).unwrap();
    assert!(!store.revoke("ffffffffffff", at(T0)).unwrap(), "no such token");
    assert!(store.revoke(&info.id, at(T0)).unwrap());
    assert!(!store.revoke(&info.id, at(T0 + 1)).unwrap(), "revoked already");
    assert!(matches!(store.authenticate(&token, at(T0)), Err(AuthFailure::Revoked)));
    assert!(store.authenticate(&other, at(T0)).is_ok(), "only that one");
    let listed = TokenStore::in_dir(dir.path()).list().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].revoked_at, Some(at(T0)), "the first revocation's time, from the file");
    assert!(!store.is_empty().unwrap(), "a revoked token is still a token");
}

#[test]
fn a_second_store_on_the_same_dir_sees_the_others_changes_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let host = TokenStore::in_dir(dir.path());
    let (_, first) = host.create(None, Role::Admin, None, None).unwrap();
    assert!(host.authenticate(&first, at(T0)).is_ok());
    // The host has read the file as it is now, and will not read it again unless it changes.
    host.list().unwrap();
    // The CLI, another process, on the same directory.
    let cli = TokenStore::in_dir(dir.path());
    let (made, second) = cli.create(Some(team("analytics")), Role::Viewer, None, None).unwrap();
    assert_eq!(host.authenticate(&second, at(T0)).unwrap().id, made.id, "seen without a restart");
    // A write by the host keeps what the CLI added, and the other way round.
    host.create(None, Role::Viewer, None, None).unwrap();
    assert_eq!(cli.list().unwrap().len(), 3);
    host.list().unwrap();
    assert!(cli.revoke(&made.id, at(T0)).unwrap());
    assert!(matches!(host.authenticate(&second, at(T0)), Err(AuthFailure::Revoked)), "the CLI's revocation reaches the host");
    assert_eq!(TokenStore::in_dir(dir.path()).list().unwrap().len(), 3);
}

#[test]
fn last_used_is_fresh_in_the_list_and_written_at_most_once_a_minute() {
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::in_dir(dir.path());
    let (info, token) = store.create(None, Role::Admin, None, None).unwrap();
    let saved = || file_of(dir.path())["tokens"][0]["last_used_at"].clone();
    assert_eq!(saved(), serde_json::Value::Null);

    store.authenticate(&token, at(T0)).unwrap();
    assert_eq!(saved(), T0, "the first use is written");
    store.authenticate(&token, at(T0 + 10_000)).unwrap();
    assert_eq!(saved(), T0, "not again within a minute");
    assert_eq!(store.list().unwrap()[0].last_used_at, Some(at(T0 + 10_000)), "the list shows the fresh time");
    store.authenticate(&token, at(T0 + 60_000)).unwrap();
    assert_eq!(saved(), T0 + 60_000, "a minute after the last write");

    // Another change writes the fresh value along, and a new store reads it back.
    store.authenticate(&token, at(T0 + 70_000)).unwrap();
    store.create(None, Role::Viewer, None, None).unwrap();
    assert_eq!(saved(), T0 + 70_000);
    assert_eq!(TokenStore::in_dir(dir.path()).list().unwrap()[0].last_used_at, Some(at(T0 + 70_000)));
    assert_eq!(store.list().unwrap()[0].id, info.id);
}

#[test]
fn a_file_it_cannot_read_is_named_and_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store = TokenStore::in_dir(dir.path());
    let (_, token) = store.create(None, Role::Admin, None, None).unwrap();
    let cases = [
        r#"{"version": 2, "tokens": []}"#.to_owned(),
        r#"{"version": 1, "tokens": [{"id": "tpk_leak"#.to_owned(),
        r#"{"version": 1, "tokens": [{"id": "tpk_leak", "role": "admin"}]}"#.to_owned(),
        r#"{"version": 1, "tokens": [], "extra": "tpk_leak"}"#.to_owned(),
        fs::read_to_string(&path).unwrap().replace("\"admin\"", "\"tpk_leak\""),
        fs::read_to_string(&path).unwrap().replacen("\"sha256\": \"", "\"sha256\": \"tpk_leak", 1),
    ];
    for case in &cases {
        fs::write(&path, case).unwrap();
        let err = TokenStore::in_dir(dir.path()).list().unwrap_err();
        assert!(matches!(err, StateError::Corrupt { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains("tokens.json") && !message.contains("tpk_leak"), "{message}");
        if case.contains("\"version\": 2") {
            assert!(message.contains("version 2"), "{message}");
        }
        assert!(matches!(store.authenticate(&token, at(T0)), Err(AuthFailure::Unavailable(_))), "{case}");
    }
}
