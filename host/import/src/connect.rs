//! Kafka Connect's own options, the ones every connector has: topics, the error policy,
//! converters, client overrides, tasks.

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, is_topic, list, Ctx, Flow};

/// `topics` → `topics`.
pub(crate) fn topics(ctx: &mut Ctx, flow: Flow) -> Vec<String> {
    if flow == Flow::Source {
        ctx.skip("topics", "a source connector reads no topics; Kafka Connect ignored it too");
        ctx.skip("topics.regex", "a source connector reads no topics; Kafka Connect ignored it too");
        return Vec::new();
    }
    let mut topics: Vec<String> = Vec::new();
    if let Some(text) = ctx.value("topics") {
        let given = list(&text);
        if let Some(bad) = given.iter().find(|t| !is_topic(t)) {
            ctx.skip("topics", format!("{bad:?} is not a topic name (1-249 of a-z A-Z 0-9 . _ -): write the list by hand"));
        } else {
            for t in given {
                if !topics.contains(&t) {
                    topics.push(t);
                }
            }
            ctx.map("topics", "topics");
        }
    }
    if ctx.value("topics.regex").is_some() {
        ctx.skip("topics.regex", "Turnpike connectors name their topics; a pattern is not supported: list the topics it matches in `topics`");
        if topics.is_empty() {
            ctx.note("the connector reads `topics.regex` in Kafka Connect: list the topics it matches under `topics` before applying (a connector without topics is refused)");
        }
    }
    topics
}

/// `errors.*` → `errors:` (only what differs from Turnpike's defaults is written).
pub(crate) fn errors(ctx: &mut Ctx, flow: Flow, topics: &[String]) -> Map<String, Value> {
    let mut errors = Map::new();
    let tolerance = ctx.value("errors.tolerance").map(|t| t.to_ascii_lowercase());
    let all = match tolerance.as_deref() {
        Some("all") => {
            errors.insert("tolerance".into(), json!("all"));
            ctx.map("errors.tolerance", "errors.tolerance");
            true
        }
        Some("none") => {
            ctx.map("errors.tolerance", "errors.tolerance (none is Turnpike's default too)");
            false
        }
        Some(other) => {
            ctx.skip("errors.tolerance", format!("{other:?} is not none or all; Turnpike's default, none, applies"));
            false
        }
        None => false,
    };
    const DLQ: &str = "errors.deadletterqueue.topic.name";
    if let Some(dlq) = ctx.value(DLQ) {
        if flow == Flow::Source {
            ctx.skip(DLQ, "Kafka Connect uses a dead-letter queue for sink connectors only, so it had no effect here (Turnpike has one for sources too: set `errors.dead_letter_topic` to use it)");
        } else if !all {
            ctx.skip(DLQ, "Turnpike writes dead letters only with `errors.tolerance: all` (with none the first failure stops the connector, as it did in Kafka Connect)");
        } else if !is_topic(&dlq) {
            ctx.skip(DLQ, format!("{dlq:?} is not a topic name"));
        } else if topics.contains(&dlq) {
            ctx.skip(DLQ, format!("{dlq:?} is also an input topic; Turnpike needs a dead-letter topic of its own"));
        } else {
            errors.insert("dead_letter_topic".into(), json!(dlq));
            ctx.map(DLQ, "errors.dead_letter_topic");
            ctx.note(format!("Turnpike does not create topics: create the dead-letter topic {dlq:?} before starting the connector"));
        }
    }
    let dlq_written = errors.contains_key("dead_letter_topic");
    const HEADERS: &str = "errors.deadletterqueue.context.headers.enable";
    match ctx.value(HEADERS).as_deref().and_then(boolean) {
        Some(true) if dlq_written => {
            ctx.map(HEADERS, "— Turnpike always adds context headers to dead letters (turnpike.error.topic, .partition, .offset, .stage, .plugin, .class, .message, …; not __connect.errors.*)")
        }
        Some(false) if dlq_written => ctx.skip(HEADERS, "Turnpike always adds its turnpike.error.* context headers to dead letters; they cannot be turned off"),
        Some(_) => ctx.skip(HEADERS, "only used with a dead-letter topic, and none is carried over"),
        None => ctx.skip(HEADERS, "not true or false"),
    }
    ctx.skip("errors.deadletterqueue.topic.replication.factor", "Turnpike does not create the dead-letter topic: create it with the replication you want");
    const TIMEOUT: &str = "errors.retry.timeout";
    if let Some(text) = ctx.value(TIMEOUT) {
        match int(&text) {
            Some(-1) => {
                errors.insert("retry_timeout_ms".into(), json!(86_400_000));
                ctx.map(TIMEOUT, "errors.retry_timeout_ms");
                ctx.note("errors.retry.timeout -1 (retry forever) became errors.retry_timeout_ms 86400000, one day, Turnpike's longest");
            }
            Some(ms) if (0..=86_400_000).contains(&ms) => {
                errors.insert("retry_timeout_ms".into(), json!(ms));
                ctx.map(TIMEOUT, "errors.retry_timeout_ms");
            }
            Some(ms) if ms > 86_400_000 => {
                errors.insert("retry_timeout_ms".into(), json!(86_400_000));
                ctx.map(TIMEOUT, "errors.retry_timeout_ms");
                ctx.note(format!("errors.retry.timeout {ms} is above Turnpike's longest retry time; errors.retry_timeout_ms is 86400000 (one day)"));
            }
            _ => ctx.skip(TIMEOUT, "not a number of milliseconds (or -1)"),
        }
    }
    const DELAY: &str = "errors.retry.delay.max.ms";
    if let Some(text) = ctx.value(DELAY) {
        match int(&text) {
            Some(ms) if (1..=3_600_000).contains(&ms) => {
                errors.insert("retry_max_delay_ms".into(), json!(ms));
                ctx.map(DELAY, "errors.retry_max_delay_ms");
            }
            Some(ms) if ms > 3_600_000 => {
                errors.insert("retry_max_delay_ms".into(), json!(3_600_000));
                ctx.map(DELAY, "errors.retry_max_delay_ms");
                ctx.note(format!("errors.retry.delay.max.ms {ms} is above Turnpike's longest pause; errors.retry_max_delay_ms is 3600000 (one hour)"));
            }
            _ => ctx.skip(DELAY, "not a number of milliseconds from 1 to 3600000"),
        }
    }
    match ctx.value("errors.log.enable").as_deref().and_then(boolean) {
        Some(true) => ctx.map("errors.log.enable", "— Turnpike always logs failed records (connector, stage, plugin, topic, partition, offset and the error)"),
        _ => ctx.skip("errors.log.enable", "Turnpike always logs failed records (the first ones of each batch); it cannot be turned off"),
    }
    match ctx.value("errors.log.include.messages").as_deref().and_then(boolean) {
        Some(false) => ctx.map("errors.log.include.messages", "— Turnpike never logs record contents"),
        _ => ctx.skip(
            "errors.log.include.messages",
            "Turnpike never logs a record's key, value or headers (they may hold personal data); read failed records from the dead-letter topic, or the one that stopped the connector from its status",
        ),
    }
    errors
}

/// What the worker-level options set on the connector.
pub(crate) struct Worker {
    /// The consumer group's start (`start_from`), when an override sets it.
    pub(crate) start_from: Option<&'static str>,
    /// `tasks`, when `tasks.max` asks for more than one (sinks and transforms only).
    pub(crate) tasks: Option<u64>,
}

/// Turnpike's most tasks per connector (`tasks` is 1 to 64).
const MAX_TASKS: i64 = 64;

/// `tasks.max` as `tasks`: the same pipelines sharing the partitions, for connectors that read
/// topics. A source runs one task.
fn tasks(ctx: &mut Ctx, flow: Flow) -> Option<u64> {
    if flow == Flow::Source {
        ctx.skip("tasks.max", "a Turnpike source connector runs one task (its plugin keeps one position); to read tables in parallel, split them over several connectors with disjoint table.whitelist");
        return None;
    }
    match ctx.value("tasks.max").as_deref().and_then(int) {
        Some(n @ 1..=MAX_TASKS) => {
            ctx.map("tasks.max", "tasks");
            u64::try_from(n).ok().filter(|n| *n > 1)
        }
        Some(n) if n > MAX_TASKS => {
            ctx.map("tasks.max", format!("tasks (at most {MAX_TASKS}; {n} asked)"));
            Some(MAX_TASKS as u64)
        }
        _ => {
            ctx.skip("tasks.max", format!("not a whole number from 1; Turnpike's `tasks` is 1 to {MAX_TASKS}"));
            None
        }
    }
}

/// Converters, tasks, client overrides and the other worker-level options.
pub(crate) fn worker(ctx: &mut Ctx, flow: Flow) -> Worker {
    let tasks = tasks(ctx, flow);
    converter_notes(ctx, flow);
    for prefix in ["key.converter", "value.converter"] {
        for key in ctx.open_keys(prefix) {
            ctx.skip(&key, "Turnpike passes bytes and reads JSON itself; no converter is needed");
        }
    }
    for key in ctx.open_keys("header.converter") {
        ctx.skip(&key, "Turnpike passes headers as bytes; no converter is needed");
    }
    let mut start_from = None;
    match ctx.value("consumer.override.auto.offset.reset").map(|v| v.to_ascii_lowercase()).as_deref() {
        Some(reset @ ("earliest" | "latest")) if flow != Flow::Source => {
            start_from = Some(if reset == "earliest" { "earliest" } else { "latest" });
            ctx.map("consumer.override.auto.offset.reset", "start_from");
        }
        _ => ctx.skip("consumer.override.auto.offset.reset", "only earliest or latest are carried over (to `start_from`), and only for connectors that read topics"),
    }
    for key in ctx.open_keys("consumer.override.") {
        let reason = match key.as_str() {
            "consumer.override.group.id" => "Turnpike names each connector's consumer group `turnpike-<name>` (or `group_id`, which must start with `turnpike-`)",
            "consumer.override.max.poll.records" => "Turnpike's consumers use the host's Kafka settings; the connector's `batch.max_records` sets how many records a batch holds",
            _ => "Turnpike's Kafka clients use the host's settings (`kafka:` in the host config); a connector cannot override them",
        };
        ctx.skip(&key, reason);
    }
    for prefix in ["producer.override.", "admin.override."] {
        for key in ctx.open_keys(prefix) {
            ctx.skip(&key, "Turnpike's Kafka clients use the host's settings (`kafka:` in the host config); a connector cannot override them");
        }
    }
    for key in ctx.open_keys("topic.creation.") {
        ctx.skip(&key, "Turnpike does not create topics: create the topics the connector writes before starting it");
    }
    for key in ctx.open_keys("transaction.boundary").into_iter().chain(["exactly.once.support".to_owned()]) {
        ctx.skip(&key, "Turnpike sources deliver at least once (a position is stored once Kafka has the records); there is no exactly-once mode");
    }
    ctx.skip("offsets.storage.topic", "Turnpike keeps source positions in the host's own topic; a connector does not choose it");
    ctx.skip("config.action.reload", "Turnpike resolves ${secret:…} references each time a connector starts; there is nothing to reload");
    match flow {
        Flow::Sink => ctx.note(
            "offsets are not carried over: Kafka Connect's consumer group was connect-<name>, Turnpike's is turnpike-<name> and starts from `start_from` (earliest unless set); \
to go on where Kafka Connect stopped, copy the group's committed offsets to turnpike-<name> (kafka-consumer-groups --reset-offsets) before starting",
        ),
        Flow::Source => ctx.note("source positions are not carried over: the Turnpike connector reads from the beginning (or timestamp.initial), so rows Kafka Connect already sent are sent again"),
        Flow::Unknown => {}
    }
    Worker { start_from, tasks }
}

/// Warnings about what the topics hold, from the converters Kafka Connect used.
fn converter_notes(ctx: &mut Ctx, flow: Flow) {
    let Some(class) = ctx.value("value.converter") else { return };
    let (reads, writes) = match flow {
        Flow::Sink => ("the topics' values were written", "Turnpike's transforms and sink see them as they are"),
        _ => ("consumers of the topics expect values", "Turnpike writes plain JSON"),
    };
    if class == "org.apache.kafka.connect.json.JsonConverter" {
        let schemas = ctx.value("value.converter.schemas.enable").as_deref().and_then(boolean).unwrap_or(true);
        if schemas {
            ctx.note(format!("value.converter was JsonConverter with schemas.enable true (its default): {reads} as {{\"schema\": …, \"payload\": …}} envelopes, and {writes}, without the envelope"));
        }
    } else if class.starts_with("io.confluent.connect.avro") || class.starts_with("io.confluent.connect.protobuf") || class.starts_with("io.confluent.connect.json.JsonSchema") {
        ctx.note(format!("value.converter was {class}: {reads} in Schema Registry's binary form, and {writes}; field transforms and JSON formats need JSON values"));
    }
}
