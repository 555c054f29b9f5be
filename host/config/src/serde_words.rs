//! serde's messages for the two mistakes people make most — a misspelt key, a value not in a
//! fixed list — rewritten in the user's words: `"scramble" is not one of redact, hash,
//! partial` rather than "unknown variant `scramble`, expected one of …".

/// `message` with serde's unknown-variant and unknown-field phrasing rewritten; any other
/// message is returned unchanged.
pub fn in_users_words(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        if let Some((value, allowed)) = split_expected(rest) {
            return format!("{value:?} is not one of {}", allowed.join(", "));
        }
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        if let Some((key, allowed)) = split_expected(rest) {
            return match allowed.as_slice() {
                [] => format!("unknown key {key:?}: no keys are accepted here"),
                _ => format!("unknown key {key:?}; the keys here are {}", allowed.join(", ")),
            };
        }
    }
    message.to_owned()
}

/// "`x`, expected `a` or `b`" (or "expected one of `a`, `b`, `c`", "expected `a`", "there
/// are no fields") → `("x", ["a", "b"])`.
fn split_expected(text: &str) -> Option<(String, Vec<String>)> {
    let (quoted, expected) = text.split_once(", ")?;
    let value = quoted.strip_prefix('`')?.strip_suffix('`')?.to_owned();
    if expected == "there are no fields" || expected == "there are no variants" {
        return Some((value, Vec::new()));
    }
    let list = expected.strip_prefix("expected one of ").or_else(|| expected.strip_prefix("expected "))?;
    let allowed = list
        .split(", ")
        .flat_map(|part| part.split(" or "))
        .map(|item| item.trim().trim_matches('`').to_owned())
        .filter(|item| !item.is_empty())
        .collect();
    Some((value, allowed))
}

#[cfg(test)]
mod tests {
    use super::in_users_words;

    #[test]
    fn unknown_variants_and_fields_read_as_the_user_would_say_them() {
        assert_eq!(in_users_words("unknown variant `scramble`, expected one of `redact`, `hash`, `partial`"), r#""scramble" is not one of redact, hash, partial"#);
        assert_eq!(in_users_words("unknown variant `some`, expected `none` or `all`"), r#""some" is not one of none, all"#);
        assert_eq!(in_users_words("unknown field `topik`, expected `topic`"), r#"unknown key "topik"; the keys here are topic"#);
        assert_eq!(in_users_words("unknown field `x`, there are no fields"), r#"unknown key "x": no keys are accepted here"#);
        assert_eq!(in_users_words("invalid type: string \"a\", expected u32"), "invalid type: string \"a\", expected u32");
    }
}
