//! Watches a run's broker reachability: an outage becomes a status condition, a count and an
//! event, and its end another event.
//!
//! A client error only raises a suspicion (consumer errors can be read from their queue
//! seconds late); a metadata request decides. While an outage lasts the request is repeated
//! every few seconds, because an idle consumer hears nothing when the broker comes back.
//! While brokers answer, this waits without a timer.

use std::sync::Arc;
use std::time::Duration;

use turnpike_kafka::{BrokerHealth, Producer};

use crate::events::EventKind;
use crate::status::LiveStatus;

/// How often an outage is probed.
const PROBE_INTERVAL: Duration = Duration::from_secs(2);
/// How long one probe waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs for as long as the run does (the caller drops it when the run ends).
pub(crate) async fn watch(health: Arc<BrokerHealth>, producer: Producer, status: Arc<LiveStatus>) {
    loop {
        let suspicion = health.suspected().await;
        if producer.reaches_broker(PROBE_TIMEOUT).await {
            // A passing disconnection, or an error read late: a broker answers.
            health.clear_suspicion();
            continue;
        }
        let since = suspicion.since;
        health.confirm(Some(suspicion.clone()));
        LiveStatus::add(&status.measures.broker_outages, 1);
        status.events().emit(status.name(), EventKind::BrokerUnreachable { message: suspicion.message });
        loop {
            tokio::time::sleep(PROBE_INTERVAL).await;
            if producer.reaches_broker(PROBE_TIMEOUT).await {
                break;
            }
        }
        health.confirm(None);
        health.clear_suspicion();
        // From the first error, as the status's `since` says.
        let unreachable_ms = u64::try_from(since.elapsed().unwrap_or_default().as_millis()).unwrap_or(u64::MAX);
        status.events().emit(status.name(), EventKind::BrokerReachable { unreachable_ms });
    }
}
