//! `turnpike plugin new`: a copy of the example plugin of that language and kind
//! (`examples/plugins/`), renamed, made a project of its own, with the SDK copied in. The
//! examples are the templates, so what is tested there is what authors get.

use std::path::{Path, PathBuf};

use crate::embedded::{template, vendor_sdk, write_file};
use crate::error::io;
use crate::{AuthoringError, Kind, Lang};

/// What makes an example's `Cargo.toml` a project of its own: the values it inherits from the
/// examples' workspace, and a workspace and release profile of its own.
const RUST_STANDALONE: &[(&str, &str)] = &[
    ("version.workspace = true", "version = \"0.1.0\""),
    ("edition.workspace = true", "edition = \"2021\""),
    ("publish.workspace = true", "publish = false"),
    ("path = \"../../../sdk/rust\"", "path = \"vendor/sdk/rust\""),
];
const RUST_WORKSPACE: &str = "
[profile.release]
opt-level = 3
lto = true
codegen-units = 1
strip = true
panic = \"abort\"

# A project of its own, even inside another Cargo workspace; the vendored SDK is not a member.
[workspace]
exclude = [\"vendor\"]
";

/// The JavaScript examples depend on the SDK in the checkout; a project on its copy.
const JS_STANDALONE: &[(&str, &str)] = &[("\"file:../../../sdk/js\"", "\"file:vendor/turnpike-sdk\"")];

/// Files a project never wants in version control.
fn gitignore(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "target/\n*.wasm\n.turnpike/\n",
        Lang::Python => "*.wasm\n.turnpike/\n__pycache__/\n",
        Lang::Js => "*.wasm\n.turnpike/\nnode_modules/\n",
    }
}

/// Creates `<parent>/<name>/` holding a `kind` plugin in `lang`; returns its path.
pub fn new_plugin(lang: Lang, kind: Kind, name: &str, parent: &Path) -> Result<PathBuf, AuthoringError> {
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
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let t = template(lang, kind);
    for (file, text) in t.files {
        write_file(&dir.join(file), &adapt(lang, file, text, t.example, name))?;
    }
    write_file(&dir.join(".gitignore"), gitignore(lang))?;
    vendor_sdk(&dir, lang)?;
    Ok(dir)
}

/// One template file made the new project's: the example's name replaced by the plugin's
/// (also in its `snake_case` form, the Rust crate name), and the manifest made standalone.
fn adapt(lang: Lang, file: &str, text: &str, example: &str, name: &str) -> String {
    let mut text = text.replace(example, name).replace(&example.replace('-', "_"), &name.replace('-', "_"));
    let rules: &[(&str, &str)] = match (lang, file) {
        (Lang::Rust, "Cargo.toml") => RUST_STANDALONE,
        (Lang::Js, "package.json") => JS_STANDALONE,
        _ => &[],
    };
    for (from, to) in rules {
        text = text.replace(from, to);
    }
    if (lang, file) == (Lang::Rust, "Cargo.toml") {
        text.push_str(RUST_WORKSPACE);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_manifest_is_made_standalone_and_renamed() {
        let example = "[package]\nname = \"rust-redact\"\nversion.workspace = true\nedition.workspace = true\npublish.workspace = true\n\n[dependencies]\nturnpike-sdk = { path = \"../../../sdk/rust\" }\n";
        let adapted = adapt(Lang::Rust, "Cargo.toml", example, "rust-redact", "my-mask");
        assert!(adapted.contains("name = \"my-mask\"") && adapted.contains("version = \"0.1.0\"") && adapted.contains("path = \"vendor/sdk/rust\""), "{adapted}");
        assert!(adapted.contains("\n[workspace]\n") && !adapted.contains(".workspace = true"), "{adapted}");
        let test = adapt(Lang::Rust, "tests/redact.rs", "use rust_redact::Redact;", "rust-redact", "my-mask");
        assert_eq!(test, "use my_mask::Redact;");
    }

    #[test]
    fn every_template_leaves_no_path_into_the_checkout() {
        let parent = std::env::temp_dir().join(format!("turnpike-templates-{}", std::process::id()));
        for lang in [Lang::Rust, Lang::Python, Lang::Js] {
            for kind in [Kind::Transform, Kind::Source, Kind::Sink] {
                let name = format!("p-{}-{}", lang.as_str(), kind.as_str());
                let dir = new_plugin(lang, kind, &name, &parent).unwrap();
                for (file, _) in template(lang, kind).files {
                    let text = std::fs::read_to_string(dir.join(file)).unwrap();
                    assert!(!text.contains("../../../"), "{name}/{file} points into the checkout:\n{text}");
                    let code = [".py", ".js", ".rs", ".toml", ".json"].iter().any(|ext| file.ends_with(ext));
                    assert!(!(code && text.contains(".turnpike")), "{name}/{file} uses the generated folder:\n{text}");
                }
                assert!(dir.join(".gitignore").is_file());
                let vendored = match lang {
                    Lang::Rust => dir.join("vendor/sdk/rust/Cargo.toml"),
                    Lang::Python => dir.join("turnpike/__init__.py"),
                    Lang::Js => dir.join("vendor/turnpike-sdk/package.json"),
                };
                assert!(vendored.is_file(), "{name}: the SDK is copied in ({})", vendored.display());
                assert!(!std::fs::read_to_string(&vendored).unwrap().contains("../../../"), "{name}: the vendored SDK points into the checkout");
            }
        }
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
