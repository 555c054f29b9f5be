//! `turnpike`: runs sandboxed WebAssembly plugins as Kafka connectors.

mod admin_cmds;
mod author_cmds;
mod client;
mod demo_data;
mod dev;
mod generate;
mod import_cmd;
mod output;
mod run;
mod secret_cmds;
mod serve;
mod token_cmds;

use clap::{Parser, Subcommand};

/// mimalloc for the host's own allocations; librdkafka's C code keeps glibc's `malloc`.
///
/// Why: glibc gives threads at most eight arenas per core, so the tokio workers share theirs
/// with the threads of every Kafka client the host opens. With glibc, a pii-mask connector
/// beside 1,000 idle ones that had given their consumers up spent more host CPU per record
/// than alone, and `perf` put the difference in glibc's `_int_malloc`, `unlink_chunk` and
/// `malloc_consolidate` on the workers: most likely the free lists those clients' memory left
/// long and fragmented. With mimalloc the difference was gone, for more memory resident at
/// rest. README.md (Performance, Density) has the figures.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "turnpike", version, about = "Kafka connectors as sandboxed WebAssembly plugins")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the connectors of a config file against a Kafka cluster.
    Run(run::RunArgs),
    /// Run a self-contained demo: an embedded broker, the built-in plugins, a generator of
    /// customer records and a PII-masking connector, with the admin API on localhost.
    Dev(dev::DevArgs),
    /// Write plugins (new, build, test locally) and manage them on a running host (push, ls,
    /// rm, through its admin API).
    Plugin {
        #[command(subcommand)]
        command: admin_cmds::PluginCmd,
        #[command(flatten)]
        api: admin_cmds::ApiArgs,
    },
    /// Manage connectors on a running host (through its admin API).
    Connector {
        #[command(subcommand)]
        command: admin_cmds::ConnectorCmd,
        #[command(flatten)]
        api: admin_cmds::ApiArgs,
    },
    /// Manage the secrets connectors reference as `${secret:NAME}` on a running host (through
    /// its admin API). Values are read from standard input or a file, never shown.
    Secret {
        #[command(subcommand)]
        command: secret_cmds::SecretCmd,
        #[command(flatten)]
        api: admin_cmds::ApiArgs,
    },
    /// Make, list and revoke the admin API's tokens: on the host with `-c FILE` (or
    /// `--state-dir DIR`), which is how the first admin token is made, or through the API with
    /// an admin token.
    Token {
        #[command(subcommand)]
        command: token_cmds::TokenCmd,
        #[command(flatten)]
        api: admin_cmds::ApiArgs,
        #[command(flatten)]
        host: token_cmds::OnHost,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // The host logs what it does; the commands for authors and operators only what goes wrong.
    let quiet = matches!(cli.command, Command::Plugin { .. } | Command::Connector { .. } | Command::Secret { .. } | Command::Token { .. });
    init_tracing(if quiet { "warn" } else { "info,librdkafka=warn,rdkafka=warn" });
    // The API commands are plain blocking HTTP calls: no async runtime needed.
    let command = match cli.command {
        Command::Plugin { command, api } => return exit(admin_cmds::plugin(command, &api)),
        // `connector generate` talks to a database, not to the API: it runs on the runtime below.
        cmd @ Command::Connector { command: admin_cmds::ConnectorCmd::Generate { .. }, .. } => cmd,
        Command::Connector { command, api } => return exit(admin_cmds::connector(command, &api)),
        Command::Secret { command, api } => return exit(secret_cmds::secret(command, &api)),
        Command::Token { command, api, host } => return exit(token_cmds::token(command, &api, &host)),
        host_command => host_command,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Run(args) => run::run(args).await,
            Command::Dev(args) => dev::dev(args).await,
            Command::Connector { command: admin_cmds::ConnectorCmd::Generate { what }, .. } => generate::generate(*what).await,
            Command::Plugin { .. } | Command::Connector { .. } | Command::Secret { .. } | Command::Token { .. } => unreachable!("handled above"),
        }
    });
    // Dropping the runtime would wait, without end, for any blocking task still running: one
    // stuck inside a library call would keep the process alive after its shutdown finished.
    runtime.shutdown_timeout(RUNTIME_DRAIN);
    exit(result)
}

/// How long blocking work still running after the host's shutdown may take to end.
const RUNTIME_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// `0` on success; otherwise the error with its causes on stderr and `2`.
fn exit(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The chain can carry server or plugin text; keep its line breaks, escape the rest.
            eprintln!("error: {}", output::escape_lines(&format!("{e:#}")));
            std::process::ExitCode::from(2)
        }
    }
}

/// Logs to stderr; colours only on a terminal, so a log redirected to a file or a collector
/// is plain text that `grep resumed=true` finds.
fn init_tracing(default: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("TURNPIKE_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal()).init();
}
