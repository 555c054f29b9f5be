//! SMTs that change the topic: RegexRouter and TimestampRouter. Besides the step, each says in
//! the step's [`Route`] where records go, so the chain can list the topics under `routes`.

use serde_json::json;

use super::builder::Builder;
use super::syntax::unsupported_date_letter;
use super::Route;
use crate::ctx::{java_only_regex, literal};

pub(super) fn regex_router(b: &mut Builder<'_>) -> Result<(), String> {
    let regex = b.need("regex")?;
    let replacement = b.need_raw("replacement")?;
    if let Some(feature) = java_only_regex(&regex) {
        b.step.notes.push(format!("its regex uses {feature}, which Java has and Turnpike's regular expressions do not: rewrite it, or the connector is refused"));
    }
    b.set("regex", "regex", json!(regex));
    b.set("replacement", "replacement", json!(literal(&replacement)));
    b.step.route = if replacement.contains('$') { Route::Pattern { regex: regex.clone(), replacement } } else { Route::Topic(replacement) };
    Ok(())
}

pub(super) fn timestamp_router(b: &mut Builder<'_>) -> Result<(), String> {
    let topic_format = b.take_raw("topic.format").unwrap_or_else(|| "${topic}-${timestamp}".to_owned());
    if b.given("topic.format") {
        b.set("topic.format", "topic_format", json!(literal(&topic_format)));
    }
    if let Some(f) = b.take("timestamp.format") {
        if let Some(letter) = unsupported_date_letter(&f) {
            b.step.notes.push(format!("its timestamp.format uses `{letter}`, which Turnpike's date formats do not support: change it, or the connector is refused"));
        }
        b.set("timestamp.format", "timestamp_format", json!(literal(&f)));
    }
    b.step.route = Route::Format(topic_format);
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::tests::ok;
    use super::*;

    #[test]
    fn routers_say_where_records_go_and_keep_dollar_signs_literal() {
        let s = ok("org.apache.kafka.connect.transforms.RegexRouter", &[("regex", "(.*)"), ("replacement", "all-${x}$1")]);
        assert_eq!(s.config["replacement"], json!("all-$${x}$1"));
        assert_eq!(s.route, Route::Pattern { regex: "(.*)".into(), replacement: "all-${x}$1".into() });
        let s = ok("org.apache.kafka.connect.transforms.TimestampRouter", &[("topic.format", "${topic}_${timestamp}")]);
        assert_eq!(Value::Object(s.config), json!({"topic_format": "$${topic}_$${timestamp}"}));
        assert_eq!(s.route, Route::Format("${topic}_${timestamp}".into()));
    }
}
