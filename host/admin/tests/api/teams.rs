//! Teams on a shared host: another team's connectors, plugins and secrets are invisible, a
//! team's connector touches only its team's topics, shared plugins are read-only, tokens are
//! made and revoked over the API, and every change is audited without the token in it.

use axum::body::Body;
use axum::http::StatusCode;
use serde_json::{json, Value};
use turnpike_pipeline::EventKind;

use crate::team_world::{identity, json_request, load_shared, request, send, world, Caller};

fn get(uri: &str, token: Option<&str>) -> axum::http::Request<Body> {
    request("get", uri, token, Body::empty(), "application/json")
}

fn problem_keys(body: &Value) -> Vec<String> {
    body["problems"].as_array().map(|ps| ps.iter().filter_map(|p| p["key"].as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

#[tokio::test]
async fn another_teams_connector_answers_exactly_as_a_missing_one() {
    let w = world().await;
    let b = w.token(Caller::EditorB);
    let (status, list) = send(&w.app, get("/v1/connectors", b)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["connectors"], json!([]), "team B sees none of team A's connectors: {list}");
    let (_, mine) = send(&w.app, get("/v1/connectors", w.token(Caller::ViewerA))).await;
    assert_eq!(mine["connectors"].as_array().map(Vec::len), Some(1), "{mine}");
    let (hidden_status, hidden) = send(&w.app, get("/v1/connectors/a-conn", b)).await;
    let (missing_status, missing) = send(&w.app, get("/v1/connectors/no-such", b)).await;
    assert_eq!((hidden_status, missing_status), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    assert_eq!(hidden["error"], missing["error"]);
    assert_eq!(hidden["detail"].as_str().unwrap().replace("a-conn", "X"), missing["detail"].as_str().unwrap().replace("no-such", "X"));
    // Nor by spelling the name percent-encoded (the router decodes it; so does the check).
    for encoded in ["/v1/connectors/%61-conn", "/v1/connectors/a%2Dconn/offsets"] {
        let (status, body) = send(&w.app, get(encoded, b)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{encoded}: {body}");
    }
    let (status, _) = send(&w.app, request("post", "/v1/connectors/%61-conn/stop", b, Body::empty(), "application/json")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = send(&w.app, request("delete", "/v1/plugins/%61-plug/1.0.0", b, Body::empty(), "application/json")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Nor can team B take the name over.
    let (status, body) = send(&w.app, json_request("put", "/v1/connectors/a-conn", b, &json!({ "topics": ["b.in"], "output_topic": "b.out", "transforms": [{ "plugin": "identity" }] }))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, still) = send(&w.app, get("/v1/connectors/a-conn", w.token(Caller::Admin))).await;
    assert_eq!(still["config"]["topics"], json!(["a.in"]), "unchanged: {still}");
}

#[tokio::test]
async fn a_team_connector_cannot_name_another_teams_topics() {
    let w = world().await;
    let a = w.token(Caller::EditorA);
    let body = json!({
        "topics": ["a.in", "b.secret"], "output_topic": "b.out",
        "errors": { "tolerance": "all", "dead_letter_topic": "payments.dlq" },
        "transforms": [{ "plugin": "a-plug" }],
    });
    for uri in ["/v1/connectors/a-two/validate", "/v1/connectors/a-two"] {
        let method = if uri.ends_with("validate") { "post" } else { "put" };
        let (status, answer) = send(&w.app, json_request(method, uri, a, &body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{uri}: {answer}");
        assert_eq!(problem_keys(&answer), ["connector.topics[1]", "connector.output_topic", "connector.errors.dead_letter_topic"], "{uri}: {answer}");
        assert!(answer["problems"][0]["message"].as_str().unwrap().contains("outside team \"a\"'s topics (a.*)"), "{answer}");
    }
    let (status, _) = send(&w.app, get("/v1/connectors/a-two", w.token(Caller::Admin))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was created");
    // An editor cannot put its connector in another team either.
    let (status, answer) = send(&w.app, json_request("put", "/v1/connectors/a-three", a, &json!({ "team": "b", "topics": ["b.in"], "output_topic": "b.out", "transforms": [{ "plugin": "identity" }] }))).await;
    assert_eq!((status, answer["key"].as_str()), (StatusCode::FORBIDDEN, Some("team")), "{answer}");
}

#[tokio::test]
async fn plugins_and_secrets_of_another_team_are_invisible_and_unusable() {
    let w = world().await;
    load_shared(&w.host, "pii-mask").await;
    let b = w.token(Caller::EditorB);
    let (_, plugins) = send(&w.app, get("/v1/plugins", b)).await;
    let names: Vec<&str> = plugins["plugins"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(!names.contains(&"a-plug"), "{plugins}");
    let (status, _) = send(&w.app, get("/v1/plugins/a-plug", b)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Uploading under team A's plugin name is refused without saying whose it is.
    let (status, body) = send(&w.app, request("post", "/v1/plugins?name=a-plug&version=9.0.0", b, Body::from(identity()), "application/wasm")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("name_taken")), "{body}");
    assert!(!body["detail"].as_str().unwrap().contains("\"a\""), "{body}");
    // Team B's connector can neither use team A's plugin nor its secret.
    let using = json!({ "topics": ["b.in"], "output_topic": "b.out", "transforms": [{ "plugin": "a-plug", "config": {} }] });
    let (status, body) = send(&w.app, json_request("put", "/v1/connectors/b-conn", b, &using)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(problem_keys(&body), ["connector.transforms[0].plugin"], "{body}");
    let secret = json!({ "topics": ["b.in"], "output_topic": "b.out", "transforms": [{ "plugin": "pii-mask", "config": { "fields": ["email"], "salt": "${secret:a-secret}" } }] });
    let (status, body) = send(&w.app, json_request("put", "/v1/connectors/b-conn", b, &secret)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("a-secret"), "names the reference that does not resolve: {body}");
    let (_, secrets) = send(&w.app, get("/v1/secrets", b)).await;
    assert_eq!(secrets["secrets"], json!([]), "{secrets}");
    let (_, secrets) = send(&w.app, get("/v1/secrets", w.token(Caller::ViewerA))).await;
    assert_eq!(secrets["secrets"][0]["name"], "a-secret", "{secrets}");
}

#[tokio::test]
async fn shared_plugins_are_read_only_to_teams() {
    let w = world().await;
    let a = w.token(Caller::EditorA);
    let (status, body) = send(&w.app, request("delete", "/v1/plugins/identity/1.0.0", a, Body::empty(), "application/json")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")), "{body}");
    let (status, body) = send(&w.app, request("post", "/v1/plugins?name=identity&version=9.9.9", a, Body::from(identity()), "application/wasm")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("name_taken")), "{body}");
    let (status, body) = send(&w.app, json_request("post", "/v1/plugins/identity/latest/test", a, &json!({ "records": [{ "value": "x" }] }))).await;
    assert_eq!(status, StatusCode::OK, "a dry run of a shared plugin is fine: {body}");
}

#[tokio::test]
async fn tokens_are_made_listed_and_revoked_over_the_api_and_shown_once() {
    let w = world().await;
    let admin = w.token(Caller::Admin);
    let (status, made) = send(&w.app, json_request("post", "/v1/tokens", admin, &json!({ "role": "viewer", "team": "b", "description": "dashboards" }))).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let token = made["token"].as_str().unwrap().to_owned();
    let id = made["info"]["id"].as_str().unwrap().to_owned();
    assert_eq!(send(&w.app, get("/v1/connectors", Some(&token))).await.0, StatusCode::OK);
    let (_, listed) = send(&w.app, get("/v1/tokens", admin)).await;
    assert!(!listed.to_string().contains(&token), "a list never shows a token: {listed}");
    let row = listed["tokens"].as_array().unwrap().iter().find(|t| t["id"] == id.as_str()).expect("listed").clone();
    assert_eq!((row["team"].as_str(), row["role"].as_str()), (Some("b"), Some("viewer")));
    assert!(row["last_used_at"].is_string(), "last use shown: {row}");
    let (status, body) = send(&w.app, json_request("post", "/v1/tokens", admin, &json!({ "role": "editor" }))).await;
    assert_eq!((status, body["key"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("team")), "{body}");
    // Found by the fuzzer: an expiry past year 9999 could not be shown, and the answer panicked.
    let (status, body) = send(&w.app, json_request("post", "/v1/tokens", admin, &json!({ "role": "viewer", "team": "b", "expires_in_s": 3_753_494_723_250_913_792u64 }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = send(&w.app, json_request("post", "/v1/tokens", admin, &json!({ "role": "viewer", "team": "b", "description": "x".repeat(201) }))).await;
    assert_eq!((status, body["key"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("description")), "{body}");
    let (status, body) = send(&w.app, json_request("post", "/v1/tokens", admin, &json!({ "role": "owner", "team": "b" }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("\"owner\" is not one of viewer, editor, admin"), "{body}");
    assert_eq!(send(&w.app, request("delete", &format!("/v1/tokens/{id}"), admin, Body::empty(), "application/json")).await.0, StatusCode::NO_CONTENT);
    let (status, body) = send(&w.app, get("/v1/connectors", Some(&token))).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNAUTHORIZED, Some("token_revoked")), "{body}");
}

#[tokio::test]
async fn every_change_is_audited_with_who_and_the_outcome_and_never_the_token() {
    let w = world().await;
    let mut events = w.host.events().subscribe();
    let a = w.token(Caller::EditorA).unwrap().to_owned();
    let (paused, _) = send(&w.app, request("post", "/v1/connectors/a-conn/pause", Some(&a), Body::empty(), "application/json")).await;
    assert!(paused.is_success(), "{paused}");
    let (status, _) = send(&w.app, request("post", "/v1/connectors/a-conn/resume", Some("tpk_000000000000_bad"), Body::empty(), "application/json")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let mut audits = Vec::new();
    while audits.len() < 2 {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), events.recv()).await.expect("audit events").expect("open");
        let text = serde_json::to_string(&event).unwrap();
        assert!(!text.contains(&a) && !text.contains("tpk_000000000000_bad"), "no token in an event: {text}");
        if let EventKind::Audit { token, team, action, status, .. } = event.kind {
            audits.push((token.is_some(), team, action, status, event.connector));
        }
    }
    assert_eq!(audits[0], (true, Some("a".to_owned()), "POST /v1/connectors/a-conn/pause".to_owned(), paused.as_u16(), "a-conn".to_owned()));
    assert_eq!(audits[1], (false, None, "POST /v1/connectors/a-conn/resume".to_owned(), 401, "a-conn".to_owned()));
}
