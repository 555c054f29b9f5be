//! The SMT chain (`transforms=a,b`, `transforms.<alias>.*`) and its predicates
//! (`predicates=p`, `predicates.<alias>.*`, `transforms.<alias>.predicate` / `.negate`) as
//! Turnpike transform steps with `predicate:`.

mod smt;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, is_topic, java_only_regex, list, Ctx, Flow};
use smt::Route;

/// The steps, and the topics they always route to (for `routes`).
pub(crate) struct Chain {
    pub(crate) steps: Vec<Value>,
    pub(crate) routes: Vec<String>,
}

const PREDICATES: &str = "org.apache.kafka.connect.transforms.predicates.";

pub(crate) fn chain(ctx: &mut Ctx, flow: Flow, topics: &[String]) -> Chain {
    let aliases = ctx.value("transforms").map(|t| list(&t)).unwrap_or_default();
    ctx.map("transforms", "transforms");
    let declared_predicates = ctx.value("predicates").map(|t| list(&t)).unwrap_or_default();
    let mut steps: Vec<Value> = Vec::new();
    let mut routes: Vec<String> = Vec::new();
    // Predicate alias → the steps (by index) that carry it.
    let mut carried: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for alias in &aliases {
        let prefix = format!("transforms.{alias}.");
        let keys = ctx.open_keys(&prefix);
        let leave_out = |ctx: &mut Ctx, keys: &[String], why: &str| {
            for key in keys {
                ctx.skip(key, why);
            }
        };
        let type_key = format!("{prefix}type");
        let Some(class) = ctx.value(&type_key) else {
            leave_out(ctx, &keys, &format!("the step `{alias}` has no {type_key}, so Kafka Connect refused it; it is left out"));
            continue;
        };
        let step_options: BTreeMap<String, String> = keys
            .iter()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter(|o| !["type", "predicate", "negate"].contains(o))
            .map(|o| (o.to_owned(), ctx.raw(&format!("{prefix}{o}")).unwrap_or_default()))
            .collect();
        let step = match smt::convert(&class, &step_options) {
            Ok(step) => step,
            Err(why) => {
                ctx.skip(&type_key, why);
                leave_out(ctx, &keys, &format!("belongs to the step `{alias}`, which is left out"));
                ctx.note(format!("the step `{alias}` ({class}) is left out: check that the chain does what you need without it"));
                continue;
            }
        };
        let predicate_key = format!("{prefix}predicate");
        let negate_key = format!("{prefix}negate");
        let negate = ctx.value(&negate_key).as_deref().and_then(boolean).unwrap_or(false);
        let conditions = match ctx.value(&predicate_key) {
            None => Ok(None),
            Some(p) if !declared_predicates.contains(&p) => Err(format!("the predicate `{p}` is not listed in `predicates`, so Kafka Connect refused the step")),
            Some(p) => predicate(ctx, &p).map(|c| Some((p, c))),
        };
        let predicate = conditions.and_then(|c| combine(c.as_ref().map(|(_, m)| m), negate, step.json_path.as_ref()).map(|m| (c, m)));
        let (used_predicate, predicate) = match predicate {
            Ok((c, p)) => (c.map(|(alias, _)| alias), p),
            Err(why) => {
                let key = if ctx.has(&predicate_key) { predicate_key.clone() } else { type_key.clone() };
                ctx.skip(&key, format!("{why}; the step `{alias}` is left out, since running it on every record would change what it does"));
                leave_out(ctx, &keys, &format!("belongs to the step `{alias}`, which is left out"));
                ctx.note(format!("the step `{alias}` ({class}) is left out: its predicate cannot be carried over"));
                continue;
            }
        };
        let i = steps.len();
        ctx.map(&type_key, format!("transforms[{i}].plugin ({})", step.plugin));
        for (option, to) in &step.used {
            let to = if to.starts_with('—') { to.clone() } else { format!("transforms[{i}].config.{to}") };
            ctx.map(&format!("{prefix}{option}"), to);
        }
        for (option, why) in &step.skipped {
            ctx.skip(&format!("{prefix}{option}"), why.clone());
        }
        if let Some(p) = &used_predicate {
            ctx.map(&predicate_key, format!("transforms[{i}].predicate"));
            carried.entry(p.clone()).or_default().push(i);
        }
        if used_predicate.is_some() || step.json_path.is_some() {
            ctx.map(&negate_key, format!("transforms[{i}].predicate.negate"));
        } else {
            ctx.skip(&negate_key, "has no effect without a predicate");
        }
        for note in &step.notes {
            ctx.note(format!("step `{alias}` ({}): {note}", step.plugin));
        }
        route(ctx, flow, alias, step.plugin, &step.route, topics, &mut routes);
        let mut out = Map::new();
        out.insert("plugin".into(), json!(step.plugin));
        out.insert("config".into(), Value::Object(step.config));
        if let Some(p) = predicate {
            out.insert("predicate".into(), Value::Object(p));
        }
        steps.push(Value::Object(out));
    }
    predicate_keys(ctx, &declared_predicates, &carried);
    for key in ctx.open_keys("transforms.") {
        let alias = key["transforms.".len()..].split('.').next().unwrap_or_default().to_owned();
        ctx.skip(&key, format!("the step `{alias}` is not listed in `transforms`, so Kafka Connect did not run it either"));
    }
    Chain { steps, routes }
}

/// A predicate's conditions in Turnpike's keys, or why it has none.
fn predicate(ctx: &mut Ctx, alias: &str) -> Result<Map<String, Value>, String> {
    let prefix = format!("predicates.{alias}.");
    let class = ctx.value(&format!("{prefix}type")).ok_or_else(|| format!("the predicate `{alias}` has no {prefix}type"))?;
    let name = class.strip_prefix(PREDICATES).unwrap_or(&class);
    let mut conditions = Map::new();
    match name {
        "TopicNameMatches" => {
            let pattern = ctx.value(&format!("{prefix}pattern")).ok_or_else(|| format!("the predicate `{alias}` (TopicNameMatches) has no pattern"))?;
            if let Some(feature) = java_only_regex(&pattern) {
                ctx.note(format!("predicate `{alias}`: its pattern uses {feature}, which Java has and Turnpike's regular expressions do not: rewrite it, or the connector is refused"));
            }
            conditions.insert("topic_matches".into(), json!(pattern));
        }
        "HasHeaderKey" => {
            let header = ctx.value(&format!("{prefix}name")).ok_or_else(|| format!("the predicate `{alias}` (HasHeaderKey) has no name"))?;
            conditions.insert("has_header".into(), json!(header));
        }
        "RecordIsTombstone" => {
            conditions.insert("tombstone".into(), json!(true));
        }
        _ => return Err(format!("the predicate `{alias}` is {class}, which Turnpike has no condition for")),
    }
    Ok(conditions)
}

/// The step's `predicate:`: its Kafka Connect predicate's conditions with `negate`, and
/// Confluent Filter's condition. Turnpike's predicate is one conjunction, negated or not, so
/// a Filter's condition joins a predicate only when neither is negated.
fn combine(conditions: Option<&Map<String, Value>>, negate: bool, json_path: Option<&(String, bool)>) -> Result<Option<Map<String, Value>>, String> {
    let mut out = conditions.cloned().unwrap_or_default();
    let negate = match (conditions.is_some(), json_path) {
        (false, None) => return Ok(None),
        (true, None) => negate,
        (false, Some((path, include))) => {
            out.insert("json_path".into(), json!(path));
            *include
        }
        (true, Some((path, false))) if !negate => {
            out.insert("json_path".into(), json!(path));
            false
        }
        (true, Some(_)) => {
            return Err("a Filter with filter.type include, or under a negated predicate, cannot be joined with the step's predicate into one Turnpike predicate (all conditions, then negate)".into());
        }
    };
    if negate {
        out.insert("negate".into(), json!(true));
    }
    Ok(Some(out))
}

/// `predicates` and `predicates.<alias>.*`: mapped where a step carries them.
fn predicate_keys(ctx: &mut Ctx, declared: &[String], carried: &BTreeMap<String, Vec<usize>>) {
    ctx.map("predicates", "— each step's `predicate`");
    for alias in declared {
        let prefix = format!("predicates.{alias}.");
        for key in ctx.open_keys(&prefix) {
            match carried.get(alias) {
                Some(steps) => {
                    let to = steps.iter().map(|i| format!("transforms[{i}].predicate")).collect::<Vec<_>>().join(", ");
                    ctx.map(&key, to);
                }
                None => ctx.skip(&key, format!("no step that was carried over uses the predicate `{alias}`")),
            }
        }
    }
    for key in ctx.open_keys("predicates.") {
        let alias = key["predicates.".len()..].split('.').next().unwrap_or_default().to_owned();
        ctx.skip(&key, format!("the predicate `{alias}` is not listed in `predicates`, so Kafka Connect did not use it either"));
    }
}

/// Notes and `routes` for a step that changes the topic.
fn route(ctx: &mut Ctx, flow: Flow, alias: &str, plugin: &str, route: &Route, topics: &[String], routes: &mut Vec<String>) {
    if *route == Route::None {
        return;
    }
    if flow == Flow::Sink {
        ctx.note(format!("step `{alias}` ({plugin}) renames the topic the sink sees, as in Kafka Connect; a sink connector needs no `routes` for it"));
        return;
    }
    let mut add = |ctx: &mut Ctx, topic: String| {
        if is_topic(&topic) && !routes.contains(&topic) {
            ctx.note(format!("step `{alias}` ({plugin}) always routes to {topic:?}: it is listed in `routes`"));
            routes.push(topic);
        }
    };
    match route {
        Route::Topic(topic) if is_topic(topic) => add(ctx, topic.clone()),
        Route::Format(format) if !format.contains("${timestamp}") && !topics.is_empty() => {
            for topic in topics {
                add(ctx, format.replace("${topic}", topic));
            }
        }
        // The topics are known (listed, or a JDBC source's tables): route each as the step
        // would, so `routes` lists exactly where records can go.
        Route::Pattern { regex, replacement } if !topics.is_empty() => match routed_topics(regex, replacement, topics) {
            Some(found) => found.into_iter().for_each(|topic| add(ctx, topic)),
            None => ctx.note(format!(
                "step `{alias}` ({plugin}): its regex could not be applied here, so the topics it produces are unknown: list them under `routes` (a record routed to a topic not listed there fails under the error policy), and create them"
            )),
        },
        _ => ctx.note(format!(
            "step `{alias}` ({plugin}) routes records to topics made from each record, which cannot be known here: list every topic it can produce under `routes` \
(a record routed to a topic not listed there fails under the error policy), and create them"
        )),
    }
}

/// What a RegexRouter makes of each of `topics` (those its regex matches whole), or `None`
/// when the regex is not one the `regex` crate reads (Java-only syntax).
fn routed_topics(regex: &str, replacement: &str, topics: &[String]) -> Option<Vec<String>> {
    let whole = regex::Regex::new(&format!("^(?:{regex})$")).ok()?;
    let mut out = Vec::new();
    for topic in topics {
        if let Some(groups) = whole.captures(topic) {
            out.push(expand_java(replacement, &groups)?);
        }
    }
    Some(out)
}

/// Java's `Matcher.replaceFirst` replacement: `$n` (as many digits as name a group), `${name}`,
/// `\x` for the character x. `None` for a reference to a group the regex lacks.
fn expand_java(replacement: &str, groups: &regex::Captures<'_>) -> Option<String> {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push_str(groups.name(&name)?.as_str());
            }
            '$' => {
                let mut n = chars.next()?.to_digit(10)? as usize;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    if n * 10 + (d as usize) >= groups.len() {
                        break;
                    }
                    n = n * 10 + d as usize;
                    chars.next();
                }
                out.push_str(groups.get(n).map_or("", |m| m.as_str()));
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod route_tests {
    use super::routed_topics;

    #[test]
    fn a_regex_router_on_known_topics_lists_where_each_goes() {
        let topics = ["shop.orders".to_owned(), "shop.order_lines".to_owned(), "other".to_owned()];
        assert_eq!(routed_topics(r"shop\.(.*)", "shop-cdc.$1", &topics), Some(vec!["shop-cdc.orders".to_owned(), "shop-cdc.order_lines".to_owned()]));
        assert_eq!(routed_topics(r"(?<db>shop)\.(.*)", "${db}_$2x", &topics[..1]), Some(vec!["shop_ordersx".to_owned()]));
        assert_eq!(routed_topics(r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10-$1$11", &["abcdefghij".to_owned()]), Some(vec!["j-aa1".to_owned()]));
        assert_eq!(routed_topics(r"(?<=x)y", "z", &topics), None, "look-behind is Java-only");
    }
}
