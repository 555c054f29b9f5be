//! Parsing, escapes, every problem at once, and no value in any message.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn store(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn messages(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

#[test]
fn whole_and_embedded_references_resolve_and_their_values_are_listed() {
    let secrets = store(&[("db", "s3cr3t-db"), ("api-token", "tok-123456")]);
    let config = json!({ "password": "${secret:db}", "headers": { "Authorization": "Bearer ${secret:api-token}" }, "n": 5, "list": ["${secret:db}", "plain"] });
    let resolved = resolve(&config, &secrets).expect("resolves");
    assert_eq!(resolved.value, json!({ "password": "s3cr3t-db", "headers": { "Authorization": "Bearer tok-123456" }, "n": 5, "list": ["s3cr3t-db", "plain"] }));
    assert_eq!(resolved.secret_values, ["s3cr3t-db", "tok-123456"], "each once");
    assert!(!format!("{resolved:?}").contains("s3cr3t"), "Debug shows no value");
}

#[test]
fn a_doubled_dollar_writes_a_literal_reference() {
    let none = store(&[]);
    let resolved = resolve_str("cost $5, template $${name}, $$${x", "k", &none).expect("nothing to resolve");
    assert_eq!(resolved.value, "cost $5, template ${name}, $${x");
    assert!(resolved.secret_values.is_empty());
    assert!(check_syntax(&json!("$${secret:whatever}"), "k").is_empty());
}

#[test]
fn env_and_file_references_resolve() {
    let path = std::env::temp_dir().join(format!("turnpike-ref-{}-env-and-file", std::process::id()));
    std::fs::write(&path, "from-a-file\n").expect("write");
    let text = format!("${{env:CARGO_PKG_NAME}}/${{file:{}}}", path.display());
    let resolved = resolve_str(&text, "k", &store(&[])).expect("resolves");
    std::fs::remove_file(&path).expect("remove");
    assert_eq!(resolved.value, format!("{}/from-a-file", env!("CARGO_PKG_NAME")), "one trailing newline dropped");
    assert_eq!(resolved.secret_values, ["from-a-file", env!("CARGO_PKG_NAME")]);
}

#[test]
fn every_problem_is_reported_at_once_with_its_key_and_no_value() {
    let secrets = store(&[("present", "the-hidden-value")]);
    let config = json!({
        "headers": { "Authorization": "Bearer ${secret:token}", "X-Ok": "${secret:present}" },
        "env": "${env:TURNPIKE_SURELY_UNSET_7Q}",
        "file": "${file:/nonexistent/turnpike/secret}",
        "dir": "${file:/}",
        "odd.key": ["${secret:present}${secret:other}"],
    });
    let problems = resolve_at(&config, "sink.config", &secrets).unwrap_err();
    let got = messages(&problems);
    let want = [
        r#"sink.config.dir: ${file:/}: cannot read /: not a regular file"#,
        r#"sink.config.env: ${env:TURNPIKE_SURELY_UNSET_7Q}: the host has no environment variable TURNPIKE_SURELY_UNSET_7Q"#,
        r#"sink.config.headers.Authorization: ${secret:token}: no secret named "token" (create it with PUT /v1/secrets/token)"#,
        r#"sink.config["odd.key"][0]: ${secret:other}: no secret named "other" (create it with PUT /v1/secrets/other)"#,
    ];
    for w in want {
        assert!(got.iter().any(|g| g == w), "{w} missing from {got:#?}");
    }
    let file = got.iter().find(|g| g.starts_with("sink.config.file: ${file:/nonexistent/turnpike/secret}: cannot read /nonexistent/turnpike/secret: "));
    assert!(file.is_some(), "{got:#?}");
    assert_eq!(got.len(), 5, "{got:#?}");
    assert!(got.iter().all(|g| !g.contains("the-hidden-value")), "no resolved value in a message: {got:#?}");
}

#[test]
fn malformed_references_are_syntax_problems() {
    let config = json!({
        "a": "${vault:x}",
        "b": "${secret:Bad_Name}",
        "c": "${env:1X} and ${file:relative/p}",
        "d": "${nothing}",
        "e": "Bearer ${secret:open",
        "fine": "${secret:a.b_c-1} ${env:_X9} ${file:/run/secrets/k} $5 $${literal}",
    });
    let got = messages(&check_syntax(&config, "c"));
    let how = "write ${secret:NAME}, ${env:NAME} or ${file:/path} (and $${ for a literal ${)";
    let want = [
        format!(r#"c.a: ${{vault:x}}: unknown kind of reference "vault"; {how}"#),
        r#"c.b: ${secret:Bad_Name}: "Bad_Name" is not a secret name: 1 to 63 lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit"#.to_owned(),
        r#"c.c: ${env:1X}: "1X" is not an environment variable name: a letter or `_`, then letters, digits and `_`"#.to_owned(),
        r#"c.c: ${file:relative/p}: "relative/p" is not an absolute path: write the whole path, starting with /"#.to_owned(),
        format!("c.d: ${{nothing}}: not a reference; {how}"),
        format!("c.e: ${{secret:open: no closing `}}`; {how}"),
    ];
    assert_eq!(got, want);
    assert!(resolve(&config, &store(&[])).is_err(), "resolving reports them too");
}

#[test]
fn secret_names_are_file_names_that_cannot_collide_or_escape() {
    let (longest, too_long) = ("x".repeat(63), "x".repeat(64));
    for good in ["a", "db", "api-token", "s3.key_2", longest.as_str()] {
        assert!(SecretName::parse(good).is_ok(), "{good}");
    }
    for bad in ["", "Token", ".hidden", "-x", "a/b", "..", "a b", "é", too_long.as_str()] {
        assert!(SecretName::parse(bad).is_err(), "{bad:?}");
    }
    assert!(check_secret_value("").is_err());
    let short = check_secret_value("abc").unwrap_err();
    assert!(!short.contains("abc"), "{short}");
    assert!(check_secret_value("abcd").is_ok());
}

#[test]
fn secrets_referenced_and_reference_only_values_are_found() {
    let config = json!({ "a": "${secret:one}", "b": ["x ${secret:two} ${env:HOME}"], "c": "${secret:Bad}" });
    assert_eq!(referenced_secrets(&config).into_iter().collect::<Vec<_>>(), ["one", "two"]);
    assert!(is_only_references("${secret:token}"));
    assert!(is_only_references("${env:A}${file:/k}"));
    for not in ["Bearer ${secret:token}", "plain", "", "${secret:Bad}", "$${secret:token}"] {
        assert!(!is_only_references(not), "{not:?}");
    }
}

/// A team's view of the secrets: its own only, and none of the host's environment or files.
struct TeamOnly(BTreeMap<String, String>);

impl SecretLookup for TeamOnly {
    fn secret(&self, name: &str) -> Option<String> {
        self.0.secret(name)
    }
    fn host_references(&self) -> bool {
        false
    }
}

#[test]
fn a_lookup_without_host_references_refuses_env_and_file_and_reads_neither() {
    let path = std::env::temp_dir().join(format!("turnpike-ref-{}-team-file", std::process::id()));
    std::fs::write(&path, "host-only-text").expect("write");
    let team = TeamOnly(store(&[("own", "own-value")]));
    let config = json!({ "a": "${secret:own}", "b": "${env:CARGO_PKG_NAME}", "c": format!("${{file:{}}}", path.display()) });
    let problems = resolve(&config, &team).expect_err("refused");
    let text = messages(&problems);
    assert_eq!(problems.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), ["b", "c"], "{text:?}");
    assert!(text[0].contains("cannot read the host's environment"), "{text:?}");
    assert!(text[1].contains("cannot read the host's files"), "{text:?}");
    assert!(!text.iter().any(|t| t.contains("host-only-text") || t.contains("turnpike-config")), "{text:?}");
    assert_eq!(resolve(&json!("${secret:own}"), &team).expect("its own secret").value, json!("own-value"));
    std::fs::remove_file(&path).ok();
}
