//! `turnpike`: runs sandboxed WebAssembly plugins as Kafka connectors.

mod demo_data;
mod dev;
mod run;
mod serve;

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    init_tracing();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Dev(args) => dev::dev(args).await,
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TURNPIKE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,librdkafka=warn,rdkafka=warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}
