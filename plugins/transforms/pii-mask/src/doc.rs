//! A JSON document edited in place: masked values are located by their byte range in the
//! original text and replaced there, so every byte the plugin does not mask (number
//! spellings such as `1e3` or `10.50`, whitespace, key order) stays exactly as it was.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A value's shape, read without parsing its children.
pub enum Node<'a> {
    Object(Vec<(Cow<'a, str>, Tree<'a>)>),
    Array(Vec<Tree<'a>>),
    String(Cow<'a, str>),
    Null,
    /// A number or a boolean.
    Scalar,
}

/// A value whose shape is read the first time it is needed and then kept: every field path
/// and the detectors walk one document, and reading a level means scanning all of its text,
/// so each level is read once per record instead of once per path.
pub struct Tree<'a> {
    raw: &'a RawValue,
    node: OnceCell<Node<'a>>,
}

impl<'a> Tree<'a> {
    /// The value, its shape not read yet.
    pub fn new(raw: &'a RawValue) -> Self {
        Self { raw, node: OnceCell::new() }
    }

    /// The value's JSON text, borrowed from the document.
    pub fn raw(&self) -> &'a RawValue {
        self.raw
    }

    /// The value's shape (read now if it was not yet).
    pub fn node(&self) -> &Node<'a> {
        self.node.get_or_init(|| node(self.raw))
    }
}

/// Reads one level of a raw value.
fn node<'a>(raw: &'a RawValue) -> Node<'a> {
    let text = raw.get();
    let parsed = match text.as_bytes().first() {
        Some(b'{') => serde_json::from_str::<Entries<'a>>(text).map(|e| Node::Object(e.0)),
        Some(b'[') => serde_json::from_str::<Vec<&'a RawValue>>(text).map(|items| Node::Array(items.into_iter().map(Tree::new).collect())),
        Some(b'"') => serde_json::from_str::<Cow<'a, str>>(text).map(Node::String),
        Some(b'n') => Ok(Node::Null),
        _ => Ok(Node::Scalar),
    };
    // The whole document was validated when it was first parsed, so a child always parses.
    parsed.unwrap_or(Node::Scalar)
}

/// The byte range of `raw` inside `doc`, which it was borrowed from.
pub fn range(doc: &str, raw: &RawValue) -> Range<usize> {
    let start = raw.get().as_ptr() as usize - doc.as_ptr() as usize;
    start..start + raw.get().len()
}

/// Replacements to make in a document.
#[derive(Default)]
pub struct Edits(Vec<(Range<usize>, String)>);

impl Edits {
    /// Replaces `range` with `text` (JSON). An edit inside an already edited range is ignored.
    pub fn replace(&mut self, range: Range<usize>, text: String) {
        if !self.covers(&range) {
            self.0.push((range, text));
        }
    }

    /// Whether `range` lies inside a range already being replaced.
    pub fn covers(&self, range: &Range<usize>) -> bool {
        self.0.iter().any(|(r, _)| r.start <= range.start && range.end <= r.end)
    }

    /// The edited document.
    pub fn apply(mut self, doc: &str) -> String {
        self.0.sort_by_key(|(r, _)| r.start);
        let mut out = String::with_capacity(doc.len());
        let mut at = 0;
        for (r, text) in &self.0 {
            if r.start < at {
                continue; // overlaps an earlier, wider edit
            }
            out.push_str(&doc[at..r.start]);
            out.push_str(text);
            at = r.end;
        }
        out.push_str(&doc[at..]);
        out
    }
}

/// An object's entries in document order, values left raw (their shapes unread).
struct Entries<'a>(Vec<(Cow<'a, str>, Tree<'a>)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Entries<'de>, M::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                    entries.push((key, Tree::new(value)));
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(V)
    }
}
