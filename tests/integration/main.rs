//! Integration tests: the `turnpike` host process against a real Apache Kafka broker.
//! Run them with `tests/run.sh`, which starts the broker.

mod api_fuzz;
mod auth;
mod cli;
mod cluster;
mod cluster_join;
mod cluster_sources;
mod config_errors;
mod connect_chain;
mod connect_import;
mod console;
mod config_golden;
mod delivery;
mod dev;
mod faults;
mod fenced_positions;
mod hardening;
mod idle;
mod lifecycle;
mod metrics;
mod masking;
mod offsets;
mod secrets;
mod s3_sink;
mod s3_sink_faults;
mod shippable;
mod sink_compat;
mod sink_flush;
mod sources_sinks;
mod sql_source;
mod sql_source_faults;
mod tasks;
mod state_compat;
mod topics;
