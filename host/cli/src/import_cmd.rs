//! `turnpike connector import`: a Kafka Connect connector config (the JSON of its REST API or
//! a `.properties` file) written as a Turnpike connector YAML, with every option that could
//! not be carried over listed, and optionally checked against a running host.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use crate::client::{path, Api};
use crate::output::{self, escape, Format};

/// What `connector import` was asked.
pub struct ImportArgs {
    /// The Kafka Connect config.
    pub file: PathBuf,
    /// Where to write the YAML (standard output when `None`).
    pub out: Option<PathBuf>,
    /// A name for a config that has none, or to rename it.
    pub name: Option<String>,
    /// Validate the result on the host (`POST /v1/connectors/NAME/validate`).
    pub check: bool,
}

/// Converts, writes and reports. Fails (exit 1) only when the input cannot be read, or with
/// `--check` when the host refuses the result; unmapped options are reported, not fatal.
pub fn import(args: ImportArgs, api: &Api, format: Format) -> Result<()> {
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let options = turnpike_import::Options { format: None, name: args.name, origin: file_name(&args.file) };
    let imported = turnpike_import::import_with(&text, &options).with_context(|| format!("{} cannot be imported", args.file.display()))?;
    let name = imported.connector["name"].as_str().unwrap_or_default().to_owned();
    let checked = match args.check {
        true => Some(api.post(&path(&["v1", "connectors", &name, "validate"]), &imported.connector).with_context(|| format!("the host refused connector {name:?} as imported"))?),
        false => None,
    };
    match &args.out {
        Some(out) => std::fs::write(out, &imported.yaml).with_context(|| format!("writing {}", out.display()))?,
        None if format == Format::Table => print!("{}", imported.yaml),
        None => {}
    }
    if format == Format::Json {
        let report = json!({ "connector": imported.connector, "unmapped": imported.unmapped, "notes": imported.notes, "mapped": imported.mapped, "valid": checked.is_some().then_some(true) });
        println!("{}", output::json(&report));
        return Ok(());
    }
    // The report goes to standard error, so `import FILE > connector.yaml` keeps only YAML.
    let mapped = imported.mapped.len();
    eprintln!("{}: {mapped} options carried over, {} not", escape(&args.file.display().to_string()), imported.unmapped.len());
    for u in &imported.unmapped {
        eprintln!("  not carried over: {}: {}", escape(&u.option), escape(&u.reason));
    }
    for note in &imported.notes {
        eprintln!("  note: {}", escape(note));
    }
    if let Some(out) = &args.out {
        eprintln!("wrote {}; apply it with `turnpike connector apply --file {}`", escape(&out.display().to_string()), escape(&out.display().to_string()));
    }
    if let Some(answer) = checked {
        let plugins = answer["plugins"].as_array().map(|p| p.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(", ")).unwrap_or_default();
        eprintln!("the host accepts it (plugins: {})", escape(&plugins));
    }
    Ok(())
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}
