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

/// The `componentize-js` executable, installing it (with npm) if missing.
pub fn componentize_js() -> Result<PathBuf, AuthoringError> {
    let prefix = dir().join("node");
    let exe = bin(&prefix, "componentize-js");
    if !exe.is_file() {
        tracing::info!(at = %prefix.display(), "installing {COMPONENTIZE_JS} (first JavaScript build only)");
        std::fs::create_dir_all(&prefix).map_err(crate::error::io(&prefix))?;
        let mut npm = Command::new("npm");
        npm.arg("install").arg("--prefix").arg(&prefix).args(["--no-audit", "--no-fund", "--loglevel=error", COMPONENTIZE_JS]);
        run(&mut npm, &format!("npm install {COMPONENTIZE_JS}"))?;
    }
    Ok(exe)
}

/// Whether the toolchain for `lang` is already installed (Rust: always, as far as we know).
pub fn is_installed(lang: crate::Lang) -> bool {
    match lang {
        crate::Lang::Rust => true,
        crate::Lang::Python => dir().join("python").join("bin").join("componentize-py").is_file(),
        crate::Lang::Js => bin(&dir().join("node"), "componentize-js").is_file(),
    }
}

fn bin(prefix: &Path, name: &str) -> PathBuf {
    prefix.join("node_modules").join(".bin").join(name)
}
