//! Kafka Connect connector configs → Turnpike connector definitions.
//!
//! [`import`] reads the config as Kafka Connect takes it — the JSON of its REST API
//! (`{"name": …, "config": {…}}`, or the flat map of `PUT /connectors/NAME/config`) or a
//! `.properties` file — and writes the Turnpike connector that does the same: Confluent's S3
//! sink as `s3-sink` with a `storage:` grant, Confluent's JDBC source as `sql-source` with a
//! `database:` grant, the sixteen Apache Kafka SMTs (and Confluent's Filter) as Turnpike's
//! built-in transforms with `predicate:`, and the error policy.
//!
//! Nothing is dropped silently: every option of the input is either in [`Imported::mapped`]
//! (with where it went) or in [`Imported::unmapped`] (with why), and the YAML's opening
//! comment lists the unmapped ones and the notes. Credentials are never copied: the connector
//! holds `${secret:NAME}` (or Kafka Connect's own `${env:NAME}`) references, and a note says
//! which secrets to store. Pure: no I/O, so the CLI, the API or a test can use it alike.

mod connect;
mod ctx;
mod input;
mod jdbc;
mod properties;
mod render;
mod s3;
mod transforms;

#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::{json, Map, Value};

use ctx::{Ctx, Flow};
pub use input::InputFormat;

/// How to read a config. The defaults suit a file given as it is.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How to read the text. Default: JSON if it starts with `{`, else `.properties`.
    pub format: Option<InputFormat>,
    /// The connector's name, for a config that has none (the body of
    /// `PUT /connectors/NAME/config` may leave it out) or to give it another.
    pub name: Option<String>,
    /// Where the text came from (a file name), for the YAML's opening comment.
    pub origin: Option<String>,
}

/// A converted connector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    /// The connector definition: the object `PUT /v1/connectors/NAME` takes.
    pub connector: Value,
    /// `connector` as YAML for `turnpike connector apply --file`, after a comment block
    /// naming the input's kind, every option not carried over, and the notes.
    pub yaml: String,
    /// How the input was read.
    pub format: InputFormat,
    /// The options carried over, in input order.
    pub mapped: Vec<Mapped>,
    /// The options not carried over, in input order, each with why.
    pub unmapped: Vec<Unmapped>,
    /// What the user must do or know: secrets to store, topics to list in `routes`, defaults
    /// that differ.
    pub notes: Vec<String>,
}

/// A Kafka Connect option carried over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mapped {
    /// The option as written (`transforms.drop.exclude`).
    pub option: String,
    /// Where it went in the connector (`transforms[0].config.exclude`), or, after `— `, why
    /// nothing needs to be written for it.
    pub to: String,
}

/// A Kafka Connect option not carried over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmapped {
    /// The option as written; a parameter inside the JDBC URL is `connection.url?NAME`.
    pub option: String,
    /// Why, in words a user understands, never with a credential in it.
    pub reason: String,
}

/// Why a config cannot be read at all. (A config that can be read is always imported, with
/// what cannot be carried over listed in [`Imported::unmapped`].)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The text starts with `{` but is not JSON.
    #[error("the text starts with `{{` but is not valid JSON: {message} at line {line}, column {column}; fix the JSON, or give the connector as a .properties file")]
    Json {
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The JSON (or its `config`) is not an object.
    #[error(
        "{what} is {found}, not an object: give the body of Kafka Connect's POST /connectors ({{\"name\": …, \"config\": {{…}}}}) or of PUT /connectors/NAME/config ({{\"connector.class\": …, …}})"
    )]
    NotAnObject {
        /// `the JSON` or `` `config` ``.
        what: &'static str,
        /// What it is instead.
        found: &'static str,
    },
    /// A config value is a JSON object.
    #[error("`{key}` holds a JSON object; Kafka Connect config values are text: write it as a string")]
    NestedValue {
        /// The option.
        key: String,
    },
    /// A `.properties` line cannot be read.
    #[error("line {line}: {message}")]
    Properties {
        /// 1-based.
        line: usize,
        /// What is wrong and how to write it.
        message: String,
    },
    /// No options at all.
    #[error("the config is empty: give a Kafka Connect connector config (the JSON of POST /connectors, or a .properties file)")]
    Empty,
    /// Neither a connector class nor transforms.
    #[error("the config has neither `connector.class` nor `transforms`, so there is nothing to import: give a Kafka Connect connector config (the JSON of POST /connectors, or a .properties file)")]
    NothingToImport,
    /// No name in the config nor in [`Options::name`].
    #[error("the config has no `name`: add `name=<connector name>` to it (or give the importer a name)")]
    NoName,
}

/// [`import_with`] with the default [`Options`].
pub fn import(text: &str) -> Result<Imported, ImportError> {
    import_with(text, &Options::default())
}

/// Converts the Kafka Connect config `text`.
pub fn import_with(text: &str, options: &Options) -> Result<Imported, ImportError> {
    let format = options.format.unwrap_or_else(|| InputFormat::detect(text));
    let input = input::read(text, format)?;
    let given = |key: &str| input.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.trim().to_owned()).filter(|v| !v.is_empty());
    if given("connector.class").is_none() && given("transforms").is_none() {
        return Err(ImportError::NothingToImport);
    }
    let config_name = given("name");
    let raw_name = options.name.clone().or_else(|| config_name.clone()).ok_or(ImportError::NoName)?;
    let name = connector_name(&raw_name);
    let mut ctx = Ctx::new(input.entries, &name);
    ctx.notes.extend(input.notes);
    if let (Some(option), Some(config)) = (&options.name, &config_name) {
        if option != config {
            ctx.note(format!("the connector is named {option:?} as asked, not {config:?} as the config says"));
        }
    }
    if name != raw_name {
        ctx.note(format!("the name {raw_name:?} became {name:?}: connector names are 1-128 of a-z A-Z 0-9 . _ -, not starting with ."));
    }
    ctx.map("name", "name");
    ctx.withhold_provider_references(&["aws.access.key.id", "aws.secret.access.key", "connection.password"]);

    let class = ctx.value("connector.class");
    let kind = match class.as_deref() {
        Some(s3::CLASS) => Kind::S3,
        Some(jdbc::CLASS) => Kind::Jdbc,
        Some(other) => Kind::Other(other.to_owned()),
        None => Kind::None,
    };
    let flow = match &kind {
        Kind::S3 => Flow::Sink,
        Kind::Jdbc => Flow::Source,
        Kind::Other(c) if c.ends_with("SinkConnector") || c.contains(".sink.") => Flow::Sink,
        Kind::Other(c) if c.ends_with("SourceConnector") || c.contains(".source.") => Flow::Source,
        _ => Flow::Unknown,
    };
    match &kind {
        Kind::S3 => ctx.map("connector.class", "sink.plugin (s3-sink)"),
        Kind::Jdbc => ctx.map("connector.class", "source.plugin (sql-source)"),
        Kind::Other(class) => {
            let hint = match class.as_str() {
                "io.confluent.connect.http.HttpSinkConnector" => " (the http-sink plugin may do what it did)",
                "io.confluent.kafka.connect.datagen.DatagenConnector" => " (the datagen plugin may do what it did)",
                _ => "",
            };
            ctx.skip("connector.class", format!("{class}: Turnpike has no plugin converted from it{hint}; the connector is written with its topics, transforms and error policy only"));
            ctx.note(format!(
                "choose the connector's source or sink plugin by hand{hint}: Kafka Connect ran {class}, which this importer does not convert, and its own options are listed as not carried over"
            ));
        }
        Kind::None => ctx.note("the config has no connector.class: it is written as a transform connector (topics → transforms → output_topic); set output_topic before applying"),
    }

    let topics = connect::topics(&mut ctx, flow);
    // A JDBC source's records carry the topics of its tables into the chain.
    let source = matches!(kind, Kind::Jdbc).then(|| jdbc::source(&mut ctx));
    let mut chain_topics = topics.clone();
    if let Some(source) = &source {
        chain_topics.extend(source.output_topic.iter().chain(&source.routes).cloned());
    }
    let chain = transforms::chain(&mut ctx, flow, &chain_topics);
    let worker = connect::worker(&mut ctx, flow);
    let errors = connect::errors(&mut ctx, flow, &topics);

    let mut connector = Map::new();
    connector.insert("name".into(), json!(name));
    if !topics.is_empty() {
        connector.insert("topics".into(), json!(topics));
    }
    let mut routes = chain.routes;
    match &kind {
        Kind::S3 => {
            let sink = s3::sink(&mut ctx);
            connector.insert("sink".into(), sink.step);
            if let Some(storage) = sink.storage {
                connector.insert("storage".into(), storage);
            }
        }
        Kind::Jdbc => {
            let source = source.expect("made above for a JDBC source");
            if let Some(topic) = &source.output_topic {
                connector.insert("output_topic".into(), json!(topic));
            }
            connector.insert("source".into(), source.step);
            routes.extend(source.routes);
            if let Some(database) = source.database {
                connector.insert("database".into(), database);
            }
        }
        Kind::Other(_) | Kind::None => {}
    }
    if !chain.steps.is_empty() {
        connector.insert("transforms".into(), Value::Array(chain.steps));
    }
    if flow != Flow::Sink {
        let output = connector.get("output_topic").and_then(Value::as_str).map(str::to_owned);
        let dlq = errors.get("dead_letter_topic").and_then(Value::as_str).map(str::to_owned);
        let mut kept: Vec<String> = Vec::new();
        for r in routes {
            if Some(&r) != output.as_ref() && Some(&r) != dlq.as_ref() && !topics.contains(&r) && !kept.contains(&r) {
                kept.push(r);
            }
        }
        if !kept.is_empty() {
            connector.insert("routes".into(), json!(kept));
        }
    }
    if worker.start_from == Some("latest") {
        connector.insert("start_from".into(), json!("latest"));
    }
    if let Some(tasks) = worker.tasks {
        connector.insert("tasks".into(), json!(tasks));
    }
    if !errors.is_empty() {
        connector.insert("errors".into(), Value::Object(errors));
    }

    ctx.finish(|key| match &kind {
        Kind::S3 => s3::unknown(key),
        Kind::Jdbc => jdbc::unknown(key),
        Kind::Other(class) => format!("an option of {class}; it belongs to the plugin you choose for it"),
        Kind::None => "not a Kafka Connect option this importer knows".to_owned(),
    });
    let connector = Value::Object(connector);
    let header = render::Header { format, origin: options.origin.as_deref(), class: class.as_deref(), unmapped: &ctx.unmapped, notes: &ctx.notes };
    let yaml = render::yaml(&connector, &header);
    Ok(Imported { connector, yaml, format, mapped: ctx.mapped, unmapped: ctx.unmapped, notes: ctx.notes })
}

/// Which connector the config runs.
enum Kind {
    S3,
    Jdbc,
    Other(String),
    None,
}

/// `raw` as a connector name: characters Turnpike refuses become `-`, no leading `.`, at most
/// 128 characters.
fn connector_name(raw: &str) -> String {
    let mapped: String = raw.trim().chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    let name: String = mapped.trim_start_matches('.').chars().take(128).collect();
    if name.is_empty() {
        "imported".to_owned()
    } else {
        name
    }
}
