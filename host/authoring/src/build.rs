//! `turnpike plugin build`: the right toolchain for the project's language, one component out.

use std::path::{Path, PathBuf};
use std::process::Command;

use turnpike_wasm_build::{cargo, ensure_wasm_target, run, WASM_TARGET};

use crate::embedded::write_support;
use crate::error::io;
use crate::{toolchain, AuthoringError, Lang};

/// A built plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The language it was written in.
    pub lang: Lang,
    /// Its name (the Rust package, or the folder for Python and JavaScript).
    pub name: String,
    /// The component: `<project>/<name>.wasm`.
    pub component: PathBuf,
}

/// Builds the plugin project in `project` into `<project>/<name>.wasm`.
pub fn build(project: &Path) -> Result<Built, AuthoringError> {
    let project = project.canonicalize().map_err(io(project))?;
    let lang = Lang::detect(&project)?;
    write_support(&project, lang)?;
    let (name, component) = match lang {
        Lang::Rust => build_rust(&project)?,
        Lang::Python => {
            let name = folder_name(&project);
            let out = project.join(format!("{name}.wasm"));
            let mut cmd = Command::new(toolchain::componentize_py()?);
            cmd.current_dir(&project)
                .args(["-d", ".turnpike/wit", "-w", "transform-plugin", "componentize", "turnpike_app"])
                .args(["-p", ".", "-p", ".turnpike/python", "-p", ".turnpike/python/component", "-o"])
                .arg(&out);
            run(&mut cmd, "componentize-py")?;
            (name, out)
        }
        Lang::Js => {
            let name = folder_name(&project);
            let out = project.join(format!("{name}.wasm"));
            // Relative paths: componentize-js reads files through a sandbox rooted at the
            // working folder. No WASI capability is compiled in: a transform needs none.
            let mut cmd = Command::new(toolchain::componentize_js()?);
            cmd.current_dir(&project)
                .args([".turnpike/entry.js", "--wit", ".turnpike/wit", "--world-name", "transform-plugin", "-o"])
                .arg(format!("{name}.wasm"))
                .args(["-d", "stdio", "random", "clocks", "http", "fetch-event"]);
            run(&mut cmd, "componentize-js")?;
            (name, out)
        }
    };
    if !component.is_file() {
        return Err(turnpike_wasm_build::BuildError::Missing(component).into());
    }
    Ok(Built { lang, name, component })
}

fn folder_name(project: &Path) -> String {
    project.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "plugin".into())
}

/// `cargo build` for the wasm target, then the component copied next to the project.
fn build_rust(project: &Path) -> Result<(String, PathBuf), AuthoringError> {
    ensure_wasm_target()?;
    run(cargo().current_dir(project).args(["build", "--release", "--target", WASM_TARGET]), "cargo build --release --target wasm32-wasip2")?;
    let metadata = cargo().current_dir(project).args(["metadata", "--no-deps", "--format-version", "1"]).output().map_err(|e| AuthoringError::Metadata(e.to_string()))?;
    let meta: serde_json::Value = serde_json::from_slice(&metadata.stdout).map_err(|e| AuthoringError::Metadata(e.to_string()))?;
    let manifest = project.join("Cargo.toml");
    let package = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path())))
        .ok_or_else(|| AuthoringError::Metadata(format!("no package for {}", manifest.display())))?;
    let name = package["name"].as_str().unwrap_or("plugin").to_owned();
    let lib = package["targets"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "cdylib"))))
        .and_then(|t| t["name"].as_str())
        .ok_or_else(|| AuthoringError::Metadata(format!("{name} has no cdylib target: add [lib] crate-type = [\"cdylib\"]")))?;
    let target = PathBuf::from(meta["target_directory"].as_str().unwrap_or("target"));
    let built = target.join(WASM_TARGET).join("release").join(format!("{}.wasm", lib.replace('-', "_")));
    let out = project.join(format!("{name}.wasm"));
    std::fs::copy(&built, &out).map_err(io(&built))?;
    Ok((name, out))
}
