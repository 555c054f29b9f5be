//! The Python and JavaScript toolchains, pinned and installed on first use into a cache shared
//! by every project: `$TURNPIKE_TOOLCHAINS`, else `$XDG_CACHE_HOME/turnpike/toolchains`, else
//! `~/.cache/turnpike/toolchains`. Needs `python3` (with `venv`) and `npm`.

use std::path::{Path, PathBuf};
use std::process::Command;

use turnpike_wasm_build::run;

use crate::AuthoringError;

/// componentize-py, which builds Python components.
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";
/// componentize-js, which builds JavaScript components.
pub const COMPONENTIZE_JS: &str = "@bytecodealliance/componentize-js@0.23.0";
/// esbuild, which bundles a JavaScript plugin and its npm dependencies into the one module
/// componentize-js takes (it resolves no package names).
pub const ESBUILD: &str = "esbuild@0.28.2";

/// Where the toolchains live.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TURNPIKE_TOOLCHAINS") {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("turnpike").join("toolchains")
}

/// The `componentize-py` executable, installing it (in a virtual environment) if missing.
pub fn componentize_py() -> Result<PathBuf, AuthoringError> {
    let venv = dir().join("python");
    let exe = venv.join("bin").join("componentize-py");
    if !exe.is_file() {
        tracing::info!(at = %venv.display(), "installing {COMPONENTIZE_PY} (first Python build only)");
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv), "python3 -m venv")?;
        let pip = venv.join("bin").join("pip");
        run(Command::new(&pip).args(["install", "--quiet", "--disable-pip-version-check", COMPONENTIZE_PY]), &format!("pip install {COMPONENTIZE_PY}"))?;
    }
    Ok(exe)
}

/// The `componentize-js` executable, installing the JavaScript tools if missing.
pub fn componentize_js() -> Result<PathBuf, AuthoringError> {
    js_tool("componentize-js")
}

/// The `esbuild` executable, installing the JavaScript tools if missing.
pub fn esbuild() -> Result<PathBuf, AuthoringError> {
    js_tool("esbuild")
}

/// componentize-js's runtime dependency, named so that npm keeps it: a later `npm install`
/// into the prefix otherwise prunes it (seen: esbuild added after componentize-js).
const PREVIEW2_SHIM: &str = "@bytecodealliance/preview2-shim@0.25.0";

/// An executable of the JavaScript tools in the shared `node` prefix. All of them are
/// installed by one `npm install`, so that none prunes another.
fn js_tool(exe_name: &str) -> Result<PathBuf, AuthoringError> {
    let prefix = dir().join("node");
    let exe = bin(&prefix, exe_name);
    if !["componentize-js", "esbuild"].iter().all(|e| bin(&prefix, e).is_file()) {
        let packages = [COMPONENTIZE_JS, ESBUILD, PREVIEW2_SHIM];
        tracing::info!(at = %prefix.display(), "installing {} (first JavaScript build only)", packages.join(", "));
        std::fs::create_dir_all(&prefix).map_err(crate::error::io(&prefix))?;
        let mut npm = Command::new("npm");
        npm.arg("install").arg("--prefix").arg(&prefix).args(["--no-audit", "--no-fund", "--loglevel=error"]).args(packages);
        run(&mut npm, &format!("npm install {}", packages.join(" ")))?;
    }
    Ok(exe)
}

/// Whether the toolchain for `lang` is already installed (Rust: always, as far as we know).
pub fn is_installed(lang: crate::Lang) -> bool {
    match lang {
        crate::Lang::Rust => true,
        crate::Lang::Python => dir().join("python").join("bin").join("componentize-py").is_file(),
        crate::Lang::Js => ["componentize-js", "esbuild"].iter().all(|exe| bin(&dir().join("node"), exe).is_file()),
    }
}

fn bin(prefix: &Path, name: &str) -> PathBuf {
    prefix.join("node_modules").join(".bin").join(name)
}
