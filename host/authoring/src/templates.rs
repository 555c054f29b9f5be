//! `turnpike plugin new`: a transform that builds and tests as generated, in each language.
//! Every template does the same thing — replace one JSON field with `***` — so that the
//! languages can be compared side by side.

use std::path::{Path, PathBuf};

use crate::embedded::write_support;
use crate::error::io;
use crate::{AuthoringError, Lang};

const RECORDS: &str = r#"{"key": "c1", "value": "{\"name\": \"Ada\", \"email\": \"ada@example.com\"}"}
{"key": "c2", "value": "{\"name\": \"Grace\", \"email\": \"grace@example.com\", \"plan\": \"pro\"}"}
{"key": "c3", "value": "not json"}
"#;

/// Creates `<parent>/<name>/` holding a transform plugin in `lang`; returns its path.
pub fn new_plugin(lang: Lang, name: &str, parent: &Path) -> Result<PathBuf, AuthoringError> {
    let valid = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(AuthoringError::BadName(name.to_owned()));
    }
    let dir = parent.join(name);
    if dir.exists() {
        return Err(AuthoringError::Exists(dir));
    }
    let files: Vec<(&str, String)> = match lang {
        Lang::Rust => rust(name),
        Lang::Python => python(name),
        Lang::Js => js(name),
    };
    let connector = format!(
        "# A connector running this plugin: `turnpike connector apply -f connector.yaml` after\n# `turnpike plugin push {name}.wasm --name {name} --version 0.1.0`. The `customers` topic is\n# the one `turnpike dev` fills with JSON records full of e-mail addresses.\nname: {name}\ntopics: [customers]\noutput_topic: customers.{name}\ntransforms:\n  - plugin: {name}@0.1.0\n    config: {{ field: email }}\nerrors:\n  tolerance: all\n"
    );
    let common = [("records.jsonl", RECORDS.to_owned()), ("connector.yaml", connector)];
    for (file, text) in files.iter().chain(common.iter()) {
        let path = dir.join(file);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    write_support(&dir, lang)?;
    Ok(dir)
}

fn readme(name: &str, lang: Lang, test: &str) -> String {
    format!(
        "# {name}\n\nA Turnpike transform in {lang}: replaces one JSON field (`field`, default `email`) with `***`.\n\n\
         ```sh\n{test}\nturnpike plugin build                                   # -> {name}.wasm\n\
         turnpike plugin test {name}.wasm --input records.jsonl   # through the real runtime, no broker\n\
         turnpike plugin push {name}.wasm --name {name} --version 0.1.0   # onto a running host (e.g. `turnpike dev`)\n\
         turnpike connector apply -f connector.yaml              # run it: customers -> customers.{name}\n```\n",
        lang = match lang {
            Lang::Rust => "Rust",
            Lang::Python => "Python",
            Lang::Js => "JavaScript",
        }
    )
}

fn rust(name: &str) -> Vec<(&'static str, String)> {
    let sdk = turnpike_wasm_build::source_root().join("sdk").join("rust");
    let cargo = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
# The SDK in the Turnpike checkout that created this plugin.
turnpike-sdk = {{ path = "{sdk}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = {{ version = "1", features = ["preserve_order"] }}

[profile.release]
opt-level = 3
lto = true
codegen-units = 1
strip = true
panic = "abort"

# A project of its own, even inside another Cargo workspace.
[workspace]
"#,
        sdk = sdk.display()
    );
    let lib = r##"use serde_json::Value;
use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    field: Option<String>,
}

pub struct Redact {
    field: String,
}

impl Transform for Redact {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        Ok(Redact { field: config.field.unwrap_or_else(|| "email".into()) })
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let mut data: Value = record.value_json()?;
        if let Some(v) = data.get_mut(&self.field) {
            *v = "***".into();
        }
        out.forward_with_value(record, data.to_string());
        Ok(())
    }
}

export_transform!(Redact);

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::testing;

    #[test]
    fn redacts_the_field_and_fails_what_is_not_json() {
        let mut t = testing::create::<Redact>(r#"{"field": "email"}"#).unwrap();
        let out = testing::run(&mut t, [TestRecord::value(r#"{"email":"a@b.c","n":1}"#), TestRecord::value("nope")]).unwrap();
        assert_eq!(out.values(), [r#"{"email":"***","n":1}"#]);
        assert_eq!(out.errors[0].0, 1);
    }
}
"##;
    vec![
        ("Cargo.toml", cargo),
        ("src/lib.rs", lib.to_owned()),
        (".gitignore", "target/\n*.wasm\n.turnpike/\n".to_owned()),
        ("README.md", readme(name, Lang::Rust, "cargo test                                              # the logic, natively")),
    ]
}

fn python(name: &str) -> Vec<(&'static str, String)> {
    let plugin = r#"from turnpike import Transform


class Redact(Transform):
    def create(self, config):
        self.field = config.get("field", "email")

    def process(self, record):
        data = record.json()
        if self.field in data:
            data[self.field] = "***"
        return record.with_value(data)
"#;
    let test = r#"import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".turnpike", "python"))

from turnpike import Record  # noqa: E402
from turnpike.testing import create, run  # noqa: E402

from plugin import Redact  # noqa: E402


class RedactTest(unittest.TestCase):
    def test_redacts_the_field_and_fails_what_is_not_json(self):
        outputs, errors = run(create(Redact, {"field": "email"}), [Record('{"email": "a@b.c", "n": 1}'), Record("nope")])
        self.assertEqual([r.value for _, r in outputs], [b'{"email":"***","n":1}'])
        self.assertEqual([i for i, _, _ in errors], [1])


if __name__ == "__main__":
    unittest.main()
"#;
    vec![
        ("plugin.py", plugin.to_owned()),
        ("test_plugin.py", test.to_owned()),
        (".gitignore", "*.wasm\n.turnpike/\n__pycache__/\n".to_owned()),
        ("README.md", readme(name, Lang::Python, "python3 -m unittest                                     # the logic, natively")),
    ]
}

fn js(name: &str) -> Vec<(&'static str, String)> {
    let plugin = r#"import { Transform } from "./.turnpike/js/turnpike.js";

export default class Redact extends Transform {
  create(config) {
    this.field = config.field ?? "email";
  }

  process(record) {
    const data = record.json();
    if (this.field in data) data[this.field] = "***";
    return record.withValue(data);
  }
}
"#;
    let test = r#"import { test } from "node:test";
import assert from "node:assert/strict";
import { Record, create, run } from "./.turnpike/js/turnpike.js";
import Redact from "./plugin.js";

test("redacts the field and fails what is not JSON", () => {
  const { outputs, errors } = run(create(Redact, { field: "email" }), [new Record('{"email":"a@b.c","n":1}'), new Record("nope")]);
  assert.deepEqual(outputs.map(([, r]) => new TextDecoder().decode(r.value)), ['{"email":"***","n":1}']);
  assert.deepEqual(errors.map(([i]) => i), [1]);
});
"#;
    vec![
        ("plugin.js", plugin.to_owned()),
        ("plugin.test.js", test.to_owned()),
        ("package.json", format!("{{ \"name\": \"{name}\", \"version\": \"0.1.0\", \"type\": \"module\", \"private\": true }}\n")),
        (".gitignore", "*.wasm\n.turnpike/\nnode_modules/\n".to_owned()),
        ("README.md", readme(name, Lang::Js, "node --test                                             # the logic, natively")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `examples/plugins/*-redact` are what `new` generates (the Rust one in a workspace of
    /// its own, so only its code is compared): they must not drift apart.
    #[test]
    fn the_redact_examples_are_the_templates() {
        let examples = turnpike_wasm_build::source_root().join("examples").join("plugins");
        let dir = std::env::temp_dir().join(format!("turnpike-templates-{}", std::process::id()));
        let common = ["records.jsonl", "connector.yaml", "README.md"];
        for (lang, own) in [(Lang::Rust, &["src/lib.rs"][..]), (Lang::Python, &["plugin.py", "test_plugin.py"]), (Lang::Js, &["plugin.js", "plugin.test.js"])] {
            let files = own.iter().chain(common.iter());
            let name = format!("{}-redact", lang.as_str());
            let _ = std::fs::remove_dir_all(dir.join(&name));
            let generated = new_plugin(lang, &name, &dir).unwrap();
            for file in files {
                let want = std::fs::read_to_string(generated.join(file)).unwrap();
                let have = std::fs::read_to_string(examples.join(&name).join(file)).unwrap();
                assert_eq!(have, want, "examples/plugins/{name}/{file} differs from the template: regenerate it");
            }
            // The Python and JavaScript examples commit their `.turnpike/` (the SDK copy their
            // tests import), so their native tests run in a fresh clone before any build; it
            // must be what a build writes today.
            if matches!(lang, Lang::Python | Lang::Js) {
                for file in support_files(&generated.join(".turnpike")) {
                    let want = std::fs::read(generated.join(".turnpike").join(&file)).unwrap();
                    let have = std::fs::read(examples.join(&name).join(".turnpike").join(&file)).unwrap_or_default();
                    assert!(have == want, "examples/plugins/{name}/.turnpike/{} is stale: run `turnpike plugin build examples/plugins/{name}`", file.display());
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Every file below `dir`, relative to it.
    fn support_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(d) = pending.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    files.push(path.strip_prefix(dir).unwrap().to_path_buf());
                }
            }
        }
        files
    }

    #[test]
    fn names_are_checked_and_folders_not_overwritten() {
        let dir = std::env::temp_dir().join(format!("turnpike-names-{}", std::process::id()));
        assert!(matches!(new_plugin(Lang::Js, "Bad_Name", &dir), Err(AuthoringError::BadName(_))));
        new_plugin(Lang::Js, "ok", &dir).unwrap();
        assert!(matches!(new_plugin(Lang::Js, "ok", &dir), Err(AuthoringError::Exists(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
