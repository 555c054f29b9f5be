//! The admin API in process (`tower::ServiceExt::oneshot`), one test binary for the crate: each
//! module is one concern. The broker address is unreachable on purpose throughout.

mod auth_matrix;
mod connectors;
mod hardening;
mod plugins;
mod team_world;
mod teams;
mod tls;
