use serde_json::json;

use super::*;

fn redacted(mut value: Value) -> Value {
    redact(&mut value);
    value
}

fn shown(text: &str) -> String {
    redact_text(text).unwrap_or_else(|| text.to_owned())
}

#[test]
fn keys_split_into_words_at_separators_and_camel_case() {
    let cases: &[(&str, &[&str])] = &[
        ("X-Auth-Key", &["x", "auth", "key"]),
        ("Ocp-Apim-Subscription-Key", &["ocp", "apim", "subscription", "key"]),
        ("clientSecret", &["client", "secret"]),
        ("APIKey", &["api", "key"]),
        ("apiKEY", &["api", "key"]),
        ("XAuthToken", &["x", "auth", "token"]),
        ("oauth2Token", &["oauth2", "token"]),
        ("db.password", &["db", "password"]),
        ("User ID", &["user", "id"]),
        ("--password", &["password"]),
        ("DB_PASSWORD", &["db", "password"]),
        ("", &[]),
    ];
    for &(key, expected) in cases {
        assert_eq!(words(key), expected, "{key}");
    }
}

#[test]
fn secret_keys_are_recognised_by_rule() {
    for key in [
        // The review's list (M9).
        "X-Auth-Key", "Ocp-Apim-Subscription-Key", "X-Functions-Key", "Private-Key", "private_key", "passphrase", "pass", "pwd",
        "auth", "signature", "dsn", "session", "access_key", "secret_key", "client_secret", "sas", "sig",
        // What was hidden before must stay hidden.
        "password", "secret", "token", "credential", "credentials", "apikey", "api_key", "api-key", "salt", "authorization",
        "Authorization", "cookie", "Cookie", "Set-Cookie",
        // Spellings and compounds.
        "apiKey", "APIKey", "x-api-key", "X-API-KEY", "api_keys", "clientSecret", "db_password", "DB_PASSWORD", "dbpassword",
        "pass_word", "db_pass", "smtp_pwd", "passwd", "auth_token", "access_token", "refresh_token", "accessToken", "xsrftoken",
        "X-CSRF-Token", "X-Amz-Security-Token", "X-Amz-Signature", "X-Amz-Credential", "X-Hub-Signature-256", "Proxy-Authorization",
        "session_id", "sessionid", "PHPSESSID", "session_key", "user_session", "access_key_id", "aws_secret_access_key",
        "subscription_key", "subscriptionKey", "AccountKey", "SharedAccessKey", "SharedAccessSignature", "sas_token", "ssh_key",
        "signing_key", "encryption_key", "master_key", "authkey", "basic_auth", "basicAuth", "oauth", "jwt", "bearer", "creds",
        "sentry_dsn", "hmac_secret", "webhook_secret", "private_key_pem", "auth_user", "db.password",
    ] {
        assert!(is_secret_key(key), "{key} should be secret");
    }
}

#[test]
fn keys_that_describe_or_point_at_a_secret_stay_visible() {
    for key in [
        "token_url", "auth_url", "password_file", "credentials_file", "key_file", "private_key_file", "secret_name", "secretKeyRef",
        "cookie_name", "auth_type", "auth_method", "auth_enabled", "salt_length", "session_timeout_ms", "signature_version",
        "token_ttl", "password_env", "max_tokens", "min_password_length", "SharedAccessKeyName",
        // Record keys and other data keys.
        "key", "keys", "key_field", "partition_key", "record_key", "message_key", "sort_key", "hash_key", "primary_key",
        "public_key", "ordering_key", "object_key", "cache_key", "idempotency_key",
        // Lookalikes.
        "author", "authority", "pass_through", "passthrough", "session_affinity", "keystore", "client_id", "username", "user",
        "Accept", "Content-Type", "User-Agent", "X-Request-Id", "X-Amz-Date", "",
    ] {
        assert!(!is_secret_key(key), "{key} should be visible");
    }
}

#[test]
fn built_in_config_keys_stay_visible() {
    let connector = [
        "name", "topics", "output_topic", "routes", "source", "transforms", "sink", "plugin", "config", "poll_interval_ms",
        "flush_interval_ms", "http", "allow", "connect_timeout_ms", "timeout_ms", "group_id", "start_from", "batch", "max_records",
        "max_wait_ms", "max_bytes", "errors", "tolerance", "dead_letter_topic", "retry_timeout_ms", "retry_max_delay_ms", "limits",
        "memory_mib", "batch_timeout_ms", "create_timeout_ms", "max_output_mib", "max_output_records", "restart", "enabled",
        "base_ms", "max_ms", "jitter_percent", "max_failures", "window_s",
    ];
    let http_sink = ["url", "method", "format", "headers", "timeout_ms"];
    let http_source = ["url", "mode", "cursor_param", "cursor_field", "items", "key_field", "headers", "timeout_ms"];
    let datagen = [
        "fields", "key", "seed", "rate_per_sec", "count", "name", "type", "min", "max", "decimals", "start_ms", "step_ms", "values",
        "value", "length",
    ];
    let pii_mask = ["fields", "path", "mode", "keep_last", "default_mode", "replacement", "detectors", "detector_mode", "on_non_json"];
    for key in connector.iter().chain(&http_sink).chain(&http_source).chain(&datagen).chain(&pii_mask) {
        assert!(!is_secret_key(key), "{key} is a built-in config key and must stay visible");
    }
    // The built-ins' secrets: pii-mask's `salt`, and the headers the READMEs show.
    for key in ["salt", "Authorization"] {
        assert!(is_secret_key(key), "{key}");
    }
}

#[test]
fn secret_scalars_become_the_marker_and_null_stays() {
    let value = redacted(json!({"password": "hunter2", "token": 42, "auth": true, "secret": null, "salt": "", "user": "ada"}));
    assert_eq!(value, json!({"password": "***", "token": "***", "auth": "***", "secret": null, "salt": "***", "user": "ada"}));
}

#[test]
fn values_inside_a_secret_container_are_hidden_and_the_shape_kept() {
    let value = redacted(json!({"credentials": {"user": "ada", "keys": ["k1", 2, null], "nested": {"pin": 1234}}, "other": "x"}));
    assert_eq!(value, json!({"credentials": {"user": "***", "keys": ["***", "***", null], "nested": {"pin": "***"}}, "other": "x"}));
}

#[test]
fn url_passwords_are_hidden_and_the_user_kept() {
    for (text, expected) in [
        ("https://svc:Sup3rS3cret@ingest.example.com/v1", "https://svc:***@ingest.example.com/v1"),
        ("postgres://app:p%40ss@db:5432/orders", "postgres://app:***@db:5432/orders"),
        ("redis://:hunter2@cache:6379", "redis://:***@cache:6379"),
        ("amqp://u:p@ss@mq/vhost", "amqp://u:***@mq/vhost"),
        ("https://ghp_abc123@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
        ("https://user:@host/", "https://user:@host/"),
        ("mongodb+srv://u:pw@cluster0.example.net/?retryWrites=true", "mongodb+srv://u:***@cluster0.example.net/?retryWrites=true"),
    ] {
        assert_eq!(shown(text), expected, "{text}");
    }
}

#[test]
fn secret_query_and_fragment_parameters_are_hidden() {
    for (text, expected) in [
        ("https://h/v1?access_key=AKIAXYZ&region=eu", "https://h/v1?access_key=***&region=eu"),
        ("https://h/?token=t&sig=s", "https://h/?token=***&sig=***"),
        (
            "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101&X-Amz-Signature=abcdef",
            "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***",
        ),
        ("https://acct.blob.core.windows.net/c?sv=2022&sp=r&sig=abc%3D", "https://acct.blob.core.windows.net/c?sv=2022&sp=r&sig=***"),
        ("https://maps.googleapis.com/api?key=AIza123&q=x", "https://maps.googleapis.com/api?key=***&q=x"),
        ("https://fn.azurewebsites.net/api/f?code=fnkey", "https://fn.azurewebsites.net/api/f?code=***"),
        ("https://app/cb#access_token=tok&token_type=bearer", "https://app/cb#access_token=***&token_type=bearer"),
        ("https://h/?a=1;password=p", "https://h/?a=1;password=***"),
        ("https://h/?token=", "https://h/?token="),
        ("https://h/?region=eu&mode=fast", "https://h/?region=eu&mode=fast"),
    ] {
        assert_eq!(shown(text), expected, "{text}");
    }
}

#[test]
fn urls_are_found_inside_any_string() {
    for (text, expected) in [
        ("see https://u:pw@h/x?token=t for details", "see https://u:***@h/x?token=*** for details"),
        ("a://u:p1@h1,b://v:p2@h2", "a://u:***@h1,b://v:***@h2"),
        ("<https://u:p@h>", "<https://u:***@h>"),
        ("https://h/?next=https://u:p@inner/", "https://h/?next=https://u:***@inner/"),
        ("→ https://u:pässwörd@höst/ ←", "→ https://u:***@höst/ ←"),
    ] {
        assert_eq!(shown(text), expected, "{text}");
    }
    let value = redacted(json!({"notes": ["mirror at ftp://bob:pw@files.example.com/pub"], "endpoint": {"primary": "https://x:y@h/"}}));
    assert_eq!(value, json!({"notes": ["mirror at ftp://bob:***@files.example.com/pub"], "endpoint": {"primary": "https://x:***@h/"}}));
}

#[test]
fn secret_pairs_in_connection_strings_are_hidden() {
    for (text, expected) in [
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc/def==;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net",
        ),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=k=",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=***",
        ),
        ("Server=tcp:db,1433;User ID=app;Password=my pass word;", "Server=tcp:db,1433;User ID=app;Password=***;"),
        ("jdbc:sqlserver://db:1433;user=app;password=pw", "jdbc:sqlserver://db:1433;user=app;password=***"),
        ("host=db user=app password=hunter2 dbname=orders", "host=db user=app password=*** dbname=orders"),
        ("host=db password='a b;c' dbname=x", "host=db password='***' dbname=x"),
        ("grant_type=client_credentials&client_secret=s3&scope=read", "grant_type=client_credentials&client_secret=***&scope=read"),
        ("--db.password=pw --verbose", "--db.password=*** --verbose"),
    ] {
        assert_eq!(shown(text), expected, "{text}");
    }
}

#[test]
fn strings_without_secrets_are_left_byte_identical() {
    for text in [
        "https://ingest.example.com/v1/orders",
        "https://api.example.com/v2/tickets?updated_after=2024&limit=10",
        "ada@example.com",
        "mode=fast",
        "a=b;c=d",
        "***",
        "user.password",
        "://no-scheme:pw@h",
        "key=order_id",
        "ünïcödé = ✓; ok",
        "",
    ] {
        assert_eq!(redact_text(text), None, "{text}");
    }
}

#[test]
fn redacting_twice_changes_nothing_more() {
    let once = redacted(review_stored());
    assert_eq!(redacted(once.clone()), once);
}

fn review_stored() -> Value {
    json!({"sink": {"config": {
        "url": "https://svc:Sup3rS3cret@ingest.example.com/v1?access_key=AKIAXYZ",
        "headers": {
            "Authorization": "Bearer real",
            "X-Auth-Key": "cf-global-key-123",
            "Ocp-Apim-Subscription-Key": "azure-sub-key-456",
            "X-Functions-Key": "fn-key-789",
            "Private-Key": "pk-000",
            "Accept": "application/json"
        }
    }}})
}

#[test]
fn the_review_reproduction_is_hidden_and_round_trips() {
    let stored = review_stored();
    let view = redacted(stored.clone());
    assert_eq!(
        view,
        json!({"sink": {"config": {
            "url": "https://svc:***@ingest.example.com/v1?access_key=***",
            "headers": {
                "Authorization": "***",
                "X-Auth-Key": "***",
                "Ocp-Apim-Subscription-Key": "***",
                "X-Functions-Key": "***",
                "Private-Key": "***",
                "Accept": "application/json"
            }
        }}})
    );
    let text = view.to_string();
    for secret in ["Sup3rS3cret", "AKIAXYZ", "Bearer real", "cf-global-key-123", "azure-sub-key-456", "fn-key-789", "pk-000"] {
        assert!(!text.contains(secret), "{secret} leaked in {text}");
    }
    let mut incoming = view;
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming, stored);
    assert!(markers_left(&incoming).is_empty());
}

#[test]
fn built_in_examples_round_trip() {
    for stored in [
        review_stored(),
        json!({"transforms": [{"plugin": "pii-mask", "config": {"fields": ["ssn"], "salt": "change-me", "replacement": "***"}}]}),
        json!({"source": {"plugin": "datagen", "config": {"key": "order_id", "seed": 42, "fields": [{"name": "id", "type": "sequence"}]}}}),
        json!({"source": {"plugin": "http-source", "config": {
            "url": "https://api.example.com/v2?token=t", "key_field": "id", "headers": {"Authorization": "Bearer x"}
        }}}),
        json!({"db": {"dsn": "postgres://u:p@h/db", "conn": "AccountName=a;AccountKey=k", "auth": {"user": "u", "pass": 7, "on": true}}}),
    ] {
        let mut incoming = redacted(stored.clone());
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming, stored);
        assert!(markers_left(&incoming).is_empty(), "{incoming}");
    }
}

#[test]
fn new_values_are_taken_as_given() {
    let stored = review_stored();
    let mut incoming = redacted(stored.clone());
    incoming["sink"]["config"]["headers"]["Authorization"] = json!("Bearer new");
    incoming["sink"]["config"]["url"] = json!("https://svc:N3w@ingest.example.com/v2?access_key=AKIANEW");
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming["sink"]["config"]["headers"]["Authorization"], "Bearer new");
    assert_eq!(incoming["sink"]["config"]["url"], "https://svc:N3w@ingest.example.com/v2?access_key=AKIANEW");
    assert_eq!(incoming["sink"]["config"]["headers"]["X-Auth-Key"], "cf-global-key-123");
    assert!(markers_left(&incoming).is_empty());
}

#[test]
fn a_changed_url_keeps_its_markers_and_they_are_reported() {
    let stored = review_stored();
    let mut incoming = redacted(stored.clone());
    incoming["sink"]["config"]["url"] = json!("https://svc:***@ingest.example.com/v2?access_key=***");
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming["sink"]["config"]["url"], "https://svc:***@ingest.example.com/v2?access_key=***");
    assert_eq!(markers_left(&incoming), ["sink.config.url"]);
}

#[test]
fn a_marker_with_nothing_stored_stays_and_is_reported() {
    let stored = json!({"sink": {"config": {"headers": {"Accept": "application/json", "X-Api-Key": null}}}});
    let mut incoming = json!({
        "sink": {"config": {"headers": {"Accept": "application/json", "Authorization": "***", "X-Api-Key": "***"}}},
        "transforms": [{"config": {"salt": "***"}}]
    });
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming["sink"]["config"]["headers"]["Authorization"], MARKER);
    assert_eq!(incoming["sink"]["config"]["headers"]["X-Api-Key"], MARKER);
    assert_eq!(markers_left(&incoming), ["sink.config.headers.Authorization", "sink.config.headers.X-Api-Key", "transforms[0].config.salt"]);
}

#[test]
fn a_literal_marker_under_a_key_that_is_not_secret_is_a_value() {
    // pii-mask's `replacement` defaults to `***`: it is neither hidden, restored nor reported.
    let stored = json!({"config": {"replacement": "#"}});
    let mut incoming = json!({"config": {"replacement": "***"}});
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming, json!({"config": {"replacement": "***"}}));
    assert!(markers_left(&incoming).is_empty());
    assert_eq!(redacted(incoming.clone()), incoming);
}

#[test]
fn a_whole_value_hidden_by_the_old_api_is_restored() {
    let stored = json!({"auth": {"user": "u", "password": "p"}, "headers": {"Authorization": ["a", "b"]}});
    let mut incoming = json!({"auth": "***", "headers": {"Authorization": "***"}});
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming, stored);
}

#[test]
fn arrays_are_matched_by_index_and_plugin() {
    let stored = json!({"transforms": [
        {"plugin": "pii-mask@1.0.0", "config": {"salt": "s0"}},
        {"plugin": "http-call", "config": {"token": "t1"}}
    ]});
    // Same plugins, new version: matched.
    let mut incoming = json!({"transforms": [
        {"plugin": "pii-mask@1.1.0", "config": {"salt": "***"}},
        {"plugin": "http-call", "config": {"token": "***"}}
    ]});
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming["transforms"][0]["config"]["salt"], "s0");
    assert_eq!(incoming["transforms"][1]["config"]["token"], "t1");
    // Reordered: another plugin's secret is not moved in, and the markers are reported.
    let mut incoming = json!({"transforms": [
        {"plugin": "http-call", "config": {"token": "***"}},
        {"plugin": "pii-mask", "config": {"salt": "***"}}
    ]});
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming["transforms"][0]["config"]["token"], MARKER);
    assert_eq!(markers_left(&incoming), ["transforms[0].config.token", "transforms[1].config.salt"]);
    // Plain arrays by index; elements beyond the stored ones are new.
    let stored = json!({"tokens": ["a", "b"]});
    let mut incoming = json!({"tokens": ["***", "c", "***"]});
    keep_stored_secrets(&mut incoming, &stored);
    assert_eq!(incoming, json!({"tokens": ["a", "c", "***"]}));
    assert_eq!(markers_left(&incoming), ["tokens[2]"]);
}

#[test]
fn marker_paths_quote_unusual_keys() {
    let value = json!({"config": {"db.password": "***", "a b": {"token": "***"}}});
    let mut paths = markers_left(&value);
    paths.sort();
    assert_eq!(paths, [r#"config["a b"].token"#, r#"config["db.password"]"#]);
}

#[test]
fn a_value_made_of_references_alone_is_shown_and_kept() {
    let config = json!({ "token": "${secret:api}", "auth": { "Authorization": "Bearer ${secret:api}" }, "password": "${env:DB_PASS}${file:/run/k}" });
    let shown = redacted(config.clone());
    assert_eq!(shown, json!({ "token": "${secret:api}", "auth": { "Authorization": "***" }, "password": "${env:DB_PASS}${file:/run/k}" }));
    let mut back = shown;
    keep_stored_secrets(&mut back, &config);
    assert_eq!(back, config, "what GET showed, sent back, is what was stored");
    assert!(markers_left(&back).is_empty());
}
