//! A JSON document edited in place: masked values are located by their byte range in the
//! original text and replaced there, so every byte the plugin does not mask (number
//! spellings such as `1e3` or `10.50`, whitespace, key order) stays exactly as it was.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
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
    /// A value serde_json accepts when it checks a document but cannot decode: a key or
    /// string with a lone UTF-16 surrogate such as `"\ud800"`. Nothing in it can be read.
    Unreadable,
}

/// A value whose shape is read the first time it is needed and then kept: every field path
/// and the detectors walk one document, and reading a level means scanning all of its text,
/// so each level is read once per record instead of once per path.
pub struct Tree<'a> {
    /// The value's JSON text, borrowed from the document.
    raw: &'a str,
    node: OnceCell<Node<'a>>,
}

impl<'a> Tree<'a> {
    /// The value, its shape not read yet.
    pub fn new(raw: &'a str) -> Self {
        Self { raw, node: OnceCell::new() }
    }

    /// A whole document: checked and its top level read in one pass (the top level spans
    /// the whole text, so reading it separately would scan every byte twice).
    pub fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        let raw = text.trim_matches([' ', '\t', '\n', '\r']);
        let node = match raw.as_bytes().first() {
            Some(b'{' | b'[' | b'"') => read_level(text)?,
            // A number is only checked, never converted: `1e400` is JSON, but no `f64`.
            _ => {
                serde_json::from_str::<&RawValue>(text)?;
                node(raw)
            }
        };
        Ok(Self { raw, node: OnceCell::from(node) })
    }

    /// The value's JSON text, borrowed from the document.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether a level read so far could not be decoded ([`Node::Unreadable`]): what was
    /// masked may then have missed something.
    pub fn read_unreadable(&self) -> bool {
        match self.node.get() {
            Some(Node::Unreadable) => true,
            Some(Node::Object(entries)) => entries.iter().any(|(_, v)| v.read_unreadable()),
            Some(Node::Array(items)) => items.iter().any(Tree::read_unreadable),
            _ => false,
        }
    }

    /// The value's shape (read now if it was not yet).
    pub fn node(&self) -> &Node<'a> {
        self.node.get_or_init(|| node(self.raw))
    }
}

/// Reads one level of a raw value.
fn node(text: &str) -> Node<'_> {
    let parsed = match text.as_bytes().first() {
        Some(b'{' | b'[' | b'"') => read_level(text),
        Some(b'n') => Ok(Node::Null),
        _ => Ok(Node::Scalar),
    };
    // The document was checked when it was first parsed, but checking skips strings without
    // decoding them: a lone surrogate passes the check and fails only here.
    parsed.unwrap_or(Node::Unreadable)
}

/// Reads one level of the object, array or string `text` is, and nothing may follow it.
fn read_level(text: &str) -> Result<Node<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let node = (&mut de).deserialize_any(Level)?;
    de.end()?;
    Ok(node)
}

/// The byte range of `raw` inside `doc`, which it was borrowed from.
pub fn range(doc: &str, raw: &str) -> Range<usize> {
    let start = raw.as_ptr() as usize - doc.as_ptr() as usize;
    start..start + raw.len()
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

/// Reads one level of a value: an object's entries and an array's items are left raw (their
/// shapes unread), a string is decoded, anything else is a scalar.
struct Level;

impl<'de> Visitor<'de> for Level {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Node<'de>, M::Error> {
        // serde_json gives no size hint; room for a typical record's object in one allocation.
        let mut entries = Vec::with_capacity(8);
        while let Some((key, value)) = map.next_entry::<Text<'de>, &'de RawValue>()? {
            entries.push((key.0, Tree::new(value.get())));
        }
        Ok(Node::Object(entries))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Node<'de>, S::Error> {
        let mut items = Vec::with_capacity(8);
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(Tree::new(item.get()));
        }
        Ok(Node::Array(items))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }
}

/// An object key, borrowed from the document unless it has escapes to decode (serde's own
/// `Cow<str>` always copies).
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A key is read as any string is: through `Level`, which borrows where it can.
        match d.deserialize_str(Level)? {
            Node::String(s) => Ok(Text(s)),
            _ => Err(serde::de::Error::invalid_type(serde::de::Unexpected::Other("a value other than a string"), &"a string")),
        }
    }
}
