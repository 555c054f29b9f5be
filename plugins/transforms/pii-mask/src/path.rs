//! Field paths: `user.email`, `items[*].card`, `contacts[0].phone`, `[*].ssn`.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    AllElements,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path(Vec<Step>);

impl Path {
    /// Parses a path, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut steps = Vec::new();
        if text.is_empty() {
            return Err("the path is empty".into());
        }
        for part in text.split('.') {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if name.is_empty() && rest.is_empty() {
                return Err(format!("{text:?} has an empty segment (two dots, or a dot at an end)"));
            }
            if !name.is_empty() {
                steps.push(Step::Key(name.to_owned()));
            }
            while !rest.is_empty() {
                let close = rest.find(']').ok_or_else(|| format!("{text:?} has an unclosed '['"))?;
                let inner = &rest[1..close];
                steps.push(match inner {
                    "*" | "" => Step::AllElements,
                    n => Step::Index(n.parse().map_err(|_| format!("{text:?}: [{n}] is neither [*] nor an index"))?),
                });
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return Err(format!("{text:?}: expected '.' or '[' after ']'"));
                }
            }
        }
        Ok(Self(steps))
    }

    /// Calls `f` on every value the path reaches. A key applied to an array applies to each
    /// element, so `items.card` and `items[*].card` mean the same. Missing parts are skipped.
    pub fn for_each_mut(&self, root: &mut Value, f: &mut impl FnMut(&mut Value)) {
        walk(&self.0, root, f);
    }
}

fn walk(steps: &[Step], value: &mut Value, f: &mut impl FnMut(&mut Value)) {
    let Some((step, rest)) = steps.split_first() else {
        f(value);
        return;
    };
    match (step, value) {
        (Step::Key(k), Value::Object(map)) => {
            if let Some(v) = map.get_mut(k) {
                walk(rest, v, f);
            }
        }
        (Step::Key(_), Value::Array(items)) => {
            for item in items {
                walk(steps, item, f);
            }
        }
        (Step::Index(i), Value::Array(items)) => {
            if let Some(v) = items.get_mut(*i) {
                walk(rest, v, f);
            }
        }
        (Step::AllElements, Value::Array(items)) => {
            for item in items {
                walk(rest, item, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hits(path: &str, mut v: Value) -> Value {
        Path::parse(path).unwrap().for_each_mut(&mut v, &mut |x| *x = json!("X"));
        v
    }

    #[test]
    fn paths_reach_nested_fields_and_array_elements() {
        assert_eq!(hits("a.b", json!({"a": {"b": 1, "c": 2}})), json!({"a": {"b": "X", "c": 2}}));
        assert_eq!(hits("a[*].b", json!({"a": [{"b": 1}, {"b": 2}]})), json!({"a": [{"b": "X"}, {"b": "X"}]}));
        assert_eq!(hits("a.b", json!({"a": [{"b": 1}, {"c": 2}]})), json!({"a": [{"b": "X"}, {"c": 2}]}));
        assert_eq!(hits("a[1]", json!({"a": [1, 2]})), json!({"a": [1, "X"]}));
        assert_eq!(hits("[*].s", json!([{"s": 1}])), json!([{"s": "X"}]));
        assert_eq!(hits("m[0][1]", json!({"m": [[1, 2]]})), json!({"m": [[1, "X"]]}));
        assert_eq!(hits("missing.x", json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn bad_paths_are_explained() {
        for bad in ["", "a..b", "a.", "a[x]", "a[1", "a[1]b"] {
            assert!(Path::parse(bad).is_err(), "{bad}");
        }
    }
}
