//! Field paths: `user.email`, `items[*].card`, `contacts[0].phone`, `[*].ssn`.

use crate::doc::{Node, Tree};

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
    pub fn for_each<'t, 'a>(&self, root: &'t Tree<'a>, f: &mut impl FnMut(&'t Tree<'a>)) {
        walk(&self.0, root, f);
    }
}

fn walk<'t, 'a>(steps: &[Step], value: &'t Tree<'a>, f: &mut impl FnMut(&'t Tree<'a>)) {
    let Some((step, rest)) = steps.split_first() else {
        f(value);
        return;
    };
    match (step, value.node()) {
        (Step::Key(k), Node::Object(entries)) => {
            // The last duplicate wins, as in most JSON readers; mask every duplicate anyway.
            for (_, v) in entries.iter().filter(|(key, _)| key == k) {
                walk(rest, v, f);
            }
        }
        (Step::Key(_), Node::Array(items)) => items.iter().for_each(|item| walk(steps, item, f)),
        (Step::Index(i), Node::Array(items)) => {
            if let Some(v) = items.get(*i) {
                walk(rest, v, f);
            }
        }
        (Step::AllElements, Node::Array(items)) => items.iter().for_each(|item| walk(rest, item, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{range, Edits};

    fn hits(path: &str, doc: &str) -> String {
        let mut edits = Edits::default();
        Path::parse(path).unwrap().for_each(&Tree::parse(doc).unwrap(), &mut |v| edits.replace(range(doc, v.raw()), r#""X""#.into()));
        edits.apply(doc)
    }

    #[test]
    fn paths_reach_nested_fields_and_array_elements() {
        assert_eq!(hits("a.b", r#"{"a": {"b": 1, "c": 2e0}}"#), r#"{"a": {"b": "X", "c": 2e0}}"#);
        assert_eq!(hits("a[*].b", r#"{"a":[{"b":1},{"b":2}]}"#), r#"{"a":[{"b":"X"},{"b":"X"}]}"#);
        assert_eq!(hits("a.b", r#"{"a":[{"b":1},{"c":2}]}"#), r#"{"a":[{"b":"X"},{"c":2}]}"#);
        assert_eq!(hits("a[1]", r#"{"a":[1,2]}"#), r#"{"a":[1,"X"]}"#);
        assert_eq!(hits("[*].s", r#"[{"s":1}]"#), r#"[{"s":"X"}]"#);
        assert_eq!(hits("m[0][1]", r#"{"m":[[1,2]]}"#), r#"{"m":[[1,"X"]]}"#);
        assert_eq!(hits("missing.x", r#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(hits("k\u{e9}y", "{\"k\\u00e9y\":1}"), "{\"k\\u00e9y\":\"X\"}");
    }

    #[test]
    fn bad_paths_are_explained() {
        for bad in ["", "a..b", "a.", "a[x]", "a[1", "a[1]b"] {
            assert!(Path::parse(bad).is_err(), "{bad}");
        }
    }
}
