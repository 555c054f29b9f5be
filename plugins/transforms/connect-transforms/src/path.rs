//! Field paths, the one syntax every transform uses to name a place in a JSON key or value:
//! `a`, `a.b.c`, `items[*].price`, `items[0].price`, and `` `a.b`.c `` for a name that holds a
//! dot (KIP-821's escaping: inside backquotes `` \` `` is a backquote and `\\` a backslash).
//!
//! Paths are parsed once, at `create`, so a typo is a configuration error naming the key, not
//! a record error on every record.

use std::fmt;

use serde_json::{Map, Value};
use turnpike_sdk::ConfigError;

use crate::part::describe;

/// How many nulls [`Path::set`] may add to reach an element past the end of an array.
const MAX_PADDING: usize = 1000;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An object member.
    Name(String),
    /// One array element.
    Index(usize),
    /// Every array element (`[*]`).
    All,
}

/// A parsed path. It keeps the text the user wrote, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    text: String,
    steps: Vec<Step>,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl Path {
    /// Parses a path, or says what is wrong with it in the user's terms.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the path is empty".into());
        }
        let chars: Vec<char> = text.chars().collect();
        let mut steps = Vec::new();
        let mut i = 0;
        loop {
            // A name, unless the whole path starts with `[` (a key or value that is an array).
            if chars[i] == '`' {
                let (name, next) = quoted(&chars, i + 1).ok_or_else(|| format!("{text:?} opens a backquote it does not close"))?;
                steps.push(Step::Name(name));
                i = next;
            } else if !(i == 0 && chars[i] == '[') {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                if i == start {
                    return Err(format!("{text:?} has an empty name (two dots, or a dot before '[' or at an end)"));
                }
                steps.push(Step::Name(chars[start..i].iter().collect()));
            }
            while i < chars.len() && chars[i] == '[' {
                let close = chars[i..].iter().position(|&c| c == ']').ok_or_else(|| format!("{text:?} opens a '[' it does not close"))?;
                let inner: String = chars[i + 1..i + close].iter().collect();
                steps.push(match inner.as_str() {
                    "*" => Step::All,
                    n if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        Step::Index(n.parse().map_err(|_| format!("{text:?}: [{n}] is too large an index"))?)
                    }
                    n => return Err(format!("{text:?}: [{n}] is neither [*] nor an element number such as [0]")),
                });
                i += close + 1;
            }
            match chars.get(i) {
                None => break,
                Some('.') if i + 1 < chars.len() => i += 1,
                Some('.') => return Err(format!("{text:?} ends with a dot")),
                Some(c) => return Err(format!("{text:?}: expected '.' or '[' before {c:?}; backquote a name that holds such characters")),
            }
        }
        Ok(Self { text: text.to_owned(), steps })
    }

    /// Parses the path at config key `key` for a transform that reads or writes one place, so
    /// `[*]` (which selects several values) is refused; `what` says what the transform does.
    pub fn single(text: &str, key: &str, what: &str) -> Result<Self, ConfigError> {
        let path = Self::parse(text).map_err(|e| ConfigError::at(key, e))?;
        if path.has_wildcard() {
            return Err(ConfigError::at(
                key,
                format!("{text:?} uses [*], which selects several values, but {what} one place; name one element, such as [0]"),
            ));
        }
        Ok(path)
    }

    /// Parses the path at config key `key`, `[*]` allowed.
    pub fn any(text: &str, key: &str) -> Result<Self, ConfigError> {
        Self::parse(text).map_err(|e| ConfigError::at(key, e))
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn has_wildcard(&self) -> bool {
        self.steps.contains(&Step::All)
    }

    /// The value at this path; `None` when any part is missing or the path has `[*]`.
    pub fn get<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        self.steps.iter().try_fold(root, |v, step| match (step, v) {
            (Step::Name(n), Value::Object(m)) => m.get(n),
            (Step::Index(i), Value::Array(a)) => a.get(*i),
            _ => None,
        })
    }

    /// The value at this path, to change in place.
    pub fn get_mut<'a>(&self, root: &'a mut Value) -> Option<&'a mut Value> {
        get_mut(&self.steps, root)
    }

    /// Puts `value` at this path, creating missing parents (an object for a name, an array
    /// padded with nulls, at most [`MAX_PADDING`], for an element number) and replacing nulls
    /// on the way. A parent that
    /// is some other value is an error naming it. An existing member keeps its position.
    pub fn set(&self, root: &mut Value, value: Value) -> Result<(), String> {
        let mut current = root;
        for (depth, step) in self.steps.iter().enumerate() {
            if current.is_null() {
                *current = match step {
                    Step::Index(_) => Value::Array(Vec::new()),
                    _ => Value::Object(Map::new()),
                };
            }
            let here = || if depth == 0 { "the key or value".to_owned() } else { format!("{:?}", render(&self.steps[..depth])) };
            current = match (step, current) {
                (Step::Name(n), Value::Object(m)) => m.entry(n.clone()).or_insert(Value::Null),
                // Padding is bounded: `a[4000000000]` must not make a record allocate gigabytes.
                (Step::Index(i), Value::Array(a)) if *i >= a.len() + MAX_PADDING => {
                    return Err(format!("cannot set {self}: [{i}] is more than {MAX_PADDING} elements past the end of an array of {}", a.len()))
                }
                (Step::Index(i), Value::Array(a)) => {
                    if a.len() <= *i {
                        a.resize(i + 1, Value::Null);
                    }
                    &mut a[*i]
                }
                (Step::All, _) => return Err(format!("cannot write through [*] in {self}")),
                (Step::Name(_), other) => return Err(format!("cannot set {self}: {} is {}, not an object", here(), describe(other))),
                (Step::Index(_), other) => return Err(format!("cannot set {self}: {} is {}, not an array", here(), describe(other))),
            };
        }
        *current = value;
        Ok(())
    }

    /// Removes every value this path reaches (each element's, through `[*]`); a trailing
    /// `[*]` empties the array. Missing parts are skipped. Returns whether anything went.
    pub fn remove_all(&self, root: &mut Value) -> bool {
        let Some((last, parents)) = self.steps.split_last() else { return false };
        let mut removed = false;
        let _ = walk_mut::<()>(parents, root, &mut |parent| {
            removed |= match (last, parent) {
                // shift_remove, not remove: with preserve_order, remove swaps the last key in.
                (Step::Name(n), Value::Object(m)) => m.shift_remove(n).is_some(),
                (Step::Index(i), Value::Array(a)) if *i < a.len() => {
                    a.remove(*i);
                    true
                }
                (Step::All, Value::Array(a)) => !std::mem::take(a).is_empty(),
                _ => false,
            };
            Ok(())
        });
        removed
    }

    /// Calls `f` on every value the path reaches, in document order; missing parts are
    /// skipped. Stops at the first error.
    pub fn for_each_mut<E>(&self, root: &mut Value, f: &mut dyn FnMut(&mut Value) -> Result<(), E>) -> Result<(), E> {
        walk_mut(&self.steps, root, f)
    }
}

/// The value at `steps` below `root`, to change in place.
pub fn get_mut<'a>(steps: &[Step], root: &'a mut Value) -> Option<&'a mut Value> {
    steps.iter().try_fold(root, |v, step| match (step, v) {
        (Step::Name(n), Value::Object(m)) => m.get_mut(n),
        (Step::Index(i), Value::Array(a)) => a.get_mut(*i),
        _ => None,
    })
}

/// Writes steps back as path text, backquoting names that need it.
pub fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Name(n) => {
                if !out.is_empty() {
                    out.push('.');
                }
                if n.is_empty() || n.contains(['.', '[', ']']) || n.starts_with('`') {
                    out.push('`');
                    out.push_str(&n.replace('\\', "\\\\").replace('`', "\\`"));
                    out.push('`');
                } else {
                    out.push_str(n);
                }
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
            Step::All => out.push_str("[*]"),
        }
    }
    out
}

/// Reads a backquoted name starting after the opening backquote; returns it and the index
/// after the closing one.
fn quoted(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut name = String::new();
    loop {
        match *chars.get(i)? {
            '\\' if matches!(chars.get(i + 1), Some('`' | '\\')) => {
                name.push(chars[i + 1]);
                i += 2;
            }
            '`' => return Some((name, i + 1)),
            c => {
                name.push(c);
                i += 1;
            }
        }
    }
}

/// The recursion is bounded: serde_json refuses documents nested deeper than 128 levels.
fn walk_mut<E>(steps: &[Step], value: &mut Value, f: &mut dyn FnMut(&mut Value) -> Result<(), E>) -> Result<(), E> {
    let Some((step, rest)) = steps.split_first() else { return f(value) };
    match (step, value) {
        (Step::Name(n), Value::Object(m)) => match m.get_mut(n) {
            Some(v) => walk_mut(rest, v, f),
            None => Ok(()),
        },
        (Step::Index(i), Value::Array(a)) => match a.get_mut(*i) {
            Some(v) => walk_mut(rest, v, f),
            None => Ok(()),
        },
        (Step::All, Value::Array(a)) => a.iter_mut().try_for_each(|v| walk_mut(rest, v, f)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps(text: &str) -> Vec<Step> {
        Path::parse(text).unwrap().steps
    }

    fn name(n: &str) -> Step {
        Step::Name(n.into())
    }

    #[test]
    fn parses_names_elements_and_backquotes() {
        assert_eq!(steps("a.b"), [name("a"), name("b")]);
        assert_eq!(steps("items[*].price"), [name("items"), Step::All, name("price")]);
        assert_eq!(steps("m[0][12]"), [name("m"), Step::Index(0), Step::Index(12)]);
        assert_eq!(steps("[*].id"), [Step::All, name("id")]);
        assert_eq!(steps("`a.b`.c"), [name("a.b"), name("c")]);
        assert_eq!(steps("x.`a[0]`"), [name("x"), name("a[0]")]);
        assert_eq!(steps(r"`a\`b`"), [name("a`b")]);
        assert_eq!(steps("ba`r.baz"), [name("ba`r"), name("baz")]);
        assert_eq!(steps("`k`[1]"), [name("k"), Step::Index(1)]);
    }

    #[test]
    fn bad_paths_are_explained() {
        for (bad, says) in [
            ("", "empty"),
            ("a..b", "empty name"),
            ("a.", "ends with a dot"),
            (".a", "empty name"),
            ("a[x]", "neither [*] nor"),
            ("a[-1]", "neither [*] nor"),
            ("a[1", "does not close"),
            ("a[1]b", "expected '.' or '['"),
            ("`a.b", "does not close"),
            ("`a`b", "expected '.' or '['"),
            ("a.[0]", "empty name"),
        ] {
            let err = Path::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        let err = Path::single("a[*].b", "field", "extract-field reads").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("field"));
        assert!(err.message.contains("[*]"), "{}", err.message);
    }

    #[test]
    fn get_and_get_mut_find_one_place() {
        let doc = json!({"a": {"b": [10, {"c": 3}]}, "x.y": 1});
        assert_eq!(Path::parse("a.b[1].c").unwrap().get(&doc), Some(&json!(3)));
        assert_eq!(Path::parse("`x.y`").unwrap().get(&doc), Some(&json!(1)));
        assert_eq!(Path::parse("a.missing").unwrap().get(&doc), None);
        assert_eq!(Path::parse("a.b[9]").unwrap().get(&doc), None);
        assert_eq!(Path::parse("a.b.c").unwrap().get(&doc), None);
        let mut doc = doc;
        *Path::parse("a.b[0]").unwrap().get_mut(&mut doc).unwrap() = json!(11);
        assert_eq!(doc["a"]["b"][0], json!(11));
    }

    #[test]
    fn set_creates_parents_and_keeps_order() {
        let mut doc = json!({"z": 1, "a": 2});
        Path::parse("z").unwrap().set(&mut doc, json!(9)).unwrap();
        Path::parse("m.n").unwrap().set(&mut doc, json!(true)).unwrap();
        Path::parse("l[2]").unwrap().set(&mut doc, json!("x")).unwrap();
        assert_eq!(doc.to_string(), r#"{"z":9,"a":2,"m":{"n":true},"l":[null,null,"x"]}"#);
        let mut root = Value::Null;
        Path::parse("a.b").unwrap().set(&mut root, json!(1)).unwrap();
        assert_eq!(root, json!({"a": {"b": 1}}));
        let err = Path::parse("z.q").unwrap().set(&mut doc, json!(1)).unwrap_err();
        assert_eq!(err, r#"cannot set "z.q": "z" is the number 9, not an object"#);
        let err = Path::parse("l[4000000000]").unwrap().set(&mut doc, json!(1)).unwrap_err();
        assert!(err.contains("more than 1000 elements past the end of an array of 3"), "{err}");
    }

    #[test]
    fn remove_all_and_visit_reach_every_match() {
        let mut doc = json!({"items": [{"p": 1, "q": 2}, {"q": 3}, {"p": 4}], "k": 0});
        let mut seen = Vec::new();
        let visit: Result<(), ()> = Path::parse("items[*].p").unwrap().for_each_mut(&mut doc, &mut |v| {
            seen.push(v.clone());
            *v = json!(0);
            Ok(())
        });
        assert!(visit.is_ok());
        assert_eq!(seen, [json!(1), json!(4)]);
        assert!(Path::parse("items[*].q").unwrap().remove_all(&mut doc));
        assert_eq!(doc.to_string(), r#"{"items":[{"p":0},{},{"p":0}],"k":0}"#);
        assert!(!Path::parse("nope.x").unwrap().remove_all(&mut doc));
        assert!(Path::parse("items").unwrap().remove_all(&mut doc));
        assert_eq!(doc.to_string(), r#"{"k":0}"#);
    }

    #[test]
    fn render_round_trips() {
        for text in ["a.b", "`a.b`.c", "items[*].p", "m[0][1]", r"`a\`b[`", "`x\\\\`"] {
            let path = Path::parse(text).unwrap();
            assert_eq!(Path::parse(&render(path.steps())).unwrap().steps, path.steps, "{text}");
        }
    }
}
