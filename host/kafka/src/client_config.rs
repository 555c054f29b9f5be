//! A client's librdkafka settings from the host's `kafka:` pairs: the one place they are
//! copied, so every client (consumers, producers, admin clients, readers) sees the same.

use rdkafka::config::ClientConfig;

/// Every setting in `settings`, in order.
pub(crate) fn client_config(settings: &[(String, String)]) -> ClientConfig {
    client_config_except(settings, |_| false)
}

/// The settings except those `leave_out` names: settings a client sets itself, or that its
/// kind of client refuses.
pub(crate) fn client_config_except(settings: &[(String, String)], leave_out: impl Fn(&str) -> bool) -> ClientConfig {
    let mut config = ClientConfig::new();
    for (k, v) in settings.iter().filter(|(k, _)| !leave_out(k)) {
        config.set(k, v);
    }
    config
}
