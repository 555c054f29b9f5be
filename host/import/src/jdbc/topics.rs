//! Where a JDBC source's records go: `topic.prefix` and the tables as the connector's
//! `output_topic` and `routes`.

use serde_json::{json, Value};

use super::tables::Selection;
use crate::ctx::{is_topic, Ctx};

/// `topic.prefix` → `output_topic` and `routes` (tables go to `<prefix><table>`; a query to
/// the prefix itself).
pub(super) fn topics(ctx: &mut Ctx, selection: &Selection, with_query: bool, set: &mut impl FnMut(&mut Ctx, &str, Value)) -> (Option<String>, Vec<String>) {
    let prefix = ctx.value("topic.prefix");
    if let Some(p) = &prefix {
        if !p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            ctx.skip("topic.prefix", "holds characters a topic name cannot have");
            ctx.note("set the connector's output_topic (and routes) by hand");
            return (None, Vec::new());
        }
    }
    if with_query {
        return match prefix {
            Some(topic) if is_topic(&topic) => {
                ctx.map("topic.prefix", "output_topic (with a query the prefix is the whole topic)");
                (Some(topic), Vec::new())
            }
            _ => {
                ctx.note("a query's records go to topic.prefix, which is not given: set the connector's output_topic before applying");
                (None, Vec::new())
            }
        };
    }
    let concrete: Option<Vec<String>> = selection.include.as_ref().filter(|names| names.iter().all(|n| !n.contains(['*', '?']))).cloned();
    let topic_of = |prefix: &str, table: &str| {
        let bare = table.rsplit_once('.').map_or(table, |(_, t)| t);
        let part: String = bare.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
        format!("{prefix}{part}")
    };
    match (prefix, concrete) {
        (Some(prefix), Some(names)) => {
            set(ctx, "topic.prefix", json!(prefix));
            let topics: Vec<String> = names.iter().map(|n| topic_of(&prefix, n)).filter(|t| is_topic(t)).fold(Vec::new(), |mut v, t| {
                if !v.contains(&t) {
                    v.push(t);
                }
                v
            });
            let mut topics = topics.into_iter();
            let output = topics.next();
            let routes: Vec<String> = topics.collect();
            if !routes.is_empty() {
                ctx.note(format!("each table goes to a topic of its own: {} is output_topic and the others are listed in routes", output.as_deref().unwrap_or_default()));
            }
            (output, routes)
        }
        (Some(prefix), None) => {
            set(ctx, "topic.prefix", json!(prefix));
            let output = prefix.trim_end_matches(['.', '_', '-']).to_owned();
            let output = if is_topic(&output) { output } else { format!("{prefix}tables") };
            ctx.note(format!(
                "the tables are chosen by pattern, so their topics ({prefix}<table>) cannot be listed here: add each to routes (or make one the output_topic, now {output:?}); \
a record for a topic not listed fails the connector"
            ));
            (Some(output), Vec::new())
        }
        (None, Some(names)) => {
            let output = names.first().map(|n| topic_of("", n));
            if names.len() > 1 {
                ctx.note("Kafka Connect wrote each table to a topic named after it; sql-source needs a non-empty topic.prefix for that, so every table now goes to output_topic: set topic.prefix, or make one connector per table");
            }
            (output.filter(|t| is_topic(t)), Vec::new())
        }
        (None, None) => {
            ctx.note("set the connector's output_topic (and topic.prefix with routes for a topic per table) before applying");
            (None, Vec::new())
        }
    }
}
