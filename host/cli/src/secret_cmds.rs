//! `turnpike secret …`: the host's secrets store, through its admin API. A value is read from
//! standard input or a file, never from an argument: arguments end up in the shell's history
//! and in `ps` for every user of the machine to read. Nothing here prints a value.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::admin_cmds::ApiArgs;
use crate::client::{path, Api};
use crate::output::{self, escape, print, Format};

#[derive(Subcommand)]
pub enum SecretCmd {
    /// Store a secret (create or replace), for connectors to reference as `${secret:NAME}`.
    /// Running connectors get the new value at their next start.
    Put {
        /// The name: 1 to 63 of a-z 0-9 . _ -, starting with a letter or digit.
        name: String,
        #[command(flatten)]
        from: ValueFrom,
    },
    /// List secrets: names, when each was stored, which connectors use it. Never values.
    #[command(alias = "ls")]
    List,
    /// Delete a secret. Connectors that reference it keep running, and fail at their next
    /// start until it is stored again.
    #[command(alias = "rm")]
    Delete {
        /// The name.
        name: String,
    },
}

/// Where `put` reads the value from: exactly one of the two.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct ValueFrom {
    /// Read the value from standard input (`… | turnpike secret put NAME --value-stdin`); one
    /// trailing newline is dropped.
    #[arg(long)]
    value_stdin: bool,
    /// Read the value from a file; one trailing newline is dropped.
    #[arg(long, value_name = "FILE")]
    from_file: Option<PathBuf>,
}

pub fn secret(cmd: SecretCmd, args: &ApiArgs) -> Result<()> {
    let api = Api::new(&args.api);
    match cmd {
        SecretCmd::Put { name, from } => {
            let value = read_value(&from)?;
            api.put(&path(&["v1", "secrets", &name]), &json!({ "value": value }))?;
            match args.output {
                Format::Json => println!("{}", output::json(&json!({ "name": name, "stored": true }))),
                Format::Table => println!("stored secret {}", escape(&name)),
            }
        }
        SecretCmd::List => {
            let answer = api.get(&path(&["v1", "secrets"]))?;
            let rows = answer["secrets"].as_array().cloned().unwrap_or_default();
            print(args.output, &answer, &rows, &[("NAME", "/name"), ("UPDATED", "/updated_at"), ("USED BY", "/used_by")]);
        }
        SecretCmd::Delete { name } => {
            api.delete(&path(&["v1", "secrets", &name]))?;
            println!("deleted secret {}", escape(&name));
        }
    }
    Ok(())
}

/// The value, from standard input or the file, less one trailing newline (what `echo` and
/// editors add, and what an HTTP header or a password must not end with).
fn read_value(from: &ValueFrom) -> Result<String> {
    let mut value = String::new();
    match (&from.from_file, from.value_stdin) {
        (Some(file), false) => {
            std::fs::File::open(file).and_then(|mut f| f.read_to_string(&mut value)).with_context(|| format!("reading the secret from {}", file.display()))?;
        }
        (None, true) => {
            std::io::stdin().read_to_string(&mut value).context("reading the secret from standard input")?;
        }
        _ => bail!("give the value with one of --value-stdin and --from-file"),
    }
    if value.ends_with('\n') {
        value.pop();
        if value.ends_with('\r') {
            value.pop();
        }
    }
    if value.is_empty() {
        bail!("the secret is empty; give its value on standard input (--value-stdin) or in a file (--from-file)");
    }
    Ok(value)
}
