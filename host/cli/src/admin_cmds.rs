//! `turnpike plugin …` and `turnpike connector …`: the admin API from the shell.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::client::{path, query, Api};
use crate::output::{self, escape, escape_lines, print, Format};

/// Where the API is and how to print.
#[derive(Args)]
pub struct ApiArgs {
    /// The admin API.
    #[arg(long, global = true, env = "TURNPIKE_API", default_value = "http://127.0.0.1:8080")]
    pub(crate) api: String,
    /// `table` for people, `json` for scripts.
    #[arg(long, short, global = true, value_enum, default_value = "table")]
    pub(crate) output: Format,
}

#[derive(Subcommand)]
pub enum PluginCmd {
    /// Create a plugin project that builds and tests as generated, on any machine: the SDK is
    /// copied into it (`vendor/`, or `turnpike/` for Python).
    New {
        /// `rust`, `python` or `js`.
        #[arg(long)]
        lang: String,
        /// `transform`, `source` or `sink`.
        #[arg(long, default_value = "transform")]
        kind: String,
        /// Plugin name (a-z, 0-9, '-'); also the folder created.
        name: String,
        /// Where to create the folder.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
    /// Build the plugin in a folder into `<folder>/<name>.wasm` with its language's toolchain
    /// (cargo, componentize-py, componentize-js; the latter two installed on first use).
    Build {
        /// The plugin folder.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Run a component locally through the real runtime: a transform on the input records, a
    /// source polled once, a sink written to. No host or broker needed.
    Test {
        /// The `.wasm` component.
        file: PathBuf,
        /// Input records, one JSON per line: `{"key": …, "value": …, "headers": {…}}`.
        #[arg(long)]
        input: Option<PathBuf>,
        /// The plugin's config as JSON, or `@FILE` (JSON or YAML). Default `{}`.
        #[arg(long)]
        config: Option<String>,
        /// Records to ask a source for.
        #[arg(long, default_value_t = 10)]
        max: u32,
        /// Grant outgoing HTTP to this host (as in a connector's `http.allow`); repeatable.
        /// Sources and sinks only.
        #[arg(long = "allow-http")]
        allow_http: Vec<String>,
    },
    /// Upload a compiled component.
    Push {
        /// The `.wasm` component.
        file: PathBuf,
        /// Plugin name.
        #[arg(long)]
        name: String,
        /// Version.
        #[arg(long)]
        version: String,
    },
    /// List plugin versions.
    Ls,
    /// Delete a plugin version (refused while a connector uses it).
    Rm {
        /// Plugin name.
        name: String,
        /// Version.
        version: String,
    },
}

#[derive(Subcommand)]
pub enum ConnectorCmd {
    /// Create or update connectors from a YAML file (one connector, or a list).
    Apply {
        /// The YAML file.
        #[arg(short, long)]
        file: PathBuf,
    },
    /// List connectors.
    Ls {
        /// Only connectors in this state (RUNNING, PAUSED, STOPPED, FAILED, …).
        #[arg(long)]
        state: Option<String>,
    },
    /// Show one connector: status and configuration.
    Get { name: String },
    /// Stop consuming; keep plugin instances and Kafka clients.
    Pause { name: String },
    /// Resume a paused connector or start a stopped one.
    Resume { name: String },
    /// Release everything; configuration and offsets stay.
    Stop { name: String },
    /// Restart now with a fresh failure budget.
    Restart {
        name: String,
        /// Only if it failed.
        #[arg(long)]
        only_failed: bool,
    },
    /// Delete a connector.
    Rm { name: String },
    /// Committed offsets and lag per partition.
    Offsets { name: String },
    /// Convert a Kafka Connect connector config (its REST JSON or a .properties file) into a
    /// Turnpike connector YAML: transforms, predicates, error policy, S3 sink and JDBC source
    /// options. Every option that cannot be carried over is listed with the reason. Reads the
    /// file, not the admin API, unless `--check`.
    Import {
        /// The Kafka Connect config.
        file: PathBuf,
        /// Write the YAML here instead of standard output.
        #[arg(long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// The connector's name, for a config without one (or to rename it).
        #[arg(long)]
        name: Option<String>,
        /// Also validate the result on the running host (its plugins, grants and rules).
        #[arg(long)]
        check: bool,
    },
    /// Write connector configs for many tables at once, to review and then `apply --file`.
    /// Reads the database, not the admin API.
    Generate {
        #[command(subcommand)]
        what: Box<crate::generate::GenerateCmd>,
    },
}

const CONNECTOR_COLUMNS: &[(&str, &str)] = &[
    ("NAME", "/name"),
    ("KIND", "/kind"),
    ("STATE", "/state"),
    ("IN", "/records_in"),
    ("OUT", "/records_out"),
    ("FAILED", "/records_failed"),
    ("PLUGINS", "/plugins"),
    ("ERROR", "/error"),
];

pub fn plugin(cmd: PluginCmd, args: &ApiArgs) -> Result<()> {
    let api = Api::new(&args.api);
    match cmd {
        PluginCmd::New { lang, kind, name, dir } => crate::author_cmds::new(&lang, &kind, &name, &dir)?,
        PluginCmd::Build { dir } => crate::author_cmds::build(&dir)?,
        PluginCmd::Test { file, input, config, max, allow_http } => {
            crate::author_cmds::test(crate::author_cmds::TestArgs { file, input, config, max, allow_http, output: args.output })?
        }
        PluginCmd::Push { file, name, version } => {
            let f = std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
            let size = f.metadata().map(|m| m.len()).unwrap_or(0);
            let bar = indicatif::ProgressBar::new(size);
            let answer = api.upload(&upload_path(&name, &version), bar.wrap_read(f));
            bar.finish_and_clear();
            let answer = answer?;
            print(args.output, &answer, std::slice::from_ref(&answer), &[("NAME", "/name"), ("VERSION", "/version"), ("KIND", "/kind"), ("DIGEST", "/digest"), ("SIZE", "/size")]);
        }
        PluginCmd::Ls => {
            let answer = api.get(&path(&["v1", "plugins"]))?;
            let rows = answer["plugins"].as_array().cloned().unwrap_or_default();
            print(args.output, &answer, &rows, &[("NAME", "/name"), ("VERSION", "/version"), ("KIND", "/kind"), ("SIZE", "/size"), ("USED BY", "/used_by"), ("DIGEST", "/digest")]);
        }
        PluginCmd::Rm { name, version } => {
            api.delete(&path(&["v1", "plugins", &name, &version]))?;
            println!("deleted {name}@{version}");
        }
    }
    Ok(())
}

pub fn connector(cmd: ConnectorCmd, args: &ApiArgs) -> Result<()> {
    let api = Api::new(&args.api);
    let show = |answer: Value| print(args.output, &answer, std::slice::from_ref(&answer), CONNECTOR_COLUMNS);
    match cmd {
        ConnectorCmd::Apply { file } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let document: Value = serde_yaml_ng::from_str(&text).with_context(|| format!("{} is not valid YAML", file.display()))?;
            let connectors = match document {
                Value::Array(items) => items,
                one => vec![one],
            };
            let mut applied = Vec::new();
            for c in connectors {
                let name = c["name"].as_str().with_context(|| format!("{}: every connector needs a `name`", file.display()))?.to_owned();
                let answer = api.put(&path(&["v1", "connectors", &name]), &c).with_context(|| format!("connector {name:?}"))?;
                let what = match (answer["changed"].as_bool(), answer["restarted"].as_bool()) {
                    (Some(false), _) => "unchanged",
                    (_, Some(false)) => "updated (plugins swapped, no restart)",
                    _ => "applied",
                };
                if args.output == Format::Table {
                    println!("{}: {what}", escape(&name));
                }
                applied.push(answer);
            }
            if args.output == Format::Json {
                println!("{}", output::json(&Value::Array(applied)));
            }
        }
        ConnectorCmd::Import { file, out, name, check } => crate::import_cmd::import(crate::import_cmd::ImportArgs { file, out, name, check }, &api, args.output)?,
        ConnectorCmd::Ls { state } => {
            let filter = match &state {
                Some(s) => query(&[("state", s.as_str())]),
                None => String::new(),
            };
            let answer = api.get(&format!("{}{filter}", path(&["v1", "connectors"])))?;
            let rows = answer["connectors"].as_array().cloned().unwrap_or_default();
            print(args.output, &answer, &rows, CONNECTOR_COLUMNS);
        }
        ConnectorCmd::Get { name } => {
            let answer = api.get(&path(&["v1", "connectors", &name]))?;
            match args.output {
                Format::Json => println!("{}", output::json(&answer)),
                Format::Table => {
                    show(answer.clone());
                    println!("{}", escape_lines(&serde_yaml_ng::to_string(&answer["config"]).unwrap_or_default()));
                }
            }
        }
        ConnectorCmd::Pause { name } => show(api.post(&path(&["v1", "connectors", &name, "pause"]), &json!({}))?),
        ConnectorCmd::Resume { name } => show(api.post(&path(&["v1", "connectors", &name, "resume"]), &json!({}))?),
        ConnectorCmd::Stop { name } => show(api.post(&path(&["v1", "connectors", &name, "stop"]), &json!({}))?),
        ConnectorCmd::Restart { name, only_failed } => {
            let restart = format!("{}{}", path(&["v1", "connectors", &name, "restart"]), query(&[("only_failed", &only_failed.to_string())]));
            let answer = api.post(&restart, &json!({}))?;
            match args.output {
                Format::Json => println!("{}", output::json(&answer)),
                Format::Table if answer["restarted"] == json!(true) => println!("{name}: restarting"),
                Format::Table => println!("{name}: not failed; left alone"),
            }
        }
        ConnectorCmd::Rm { name } => {
            api.delete(&path(&["v1", "connectors", &name]))?;
            println!("deleted {name}");
        }
        ConnectorCmd::Offsets { name } => {
            let answer = api.get(&path(&["v1", "connectors", &name, "offsets"]))?;
            let rows = answer["partitions"].as_array().cloned().unwrap_or_default();
            print(args.output, &answer, &rows, &[("TOPIC", "/topic"), ("PARTITION", "/partition"), ("COMMITTED", "/committed"), ("LATEST", "/latest"), ("LAG", "/lag")]);
        }
        // main runs it on the async runtime; it never reaches the API.
        ConnectorCmd::Generate { .. } => anyhow::bail!("`connector generate` runs without the admin API"),
    }
    Ok(())
}

/// Where `turnpike plugin push` uploads `name` at `version`.
fn upload_path(name: &str, version: &str) -> String {
    format!("{}{}", path(&["v1", "plugins"]), query(&[("name", name), ("version", version)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_keeps_build_metadata_and_cannot_be_given_extra_parameters() {
        assert_eq!(upload_path("pii-mask", "1.0.0+build.5"), "/v1/plugins?name=pii-mask&version=1.0.0%2Bbuild.5");
        assert_eq!(upload_path("a&version=9", "1 #x"), "/v1/plugins?name=a%26version%3D9&version=1%20%23x");
    }
}
