//! `regex-router` (Kafka Connect's `RegexRouter`): when the regex matches the whole topic
//! name, the record goes to the replacement, with `$1`, `${name}` expanded as Java does.
//!
//! The regex dialect is Rust's `regex` crate: Java's, less look-around and back-references,
//! which buys matching in linear time on any topic name.

use regex::Regex;
use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    regex: String,
    replacement: String,
}

/// A piece of the replacement.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Group(usize),
}

pub struct RegexRouter {
    /// The user's regex anchored at both ends: Java's `matches()`.
    whole: Regex,
    replacement: Vec<Piece>,
}

impl Smt for RegexRouter {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        // Compiled alone first, so an unbalanced pattern cannot escape the anchoring group
        // and the error speaks of the user's pattern.
        let alone = Regex::new(&config.regex).map_err(|e| ConfigError::at("regex", e.to_string()))?;
        let whole = Regex::new(&format!(r"\A(?:{})\z", config.regex)).map_err(|e| ConfigError::at("regex", e.to_string()))?;
        let replacement = pieces(&config.replacement, &alone).map_err(|e| ConfigError::at("replacement", e))?;
        Ok(Self { whole, replacement })
    }
}

impl Step for RegexRouter {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(groups) = self.whole.captures(record.topic()) else {
            out.forward(record);
            return Ok(());
        };
        let mut topic = String::new();
        for piece in &self.replacement {
            match piece {
                Piece::Text(t) => topic.push_str(t),
                // A group that did not take part in the match adds nothing, as in Java.
                Piece::Group(n) => topic.push_str(groups.get(*n).map_or("", |m| m.as_str())),
            }
        }
        if topic.is_empty() {
            return Err(RecordError::invalid(format!("the replacement turns topic {:?} into an empty topic name", record.topic())));
        }
        part::route(record, out, topic)
    }
}

/// Reads a Java replacement string: `$n` takes as many digits as still name a group (`$1x`
/// is group 1 then `x`; `$12` is group 12 only if there are 12 groups), `${name}` a named
/// group, `\x` the character x. References are checked here, once, not on every record.
fn pieces(text: &str, regex: &Regex) -> Result<Vec<Piece>, String> {
    let groups = regex.captures_len() - 1;
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Piece> = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                let escaped = chars.get(i).ok_or("the replacement ends with a lone backslash; write \\\\ for a backslash")?;
                literal.push(*escaped);
                i += 1;
            }
            '$' => {
                let group = if chars.get(i) == Some(&'{') {
                    let close = chars[i..].iter().position(|&c| c == '}').ok_or("a ${ in the replacement is not closed with }")?;
                    let name: String = chars[i + 1..i + close].iter().collect();
                    i += close + 1;
                    regex.capture_names().position(|n| n == Some(name.as_str())).ok_or(format!("the regex has no group named {name:?}"))?
                } else {
                    let first = chars.get(i).and_then(|c| c.to_digit(10)).ok_or(
                        "a $ in the replacement must be followed by a group number or {name}; write \\$ for a dollar sign",
                    )? as usize;
                    i += 1;
                    if first > groups {
                        return Err(format!("${first} refers to group {first}, but the regex has {groups} group(s)"));
                    }
                    let mut n = first;
                    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                        match n.checked_mul(10).and_then(|m| m.checked_add(d as usize)).filter(|&m| m <= groups) {
                            Some(m) => n = m,
                            None => break,
                        }
                        i += 1;
                    }
                    n
                };
                if !literal.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut literal)));
                }
                out.push(Piece::Group(group));
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        out.push(Piece::Text(literal));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(replacement: &str, regex: &str) -> Result<Vec<Piece>, String> {
        pieces(replacement, &Regex::new(regex).unwrap())
    }

    #[test]
    fn java_replacement_rules() {
        use Piece::*;
        assert_eq!(read("$1x", "(a)"), Ok(vec![Group(1), Text("x".into())]));
        // Only one group: $12 is group 1, then "2".
        assert_eq!(read("$12", "(a)"), Ok(vec![Group(1), Text("2".into())]));
        assert_eq!(read("$12", "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)"), Ok(vec![Group(12)]));
        assert_eq!(read("${n}-$0", "(?P<n>a)"), Ok(vec![Group(1), Text("-".into()), Group(0)]));
        assert_eq!(read(r"\$1\\", "(a)"), Ok(vec![Text(r"$1\".into())]));
        assert!(read("$2", "(a)").unwrap_err().contains("has 1 group"));
        assert!(read("$x", "(a)").unwrap_err().contains("write \\$"));
        assert!(read("${m}", "(?P<n>a)").unwrap_err().contains("no group named"));
        assert!(read("a\\", "a").unwrap_err().contains("lone backslash"));
    }
}
