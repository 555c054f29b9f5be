//! The Kafka Connect transforms through the real runtime: every table case the plugin crate
//! runs natively (`plugins/transforms/connect-transforms/cases/*.json`), here inside the
//! sandbox, each transform reached by its built-in name (a preset of one component).

use std::path::PathBuf;

use serde_json::Value;
use turnpike_runtime::{BatchBuilder, CreateError, InstanceLabels, InstanceLimits, OutputView, Plugin, RecordRef, Runtime, TransformInstance};

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../plugins/transforms/connect-transforms/cases")
}

/// The component, compiled once, as the built-in `name` runs it.
fn preset(name: &str) -> Plugin {
    static BASE: std::sync::OnceLock<Plugin> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| {
        let builtin = turnpike_builtins::get("cast").expect("cast is built in");
        Runtime::new().expect("engine").load(builtin.wasm).expect("the component loads")
    });
    let builtin = turnpike_builtins::get(name).unwrap_or_else(|| panic!("{name} is built in"));
    base.preset(builtin.preset.expect("a preset"))
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "cases".into(), plugin: "connect-transforms@1".into() }
}

fn text(v: &Value) -> Option<&[u8]> {
    v.as_str().map(str::as_bytes)
}

fn headers(v: &Value) -> Vec<(String, String)> {
    v.as_array().map_or_else(Vec::new, |hs| hs.iter().map(|h| (h[0].as_str().unwrap().to_owned(), h[1].as_str().unwrap().to_owned())).collect())
}

/// One case: the record in, what must come out (or the error), compared field by field.
async fn run_case(transform: &str, case: &Value) {
    let name = format!("{transform}: {}", case["name"].as_str().unwrap_or("?"));
    let config = case.get("config").cloned().unwrap_or(Value::Object(Default::default())).to_string();
    let mut instance = TransformInstance::create(&preset(transform), &config, labels(), InstanceLimits::default())
        .await
        .unwrap_or_else(|e| panic!("{name}: create failed: {e}"));
    let input = &case["input"];
    let in_headers = headers(&input["headers"]);
    let mut b = BatchBuilder::default();
    let record = RecordRef {
        key: text(&input["key"]),
        value: text(&input["value"]),
        timestamp: input["timestamp"].as_i64(),
        topic: input["topic"].as_str().unwrap_or("topic"),
        partition: input["partition"].as_i64().unwrap_or(0) as i32,
        offset: input["offset"].as_i64().unwrap_or(0),
    };
    b.push(record, in_headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes())));
    let out = instance.transform(&b.finish()).await.unwrap_or_else(|e| panic!("{name}: the call failed: {e}"));
    if let Some(expected) = case.get("error").and_then(Value::as_str) {
        assert_eq!(out.errors.len(), 1, "{name}: expected the error {expected:?}");
        assert!(out.errors[0].error.message.contains(expected), "{name}: {:?} lacks {expected:?}", out.errors[0].error.message);
        return;
    }
    assert!(out.errors.is_empty(), "{name}: unexpected errors {:?}", out.errors.iter().map(|e| &e.error.message).collect::<Vec<_>>());
    let view = OutputView::new(&out);
    let expected = case["output"].as_array().unwrap_or_else(|| panic!("{name}: no output or error"));
    assert_eq!(view.len(), expected.len(), "{name}: number of outputs");
    for (p, want) in view.iter().zip(expected) {
        let as_text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        assert_eq!(as_text(p.key), want["key"].as_str().map(str::to_owned), "{name}: key");
        assert_eq!(as_text(p.value), want["value"].as_str().map(str::to_owned), "{name}: value");
        if let Some(hs) = want.get("headers") {
            let got: Vec<(String, String)> = view.headers(&p).map(|(k, v)| (k.to_owned(), String::from_utf8_lossy(v).into_owned())).collect();
            assert_eq!(got, headers(hs), "{name}: headers");
        }
        if let Some(topic) = want.get("topic") {
            assert_eq!(p.topic, topic.as_str(), "{name}: topic");
        }
        if let Some(ts) = want.get("timestamp") {
            assert_eq!(p.timestamp, ts.as_i64(), "{name}: timestamp");
        }
    }
}

#[tokio::test]
async fn every_table_case_holds_inside_the_sandbox() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases_dir()).expect("the cases folder").map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut transforms = 0;
    let mut cases = 0;
    for file in files.iter().filter(|f| f.file_stem().is_some_and(|s| s != "config-errors")) {
        let transform = file.file_stem().unwrap().to_str().unwrap();
        let table: Vec<Value> = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in &table {
            run_case(transform, case).await;
            cases += 1;
        }
        transforms += 1;
    }
    assert_eq!(transforms, 16, "a case file per Kafka Connect transform");
    println!("{cases} cases of {transforms} transforms held through the runtime");
}

/// The start of what the host says for serde's phrasing in a case's expected message (the
/// native tests see the plugin's own words; the host rewrites them for the user).
fn in_users_words(expected: &str) -> String {
    let quoted = |rest: &str| rest.strip_prefix('`').and_then(|r| r.split('`').next()).map(str::to_owned);
    if let Some(name) = expected.strip_prefix("unknown field ").and_then(quoted) {
        return format!("unknown key {name:?}");
    }
    if let Some(value) = expected.strip_prefix("unknown variant ").and_then(quoted) {
        return format!("{value:?} is not one of");
    }
    expected.to_owned()
}

#[tokio::test]
async fn config_errors_name_the_users_key_not_the_envelope() {
    let table: Vec<Value> = serde_json::from_slice(&std::fs::read(cases_dir().join("config-errors.json")).unwrap()).unwrap();
    for case in &table {
        let transform = case["transform"].as_str().unwrap();
        let Some(builtin) = turnpike_builtins::get(transform) else { continue };
        assert!(builtin.preset.is_some(), "{transform}");
        let config = case["config"].to_string();
        match TransformInstance::create(&preset(transform), &config, labels(), InstanceLimits::default()).await {
            Err(CreateError::Config { key, message }) => {
                assert_eq!(key.as_deref(), case["key"].as_str(), "{transform} {config}: key");
                let expected = case["message"].as_str().unwrap();
                assert!(message.contains(expected) || message.contains(&in_users_words(expected)), "{transform} {config}: {message}");
            }
            Err(other) => panic!("{transform} {config}: expected a config error, got {other}"),
            Ok(_) => panic!("{transform} {config}: accepted"),
        }
    }
}
