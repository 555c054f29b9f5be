//! Integration tests: the `turnpike` host process against a real Apache Kafka broker.
//! Run them with `tests/run.sh`, which starts the broker.

mod cli;
mod config_errors;
mod delivery;
mod dev;
mod faults;
mod hardening;
mod hot_swap;
mod lifecycle;
mod masking;
mod offsets;
mod sources_sinks;
