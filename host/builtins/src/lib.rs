//! Builds the built-in plugins from their source in `plugins/` for `wasm32-wasip2`.
//!
//! No `.wasm` file is committed: the host, the tests and the benchmark all call
//! [`build_all`], which installs the wasm target through rustup when it is missing and runs
//! `cargo build --release` in the plugins workspace (a no-op when nothing changed).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The wasm target plugins are built for; it emits components directly.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// A built-in plugin: its name and the crate's library name (the `.wasm` file stem).
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Name users refer to it by.
    pub name: &'static str,
    /// Library name of its crate.
    lib: &'static str,
    /// One-line description.
    pub description: &'static str,
}

/// Every built-in plugin.
pub const BUILTINS: &[Builtin] = &[
    Builtin { name: "identity", lib: "identity", description: "passes records through unchanged" },
    Builtin { name: "pii-mask", lib: "pii_mask", description: "masks personal data in JSON values" },
    Builtin { name: "datagen", lib: "datagen", description: "source: JSON records from a field spec" },
    Builtin { name: "http-source", lib: "http_source", description: "source: polls a JSON API" },
    Builtin { name: "http-sink", lib: "http_sink", description: "sink: sends records to an HTTP endpoint" },
];

/// Why the built-in plugins could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A tool could not be run at all.
    #[error("could not run `{command}`: {source}; is it installed?")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A tool ran and failed.
    #[error("`{command}` failed ({status}); its output is above")]
    Failed {
        /// The command.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// The build succeeded but a component is missing.
    #[error("the build did not produce {0}")]
    Missing(PathBuf),
}

/// The repository root this crate was built from.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// Where built components go (inside the repository's one `target/`).
pub fn target_dir() -> PathBuf {
    repo_root().join("target").join("plugins")
}

/// Builds every built-in plugin and returns `(name, path of its .wasm)` pairs.
pub fn build_all() -> Result<Vec<(&'static str, PathBuf)>, BuildError> {
    let target = target_dir();
    let release = build_workspace(&repo_root().join("plugins"), &target)?;
    BUILTINS
        .iter()
        .map(|b| {
            let path = release.join(format!("{}.wasm", b.lib));
            if path.exists() {
                Ok((b.name, path))
            } else {
                Err(BuildError::Missing(path))
            }
        })
        .collect()
}

/// Builds a wasm workspace (`plugins/`, test fixtures, examples) in release mode for
/// [`WASM_TARGET`] into `target_dir`; returns the folder holding the components.
pub fn build_workspace(workspace: &Path, target_dir: &Path) -> Result<PathBuf, BuildError> {
    ensure_wasm_target()?;
    let mut cmd = cargo();
    cmd.current_dir(workspace).args(["build", "--release", "--target", WASM_TARGET, "--target-dir"]).arg(target_dir);
    run(&mut cmd, &format!("cargo build --release ({})", workspace.display()))?;
    Ok(target_dir.join(WASM_TARGET).join("release"))
}

/// Builds the misbehaving plugins the fault tests use (`tests/components`); returns the folder
/// holding `faulty.wasm` and `wrong_world.wasm`.
pub fn build_test_fixtures() -> Result<PathBuf, BuildError> {
    let root = repo_root();
    build_workspace(&root.join("tests/components"), &root.join("target/test-components"))
}

/// Installs the wasm target when rustup does not list it as installed.
pub fn ensure_wasm_target() -> Result<(), BuildError> {
    let listed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match listed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == WASM_TARGET) => Ok(()),
        Ok(_) => {
            tracing::info!(target = WASM_TARGET, "installing the wasm target with rustup");
            run(Command::new("rustup").args(["target", "add", WASM_TARGET]), "rustup target add wasm32-wasip2")
        }
        // No rustup: the toolchain may still have the target (a distro Rust); let cargo say.
        Err(_) => Ok(()),
    }
}

/// A `cargo` command free of the variables an outer cargo (running us as a test or build
/// script) sets, which would otherwise retarget or reconfigure the nested build.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "RUSTC_WRAPPER", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs a tool, its output going to ours; an error names the tool and its exit status.
pub fn run(cmd: &mut Command, label: &str) -> Result<(), BuildError> {
    let status = cmd.status().map_err(|source| BuildError::Spawn { command: label.to_owned(), source })?;
    if status.success() {
        Ok(())
    } else {
        Err(BuildError::Failed { command: label.to_owned(), status })
    }
}
