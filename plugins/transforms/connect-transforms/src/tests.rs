//! Runs the table of cases in `cases/*.json` natively, through `turnpike_sdk::testing` (the
//! same per-batch path the component uses). The host runs the same files through the real
//! runtime, so a case is the contract for both.

use serde::Deserialize;
use serde_json::{json, Value};
use turnpike_sdk::testing::{self, TestRecord};

use crate::{ConnectTransforms, TRANSFORMS};

/// One file per transform, named after it.
const FILES: [(&str, &str); 16] = [
    ("cast", include_str!("../cases/cast.json")),
    ("drop-headers", include_str!("../cases/drop-headers.json")),
    ("extract-field", include_str!("../cases/extract-field.json")),
    ("filter", include_str!("../cases/filter.json")),
    ("flatten", include_str!("../cases/flatten.json")),
    ("header-from", include_str!("../cases/header-from.json")),
    ("hoist-field", include_str!("../cases/hoist-field.json")),
    ("insert-field", include_str!("../cases/insert-field.json")),
    ("insert-header", include_str!("../cases/insert-header.json")),
    ("mask-field", include_str!("../cases/mask-field.json")),
    ("regex-router", include_str!("../cases/regex-router.json")),
    ("replace-field", include_str!("../cases/replace-field.json")),
    ("set-schema-metadata", include_str!("../cases/set-schema-metadata.json")),
    ("timestamp-converter", include_str!("../cases/timestamp-converter.json")),
    ("timestamp-router", include_str!("../cases/timestamp-router.json")),
    ("value-to-key", include_str!("../cases/value-to-key.json")),
];

const CONFIG_ERRORS: &str = include_str!("../cases/config-errors.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    config: Value,
    input: Input,
    output: Option<Vec<Out>>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    key: Option<String>,
    value: Option<String>,
    headers: Vec<(String, String)>,
    topic: String,
    partition: i32,
    offset: i64,
    timestamp: Option<i64>,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Out {
    key: Option<String>,
    value: Option<String>,
    headers: Vec<(String, String)>,
    topic: Option<String>,
    timestamp: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigErrorCase {
    name: String,
    transform: String,
    config: Value,
    key: Option<String>,
    message: String,
}

fn text(bytes: Option<Vec<u8>>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Runs one case; `Err` says how it went wrong.
fn run(transform: &str, case: &Case) -> Result<(), String> {
    let envelope = json!({"transform": transform, "config": case.config});
    let mut plugin = testing::create::<ConnectTransforms>(&envelope.to_string()).map_err(|e| format!("config refused: {e}"))?;
    let input = &case.input;
    let record = TestRecord {
        key: input.key.clone().map(String::into_bytes),
        value: input.value.clone().map(String::into_bytes),
        headers: input.headers.iter().map(|(k, v)| (k.clone(), v.clone().into_bytes())).collect(),
        timestamp: input.timestamp,
        topic: input.topic.clone(),
        partition: input.partition,
        offset: Some(input.offset),
    };
    let result = testing::run(&mut plugin, [record]).map_err(|e| format!("batch failed: {e}"))?;
    let got: Vec<Out> = result
        .outputs
        .into_iter()
        .map(|w| Out {
            key: text(w.key),
            value: text(w.value),
            headers: w.headers.into_iter().map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned())).collect(),
            topic: w.topic,
            timestamp: w.timestamp,
        })
        .collect();
    let error = result.errors.first().map(|(_, e)| e.message.clone());
    match (&case.output, &case.error) {
        (Some(want), None) if error.is_none() && &got == want => Ok(()),
        (Some(want), None) => Err(format!("want {want:?}\n     got {got:?}, error {error:?}")),
        (None, Some(want)) => match error {
            Some(message) if message.contains(want.as_str()) && got.is_empty() => Ok(()),
            _ => Err(format!("want an error containing {want:?}\n     got {got:?}, error {error:?}")),
        },
        _ => Err("a case needs exactly one of output and error".into()),
    }
}

#[test]
fn every_transform_has_a_case_file_and_the_cases_pass() {
    let names: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
    let registered: Vec<&str> = TRANSFORMS.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, registered, "one case file per registered transform");
    let mut failures = Vec::new();
    for (transform, file) in FILES {
        let cases: Vec<Case> = serde_json::from_str(file).unwrap_or_else(|e| panic!("cases/{transform}.json: {e}"));
        assert!(cases.len() >= 3, "cases/{transform}.json has only {} cases", cases.len());
        for case in &cases {
            if let Err(why) = run(transform, case) {
                failures.push(format!("{transform} / {}:\n     {why}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn config_errors_name_the_users_key() {
    let cases: Vec<ConfigErrorCase> = serde_json::from_str(CONFIG_ERRORS).unwrap_or_else(|e| panic!("cases/config-errors.json: {e}"));
    let mut failures = Vec::new();
    for case in &cases {
        let envelope = json!({"transform": case.transform, "config": case.config});
        match testing::create::<ConnectTransforms>(&envelope.to_string()) {
            Ok(_) => failures.push(format!("{}: accepted", case.name)),
            Err(e) if e.key == case.key && e.message.contains(&case.message) => {}
            Err(e) => failures.push(format!(
                "{}: want key {:?}, message with {:?}\n     got key {:?}: {}",
                case.name, case.key, case.message, e.key, e.message
            )),
        }
    }
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn an_absent_or_null_config_is_an_empty_one() {
    assert!(testing::create::<ConnectTransforms>(r#"{"transform":"filter"}"#).is_ok());
    assert!(testing::create::<ConnectTransforms>(r#"{"transform":"filter","config":null}"#).is_ok());
    let err = testing::create::<ConnectTransforms>(r#"{"transform":"filter","confg":{}}"#).err().unwrap();
    assert!(err.message.contains("unknown field `confg`"), "{}", err.message);
}

/// A guest panic is a fault (the host drops the instance), so no record may cause one: every
/// configuration in the tables meets keys and values of every awkward shape.
#[test]
fn no_record_makes_any_configured_transform_panic() {
    let deep = format!("{}1{}", "[".repeat(127), "]".repeat(127));
    let odd: Vec<Option<Vec<u8>>> = vec![
        None,
        Some(Vec::new()),
        Some(vec![0xff, 0xfe, b'{']),
        Some(b"null".to_vec()),
        Some(b"\"\xc3\xa9\xf0\x9f\x98\x80\"".to_vec()),
        Some(b"-0.0".to_vec()),
        Some(b"1e308".to_vec()),
        Some(b"18446744073709551615".to_vec()),
        Some(b"-9223372036854775808".to_vec()),
        Some(b"[{},[],null,true]".to_vec()),
        Some(deep.into_bytes()),
        Some(br#"{"id":{"a":[1,{"b":null}]},"ts":"9999-12-31T23:59:59.999999999Z","age":1e300,"items":[{"price":"NaN"}],"":{"":""}}"#.to_vec()),
        Some(br#"{"ts":-99999999999999999,"order":{"created":1e19},"a":"\u0000","user":[],"content":{"name":7}}"#.to_vec()),
    ];
    for (transform, file) in FILES {
        let cases: Vec<Case> = serde_json::from_str(file).unwrap_or_else(|e| panic!("cases/{transform}.json: {e}"));
        for case in &cases {
            let envelope = json!({"transform": transform, "config": case.config});
            let mut plugin = testing::create::<ConnectTransforms>(&envelope.to_string()).unwrap_or_else(|e| panic!("{transform}: {e}"));
            let records = odd.iter().flat_map(|bytes| {
                let base = TestRecord { topic: "orders".into(), timestamp: Some(i64::MAX), ..TestRecord::default() };
                let as_value = TestRecord { value: bytes.clone(), ..base.clone() };
                let as_key = TestRecord { key: bytes.clone(), value: Some(b"{}".to_vec()), timestamp: None, ..base };
                [as_value, as_key]
            });
            // Errors are fine; only a panic fails the test.
            let _ = testing::run(&mut plugin, records);
        }
    }
}
