//! Which consumer group protocol connector consumers use. KIP-848 (`group.protocol:
//! consumer`) moves only the partitions that change owner, with no group-wide barrier and no
//! client-side assignor, so the host uses it whenever the broker serves it; otherwise the
//! classic protocol with the cooperative assignor. librdkafka makes a consumer whose broker
//! lacks KIP-848 fail for good (UNSUPPORTED_VERSION is fatal), so the host asks the broker
//! once, at start, instead of trying.

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;

/// The librdkafka setting.
pub const GROUP_PROTOCOL: &str = "group.protocol";

/// Settings only the classic protocol has: with KIP-848 the broker decides them, and
/// librdkafka refuses to create a consumer that sets them.
const CLASSIC_ONLY: [&str; 4] = ["session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy", "group.protocol.type"];

/// The broker setting that lists the group protocols its coordinator serves (Kafka 3.7 and
/// later; `classic,consumer,streams` by default since 4.0).
const BROKER_PROTOCOLS: &str = "group.coordinator.rebalance.protocols";

/// How long the start-up question to the broker may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The protocol connector consumers use, and why: shown by `GET /v1/cluster`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct GroupProtocol {
    /// `consumer` (KIP-848) or `classic`.
    pub protocol: String,
    /// Why this one, in an operator's words.
    pub reason: String,
}

impl GroupProtocol {
    fn new(protocol: &str, reason: impl Into<String>) -> Self {
        Self { protocol: protocol.to_owned(), reason: reason.into() }
    }

    /// Whether this is KIP-848.
    pub fn is_consumer(&self) -> bool {
        self.protocol == "consumer"
    }
}

/// A `kafka:` section whose group protocol settings cannot work: every consumer would fail.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GroupProtocolConflict {
    /// KIP-848 beside a setting only the classic protocol has.
    #[error("kafka: {setting} is a classic group protocol setting, but group.protocol is consumer (KIP-848), where the broker decides it (group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms on the broker); remove {setting}, or set group.protocol: classic")]
    ClassicOnly {
        /// The classic-only setting.
        setting: String,
    },
    /// A protocol librdkafka does not know.
    #[error("kafka: group.protocol: {value:?} is not one of consumer, classic")]
    Unknown {
        /// The value as written.
        value: String,
    },
}

/// What the operator's `kafka:` settings decide on their own: `Some` when they name the
/// protocol or set what only the classic one has; `None` leaves it to the broker.
pub fn decided_by_settings(settings: &[(String, String)]) -> Result<Option<GroupProtocol>, GroupProtocolConflict> {
    let named = settings.iter().rev().find(|(k, _)| k == GROUP_PROTOCOL).map(|(_, v)| v.trim().to_ascii_lowercase());
    let classic_only = settings.iter().find(|(k, _)| CLASSIC_ONLY.contains(&k.as_str())).map(|(k, _)| k.clone());
    match (named.as_deref(), classic_only) {
        (Some("consumer"), Some(setting)) => Err(GroupProtocolConflict::ClassicOnly { setting }),
        (Some(protocol @ ("consumer" | "classic")), _) => Ok(Some(GroupProtocol::new(protocol, "set by group.protocol in kafka:"))),
        (Some(_), _) => {
            let value = settings.iter().rev().find(|(k, _)| k == GROUP_PROTOCOL).map(|(_, v)| v.clone()).unwrap_or_default();
            Err(GroupProtocolConflict::Unknown { value })
        }
        (None, Some(setting)) => Ok(Some(GroupProtocol::new("classic", format!("kafka: sets {setting}, which only the classic protocol has")))),
        (None, None) => Ok(None),
    }
}

/// The protocol for this host's connector consumers, and `settings` with `group.protocol`
/// set to it when the broker chose KIP-848. A broker that cannot be asked, or does not serve
/// KIP-848, means classic.
pub async fn choose_group_protocol(settings: Vec<(String, String)>) -> Result<(Vec<(String, String)>, GroupProtocol), GroupProtocolConflict> {
    if let Some(decided) = decided_by_settings(&settings)? {
        // Written as librdkafka spells it: the check above forgives case and spaces.
        let settings = settings.into_iter().map(|(k, v)| if k == GROUP_PROTOCOL { (k, decided.protocol.clone()) } else { (k, v) }).collect();
        return Ok((settings, decided));
    }
    let chosen = match broker_protocols(&settings).await {
        Ok(Some(served)) if served.split(',').any(|p| p.trim() == "consumer") => {
            GroupProtocol::new("consumer", format!("the broker serves KIP-848 ({BROKER_PROTOCOLS}={served})"))
        }
        Ok(Some(served)) => GroupProtocol::new("classic", format!("the broker does not serve KIP-848 ({BROKER_PROTOCOLS}={served})")),
        Ok(None) => GroupProtocol::new("classic", format!("the broker does not list {BROKER_PROTOCOLS} (Kafka before 3.7)")),
        Err(why) => GroupProtocol::new("classic", format!("could not ask the broker which group protocols it serves: {why}")),
    };
    let mut settings = settings;
    if chosen.is_consumer() {
        settings.push((GROUP_PROTOCOL.to_owned(), "consumer".to_owned()));
    }
    Ok((settings, chosen))
}

/// The broker's `group.coordinator.rebalance.protocols` (one broker's: a cluster runs one
/// version), `None` when it has no such setting.
async fn broker_protocols(settings: &[(String, String)]) -> Result<Option<String>, String> {
    let config = crate::client_config::client_config(settings);
    // Metadata requests block: made on a blocking thread, which hands the client back.
    let (admin, broker) = tokio::task::spawn_blocking(move || -> Result<_, String> {
        let admin: AdminClient<DefaultClientContext> = config.create().map_err(|e| e.to_string())?;
        let metadata = admin.inner().fetch_metadata(None, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
        let broker = metadata.brokers().first().map(|b| b.id()).ok_or("the metadata names no broker")?;
        Ok((admin, broker))
    })
    .await
    .map_err(|e| e.to_string())??;
    let options = AdminOptions::new().request_timeout(Some(PROBE_TIMEOUT));
    let resource = ResourceSpecifier::Broker(broker);
    let described = admin.describe_configs([&resource], &options).await.map_err(|e| e.to_string())?;
    let resource = described.into_iter().next().ok_or("no answer for the broker")?.map_err(|code| code.to_string())?;
    Ok(resource.get(BROKER_PROTOCOLS).and_then(|entry| entry.value.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn the_operators_settings_decide_before_the_broker() {
        assert_eq!(decided_by_settings(&settings(&[("bootstrap.servers", "b:9092")])), Ok(None));
        let named = decided_by_settings(&settings(&[("group.protocol", "Classic")])).unwrap().unwrap();
        assert_eq!((named.protocol.as_str(), named.reason.as_str()), ("classic", "set by group.protocol in kafka:"));
        let session = decided_by_settings(&settings(&[("session.timeout.ms", "6000")])).unwrap().unwrap();
        assert_eq!(session, GroupProtocol::new("classic", "kafka: sets session.timeout.ms, which only the classic protocol has"));
        assert!(decided_by_settings(&settings(&[("group.protocol", "consumer")])).unwrap().unwrap().is_consumer());
    }

    #[test]
    fn kip_848_with_a_classic_setting_is_refused_naming_both() {
        let err = decided_by_settings(&settings(&[("heartbeat.interval.ms", "2000"), ("group.protocol", "consumer")])).unwrap_err();
        assert_eq!(err, GroupProtocolConflict::ClassicOnly { setting: "heartbeat.interval.ms".into() });
        assert!(err.to_string().starts_with("kafka: heartbeat.interval.ms is a classic group protocol setting, but group.protocol is consumer"), "{err}");
    }

    /// librdkafka would refuse every consumer at creation, naming neither the connector nor
    /// the fix.
    #[test]
    fn an_unknown_protocol_is_refused_with_the_choices() {
        let err = decided_by_settings(&settings(&[("group.protocol", "kip848")])).unwrap_err();
        assert_eq!(err.to_string(), r#"kafka: group.protocol: "kip848" is not one of consumer, classic"#);
        assert!(decided_by_settings(&settings(&[("group.protocol", " CONSUMER ")])).unwrap().unwrap().is_consumer());
    }

    /// No broker answers: classic, with the reason, and the settings unchanged.
    #[tokio::test]
    async fn a_broker_that_cannot_be_asked_means_classic() {
        let given = settings(&[("bootstrap.servers", "127.0.0.1:1"), ("socket.connection.setup.timeout.ms", "1000")]);
        let (kept, chosen) = choose_group_protocol(given.clone()).await.unwrap();
        assert_eq!(kept, given);
        assert_eq!(chosen.protocol, "classic");
        assert!(chosen.reason.starts_with("could not ask the broker which group protocols it serves"), "{}", chosen.reason);
    }
}
