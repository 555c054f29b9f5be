//! Which tables a connector grants to its plugin's SQL: the globs the operator wrote, matched
//! against the schema-qualified names the guard finds in a statement.

/// The tables a connector grants: globs (`orders`, `customer_*`, `public.*`, `shop.orders`)
/// qualified with the default schema.
///
/// A glob is split at its first dot into a schema part and a table part, and each part is
/// matched on its own, so `*` never crosses the schema dot: `public.*` grants every table of
/// `public` and nothing in another schema, and `*` alone grants the default schema's tables.
#[derive(Debug, Clone)]
pub struct TableGrant {
    /// The globs exactly as the connector wrote them, for messages.
    written: Vec<String>,
    patterns: Vec<Pattern>,
    default_schema: String,
}

/// One glob, split at its first dot.
#[derive(Debug, Clone)]
struct Pattern {
    /// `None` for a glob without a dot: its tables live in the default schema, which is a
    /// name, not a glob (a schema called `a*b` must not grant `abb`).
    schema: Option<String>,
    table: String,
}

impl TableGrant {
    /// A glob without a dot means `default_schema.glob`.
    pub fn new(globs: &[String], default_schema: &str) -> Self {
        let patterns = globs
            .iter()
            .map(|glob| {
                let glob = glob.trim();
                match glob.split_once('.') {
                    Some((schema, table)) => Pattern {
                        schema: Some(schema.to_owned()),
                        table: table.to_owned(),
                    },
                    None => Pattern {
                        schema: None,
                        table: glob.to_owned(),
                    },
                }
            })
            .collect();
        Self {
            written: globs.to_vec(),
            patterns,
            default_schema: default_schema.to_owned(),
        }
    }

    /// Whether the qualified name `schema.table` is granted (ASCII case-insensitive; `*` any
    /// run of characters, `?` one character, no other metacharacters).
    pub fn allows(&self, schema: &str, table: &str) -> bool {
        self.patterns.iter().any(|pattern| {
            let schema_matches = match &pattern.schema {
                Some(glob) => glob_matches(glob, schema),
                None => self.default_schema.eq_ignore_ascii_case(schema),
            };
            schema_matches && glob_matches(&pattern.table, table)
        })
    }

    /// The schema a name without one lives in (the database's name in MySQL).
    pub fn default_schema(&self) -> &str {
        &self.default_schema
    }

    /// The globs as the connector wrote them, so a refusal can say what is granted.
    pub(crate) fn globs(&self) -> &[String] {
        &self.written
    }
}

/// Whether `text` matches `pattern`, where `*` is any run of characters (also none) and `?`
/// exactly one; everything else matches itself, ASCII case-insensitively.
///
/// Greedy with one backtrack point (the last `*`), so it runs in O(pattern × text) at worst
/// and never recurses: a plugin controls `text`.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    // Where the last `*` was, and how much of `text` it has swallowed so far.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p + 1, t));
                p += 1;
            }
            Some(&c) if c == '?' || c.eq_ignore_ascii_case(&text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((after_star, swallowed)) => {
                    p = after_star;
                    t = swallowed + 1;
                    star = Some((after_star, swallowed + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(globs: &[&str], default_schema: &str) -> TableGrant {
        let globs: Vec<String> = globs.iter().map(|glob| (*glob).to_owned()).collect();
        TableGrant::new(&globs, default_schema)
    }

    #[test]
    fn a_glob_without_a_dot_lives_in_the_default_schema() {
        let grant = grant(&["orders"], "public");
        assert!(grant.allows("public", "orders"));
        assert!(!grant.allows("private", "orders"));
        assert_eq!(grant.default_schema(), "public");
    }

    #[test]
    fn a_qualified_glob_names_its_own_schema() {
        let grant = grant(&["shop.orders"], "public");
        assert!(grant.allows("shop", "orders"));
        assert!(!grant.allows("public", "orders"));
    }

    #[test]
    fn names_match_ascii_case_insensitively() {
        let grant = grant(&["Customer_*", "SHOP.Orders"], "Public");
        assert!(grant.allows("public", "CUSTOMER_eu"));
        assert!(grant.allows("Shop", "orders"));
        assert!(!grant.allows("public", "orders"));
    }

    #[test]
    fn a_star_does_not_cross_the_schema_dot() {
        let all_of_public = grant(&["public.*"], "shop");
        assert!(all_of_public.allows("public", "anything"));
        assert!(!all_of_public.allows("private", "anything"));

        let default_schema_only = grant(&["*"], "public");
        assert!(default_schema_only.allows("public", "orders"));
        assert!(!default_schema_only.allows("private", "orders"));

        // `public*` has no dot: a table pattern in the default schema, not a schema pattern.
        let no_dot = grant(&["public*"], "shop");
        assert!(!no_dot.allows("public", "orders"));
        assert!(no_dot.allows("shop", "public_orders"));
    }

    #[test]
    fn a_plain_name_grants_that_table_only() {
        let grant = grant(&["orders"], "public");
        assert!(!grant.allows("public", "orders_archive"));
        assert!(!grant.allows("public", "order"));
        assert!(!grant.allows("public", "my_orders"));
    }

    #[test]
    fn a_star_matches_any_run_including_none() {
        let grant = grant(&["customer_*", "a*b*c"], "public");
        assert!(grant.allows("public", "customer_"));
        assert!(grant.allows("public", "customer_eu_west"));
        assert!(!grant.allows("public", "customer"));
        assert!(grant.allows("public", "aXbYc"));
        assert!(grant.allows("public", "abbbc"));
        assert!(!grant.allows("public", "aXbY"));
    }

    #[test]
    fn a_question_mark_matches_exactly_one_character() {
        let grant = grant(&["t?"], "public");
        assert!(grant.allows("public", "t1"));
        assert!(grant.allows("public", "té"));
        assert!(!grant.allows("public", "t"));
        assert!(!grant.allows("public", "t12"));
    }

    #[test]
    fn other_characters_are_not_metacharacters() {
        let grant = grant(&["[ab]", "x+"], "public");
        assert!(grant.allows("public", "[ab]"));
        assert!(!grant.allows("public", "a"));
        assert!(grant.allows("public", "x+"));
        assert!(!grant.allows("public", "xx"));
    }

    #[test]
    fn a_default_schema_is_a_name_not_a_glob() {
        let grant = grant(&["orders"], "s*");
        assert!(grant.allows("s*", "orders"));
        assert!(!grant.allows("shop", "orders"));
    }

    #[test]
    fn no_globs_grant_nothing() {
        let grant = grant(&[], "public");
        assert!(!grant.allows("public", "orders"));
        assert!(grant.globs().is_empty());
    }
}
