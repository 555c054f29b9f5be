//! Predicates on transform steps (Kafka Connect's `predicate` / `negate`): a step runs only on
//! the records its predicate selects, the others pass that step unchanged. The host evaluates
//! them once for every plugin, so no plugin re-implements topic, header or JSONPath matching.

use serde::{Deserialize, Serialize};
use serde_json_path::JsonPath;

use crate::Problem;

/// Which records a transform step runs on. Every condition given must hold; `negate` inverts
/// the result.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Predicate {
    /// The record's topic (as routed by earlier steps) matches this regular expression as a
    /// whole (`TopicNameMatches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_matches: Option<String>,
    /// The record has a header with this name (`HasHeaderKey`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_header: Option<String>,
    /// `true`: the value is null (`RecordIsTombstone`); `false`: it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tombstone: Option<bool>,
    /// An RFC 9535 JSONPath query on the value, selecting when it finds anything
    /// (`$.status`, `$.items[?@.price > 100]`). A root filter on an object value
    /// (`$[?@.status == 'x']`) tests the value itself, as Confluent's Filter does. A value
    /// that is null or not JSON never matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_path: Option<String>,
    /// Select the records the conditions do *not* match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negate: bool,
}

/// A predicate ready to test records.
#[derive(Debug, Clone)]
pub struct RecordSelector {
    topic: Option<regex::Regex>,
    header: Option<String>,
    tombstone: Option<bool>,
    json_path: Option<RootedPath>,
    negate: bool,
}

/// A JSONPath query, and whether it starts with a filter on the root (`$[?…]`), which tests
/// an object value itself rather than each of its members.
#[derive(Debug, Clone)]
struct RootedPath {
    root_filter: bool,
    path: JsonPath,
}

/// The longest JSONPath query and its deepest nesting of brackets: the parser recurses once
/// per level, so an unbounded query could exhaust the stack of the thread validating it.
const MAX_QUERY_BYTES: usize = 1024;
const MAX_QUERY_NESTING: usize = 32;

/// Refuses a query too long or too deeply nested to parse safely, before parsing it.
fn check_size(query: &str) -> Result<(), String> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(format!("the query is {} bytes; at most {MAX_QUERY_BYTES} are accepted", query.len()));
    }
    let (mut depth, mut deepest, mut quote) = (0usize, 0usize, None::<char>);
    let mut chars = query.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ')' | ']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    match deepest > MAX_QUERY_NESTING {
        true => Err(format!("brackets nest {deepest} deep; at most {MAX_QUERY_NESTING} are accepted")),
        false => Ok(()),
    }
}

/// What a predicate looks at in one record.
pub struct RecordFacts<'a, H> {
    /// The record's topic.
    pub topic: &'a str,
    /// Its header names.
    pub header_names: H,
    /// Its value; `None` for a tombstone.
    pub value: Option<&'a [u8]>,
}

impl Predicate {
    /// Compiles the predicate, or lists every problem with its key (`key` is the predicate's
    /// own path, e.g. `connector.transforms[1].predicate`).
    pub fn compile(&self, key: &str) -> Result<RecordSelector, Vec<Problem>> {
        let mut problems = Vec::new();
        if self.topic_matches.is_none() && self.has_header.is_none() && self.tombstone.is_none() && self.json_path.is_none() {
            problems.push(Problem::new(key, "name at least one condition: topic_matches, has_header, tombstone or json_path"));
        }
        let topic = self.topic_matches.as_deref().and_then(|pattern| match regex::Regex::new(&format!("^(?:{pattern})$")) {
            Ok(re) => Some(re),
            Err(e) => {
                problems.push(Problem::new(format!("{key}.topic_matches"), format!("{pattern:?} is not a valid regular expression: {}", regex_reason(&e.to_string()))));
                None
            }
        });
        if self.has_header.as_deref().is_some_and(str::is_empty) {
            problems.push(Problem::new(format!("{key}.has_header"), "name the header (it is empty)"));
        }
        let json_path = self.json_path.as_deref().and_then(|query| match check_size(query).and_then(|()| JsonPath::parse(query).map_err(|e| e.to_string())) {
            Ok(path) => Some(RootedPath { root_filter: query.trim_start().starts_with("$[?"), path }),
            Err(e) => {
                problems.push(Problem::new(format!("{key}.json_path"), format!("{query:?} is not a JSONPath query (RFC 9535, e.g. \"$[?@.status == 'cancelled']\"): {e}")));
                None
            }
        });
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(RecordSelector { topic, header: self.has_header.clone(), tombstone: self.tombstone, json_path, negate: self.negate })
    }
}

impl RecordSelector {
    /// Whether the step runs on this record.
    pub fn selects<'a, H: IntoIterator<Item = &'a str>>(&self, record: RecordFacts<'a, H>) -> bool {
        self.conditions_hold(record) != self.negate
    }

    fn conditions_hold<'a, H: IntoIterator<Item = &'a str>>(&self, record: RecordFacts<'a, H>) -> bool {
        if self.tombstone.is_some_and(|t| t != record.value.is_none()) {
            return false;
        }
        if self.topic.as_ref().is_some_and(|re| !re.is_match(record.topic)) {
            return false;
        }
        if let Some(name) = &self.header {
            if !record.header_names.into_iter().any(|h| h == name) {
                return false;
            }
        }
        match &self.json_path {
            None => true,
            Some(path) => record.value.is_some_and(|bytes| json_path_selects(path, bytes)),
        }
    }
}

/// Whether the query finds anything in the JSON `bytes`. A root filter (`$[?…]`) on an
/// object runs against `[object]`, so it tests the object itself (as Jayway JsonPath, and so
/// Confluent's Filter, do), not each of its members.
fn json_path_selects(query: &RootedPath, bytes: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return false;
    };
    match query.root_filter && value.is_object() {
        true => !query.path.query(&serde_json::Value::Array(vec![value])).is_empty(),
        false => !query.path.query(&value).is_empty(),
    }
}

/// The reason in a `regex` error, without the copy of the pattern and its caret line.
fn regex_reason(text: &str) -> &str {
    text.lines().rfind(|l| l.starts_with("error:")).map_or(text, |l| l.trim_start_matches("error:").trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(topic: &'a str, headers: &'a [&'a str], value: Option<&'a str>) -> RecordFacts<'a, std::iter::Copied<std::slice::Iter<'a, &'a str>>> {
        RecordFacts { topic, header_names: headers.iter().copied(), value: value.map(str::as_bytes) }
    }

    fn compile(yaml: &str) -> RecordSelector {
        serde_yaml_ng::from_str::<Predicate>(yaml).unwrap().compile("p").unwrap()
    }

    #[test]
    fn topic_patterns_match_the_whole_name() {
        let p = compile(r"topic_matches: 'orders\..*'");
        assert!(p.selects(facts("orders.eu", &[], Some("1"))));
        assert!(!p.selects(facts("old-orders.eu", &[], Some("1"))), "a match inside the name is not a match of the name");
        assert!(!p.selects(facts("orders", &[], Some("1"))));
    }

    #[test]
    fn headers_tombstones_and_negation() {
        let p = compile("has_header: trace");
        assert!(p.selects(facts("t", &["a", "trace"], Some("1"))));
        assert!(!p.selects(facts("t", &["tracer"], Some("1"))));
        let p = compile("tombstone: true");
        assert!(p.selects(facts("t", &[], None)) && !p.selects(facts("t", &[], Some(""))));
        let p = compile("{tombstone: true, negate: true}");
        assert!(!p.selects(facts("t", &[], None)) && p.selects(facts("t", &[], Some("x"))));
    }

    #[test]
    fn json_path_tests_the_value_itself_and_nested_parts() {
        let p = compile(r#"json_path: "$[?@.status == 'cancelled']""#);
        assert!(p.selects(facts("t", &[], Some(r#"{"status":"cancelled","id":1}"#))));
        assert!(!p.selects(facts("t", &[], Some(r#"{"status":"open"}"#))));
        assert!(!p.selects(facts("t", &[], Some("not json"))), "a value that is not JSON never matches");
        assert!(!p.selects(facts("t", &[], None)));
        // The members of the value are not the value: a nested object with the status does
        // not make the record match.
        assert!(!p.selects(facts("t", &[], Some(r#"{"before":{"status":"cancelled"},"after":{"status":"open"}}"#))));
        let p = compile(r#"json_path: "$[?@.price > 100]""#);
        assert!(p.selects(facts("t", &[], Some(r#"[{"price":5},{"price":150}]"#))), "on an array, a root filter tests its elements");
        let p = compile(r#"json_path: "$.items[?@.price > 100]""#);
        assert!(p.selects(facts("t", &[], Some(r#"{"items":[{"price":5},{"price":150}]}"#))));
        assert!(!p.selects(facts("t", &[], Some(r#"{"items":[{"price":5}]}"#))));
        let p = compile(r#"json_path: "$.customer.vip""#);
        assert!(p.selects(facts("t", &[], Some(r#"{"customer":{"vip":false}}"#))), "a path that exists selects, whatever its value");
    }

    #[test]
    fn every_condition_must_hold() {
        let p = compile("{topic_matches: 'a.*', has_header: h}");
        assert!(p.selects(facts("ab", &["h"], Some("1"))));
        assert!(!p.selects(facts("ab", &[], Some("1"))));
        assert!(!p.selects(facts("b", &["h"], Some("1"))));
    }

    #[test]
    fn every_problem_is_reported_with_its_key() {
        let bad: Predicate = serde_yaml_ng::from_str("{topic_matches: '(', json_path: '$[', has_header: ''}").unwrap();
        let problems = bad.compile("transforms[1].predicate").unwrap_err();
        let keys: Vec<_> = problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["transforms[1].predicate.topic_matches", "transforms[1].predicate.has_header", "transforms[1].predicate.json_path"]);
        assert!(problems[0].message.contains("not a valid regular expression"), "{}", problems[0].message);
        // Too deep to parse safely (the parser recurses per level): refused before parsing.
        let deep = Predicate { json_path: Some(format!("$[?{}@.a{}]", "(".repeat(200), ")".repeat(200))), ..Predicate::default() };
        let problems = deep.compile("p").unwrap_err();
        assert!(problems[0].message.contains("nest 201 deep"), "{}", problems[0].message);
        let long = Predicate { json_path: Some(format!("$.{}", "a".repeat(2000))), ..Predicate::default() };
        assert!(long.compile("p").unwrap_err()[0].message.contains("at most 1024"));
        let quoted = Predicate { json_path: Some(format!("$[?@.a == '{}']", "(".repeat(100))), ..Predicate::default() };
        assert!(quoted.compile("p").is_ok(), "brackets inside a string do not nest");
        let empty = Predicate::default().compile("p").unwrap_err();
        assert!(empty[0].message.contains("at least one condition"));
    }
}
