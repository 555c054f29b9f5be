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

/// The pause between two probes during an outage.
const PROBE_INTERVAL: Duration = Duration::from_secs(2);
/// How long one probe waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs for as long as the run does (the caller drops it when the run ends).
pub(crate) async fn watch(health: Arc<BrokerHealth>, producer: Producer, status: Arc<LiveStatus>) {
    // An outage an earlier run saw lasts until a broker answers this run's clients.
    if status.measures.outage().is_some() {
        until_a_broker_answers(&producer).await;
        end_outage(&status);
    }
    loop {
        let suspicion = health.take_suspicion().await;
        if producer.reaches_broker(PROBE_TIMEOUT).await {
            // A passing disconnection, or an error read late: a broker answers.
            continue;
        }
        LiveStatus::add(&status.measures.broker_outages, 1);
        status.events().emit(status.name(), EventKind::BrokerUnreachable { message: suspicion.message.clone() });
        status.measures.set_outage(Some(suspicion));
        until_a_broker_answers(&producer).await;
        end_outage(&status);
    }
}

async fn until_a_broker_answers(producer: &Producer) {
    loop {
        tokio::time::sleep(PROBE_INTERVAL).await;
        if producer.reaches_broker(PROBE_TIMEOUT).await {
            return;
        }
    }
}

/// Emits the end of the outage (measured from the first error, as the status's `since`),
/// then clears it.
fn end_outage(status: &LiveStatus) {
    let since = status.measures.outage().map(|o| o.since);
    let unreachable_ms = since.and_then(|s| s.elapsed().ok()).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    status.events().emit(status.name(), EventKind::BrokerReachable { unreachable_ms });
    status.measures.set_outage(None);
}
