//! Runs cargo on a wasm workspace for `wasm32-wasip2`: the built-in plugins (from the
//! `turnpike-builtins` build script), the test fixtures (from `turnpike-test-components`'s) and
//! users' plugins (`turnpike plugin build`). One place knows how to call a nested cargo safely.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The wasm target plugins are built for; it emits components directly.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// Why a build could not run or did not succeed.
#[derive(Debug)]
pub enum BuildError {
    /// A tool could not be run at all.
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A tool ran and failed.
    Failed {
        /// The command.
        command: String,
        /// Its exit status.
        status: ExitStatus,
    },
    /// The build succeeded but a component is missing.
    Missing(PathBuf),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Spawn { command, source } => write!(f, "could not run `{command}`: {source}; is it installed?"),
            BuildError::Failed { command, status } => write!(f, "`{command}` failed ({status}); its output is above"),
            BuildError::Missing(path) => write!(f, "the build did not produce {}", path.display()),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The root of the Turnpike source tree this crate was compiled from. Only build scripts,
/// tests, benchmarks and the authoring templates use it: a running host never reads it.
pub fn source_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    here.canonicalize().unwrap_or(here)
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

/// For a build script that embeds components: builds the wasm workspace `workspace` (a path
/// relative to [`source_root`]) into `target` (also relative), copies each of `libs`'
/// components into OUT_DIR (so the crate embeds this build's bytes even if the shared target
/// directory changes later) and returns the copies' paths, in the order of `libs`. Tells cargo
/// to run the build script again when the workspace, the Rust SDK or the contract change.
pub fn build_for_embedding(workspace: &str, target: &str, libs: &[&str]) -> Result<Vec<PathBuf>, BuildError> {
    let root = source_root();
    for input in [workspace, "sdk/rust", "sdk/batch-layout", "wit"] {
        let path = root.join(input);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let release = build_workspace(&root.join(workspace), &root.join(target))?;
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| BuildError::Missing(PathBuf::from("$OUT_DIR")))?);
    libs.iter()
        .map(|lib| {
            let built = component(&release, lib)?;
            let embedded = out.join(format!("{lib}.wasm"));
            std::fs::copy(&built, &embedded).map_err(|source| BuildError::Spawn { command: format!("copy {} to {}", built.display(), embedded.display()), source })?;
            Ok(embedded)
        })
        .collect()
}

/// `dir/<lib>.wasm`, or [`BuildError::Missing`] when the build did not write it.
pub fn component(dir: &Path, lib: &str) -> Result<PathBuf, BuildError> {
    let path = dir.join(format!("{lib}.wasm"));
    if path.exists() {
        Ok(path)
    } else {
        Err(BuildError::Missing(path))
    }
}

/// Installs the wasm target when rustup does not list it as installed.
pub fn ensure_wasm_target() -> Result<(), BuildError> {
    let listed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match listed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == WASM_TARGET) => Ok(()),
        Ok(_) => {
            eprintln!("installing the {WASM_TARGET} target with rustup");
            run(Command::new("rustup").args(["target", "add", WASM_TARGET]), "rustup target add wasm32-wasip2")
        }
        // No rustup: the toolchain may still have the target (a distro Rust); let cargo say.
        Err(_) => Ok(()),
    }
}

/// Variables an outer cargo sets (for a build script, a test, `cargo clippy`) that would
/// retarget, rewrap or reconfigure a nested build.
const OUTER_CARGO_VARS: &[&str] = &[
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
];

/// A `cargo` command free of the variables an outer cargo sets.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for var in OUTER_CARGO_VARS {
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
