//! Watches a run's broker reachability: an outage becomes a status condition, a count and an
//! event, and its end another event.
//!
//! A client error only raises a suspicion (consumer errors can be read from their queue
//! seconds late); a metadata request decides. While an outage lasts the request is repeated
//! every few seconds, because an idle consumer hears nothing when the broker comes back.
//! While brokers answer, this waits without a timer. One [`BrokerProbe`] serves the whole
//! host, so a thousand connectors in an outage send one request, not a thousand.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use turnpike_kafka::{BrokerHealth, Producer};

use crate::events::EventKind;
use crate::status::LiveStatus;

/// The pause between two probes during an outage.
const PROBE_INTERVAL: Duration = Duration::from_secs(2);
/// How long one probe waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The host's one metadata probe. Every connector's clients use the host's `kafka:` settings,
/// so one answer holds for all: callers share the probe in flight, and an answer to a probe
/// that began after the moment a caller asks about is reused.
pub(crate) struct BrokerProbe {
    kafka: Vec<(String, String)>,
    state: tokio::sync::Mutex<ProbeState>,
}

#[derive(Default)]
struct ProbeState {
    /// Created at the first probe (most hosts never need one).
    producer: Option<Producer>,
    /// When the last probe began, and whether a broker answered it.
    last: Option<(SystemTime, bool)>,
}

impl BrokerProbe {
    pub(crate) fn new(kafka: Vec<(String, String)>) -> Self {
        Self { kafka, state: tokio::sync::Mutex::default() }
    }

    /// Whether a broker answers a metadata request begun at `after` or later.
    pub(crate) async fn answers_after(&self, after: SystemTime) -> bool {
        let mut state = self.state.lock().await;
        if let Some((began, answered)) = state.last {
            if began >= after {
                return answered;
            }
        }
        let producer = match &state.producer {
            Some(p) => p.clone(),
            None => match Producer::new(&self.kafka) {
                Ok(p) => state.producer.insert(p).clone(),
                Err(e) => {
                    tracing::warn!(error = %e, "no client to probe the brokers with");
                    return false;
                }
            },
        };
        let began = SystemTime::now();
        let answered = producer.reaches_broker(PROBE_TIMEOUT).await;
        state.last = Some((began, answered));
        answered
    }
}

/// Runs for as long as the run does (the caller drops it when the run ends).
pub(crate) async fn watch(health: Arc<BrokerHealth>, probe: Arc<BrokerProbe>, status: Arc<LiveStatus>) {
    // An outage an earlier run saw lasts until a broker answers.
    if status.measures.outage().is_some() {
        until_a_broker_answers(&probe).await;
        end_outage(&status);
    }
    loop {
        let suspicion = health.take_suspicion().await;
        if probe.answers_after(suspicion.since).await {
            // A passing disconnection, or an error read late: a broker answers.
            continue;
        }
        LiveStatus::add(&status.measures.broker_outages, 1);
        status.events().emit(status.name(), EventKind::BrokerUnreachable { message: suspicion.message.clone() });
        status.measures.set_outage(Some(suspicion));
        until_a_broker_answers(&probe).await;
        end_outage(&status);
    }
}

async fn until_a_broker_answers(probe: &BrokerProbe) {
    loop {
        let asked = SystemTime::now();
        tokio::time::sleep(PROBE_INTERVAL).await;
        if probe.answers_after(asked).await {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Nothing listens on port 1: a probe gets no answer (after its timeout). A caller asking
    /// about a moment before that probe began reuses its answer at once; one asking about a
    /// later moment sends a new request.
    #[tokio::test(flavor = "multi_thread")]
    async fn callers_share_an_answer_begun_after_what_they_ask_about() {
        let probe = BrokerProbe::new(vec![("bootstrap.servers".into(), "127.0.0.1:1".into())]);
        let before = SystemTime::now();
        assert!(!probe.answers_after(before).await, "nothing answers on port 1");
        let reused = Instant::now();
        assert!(!probe.answers_after(before).await);
        assert!(reused.elapsed() < Duration::from_millis(500), "the answer was reused: {:?}", reused.elapsed());
        let fresh = Instant::now();
        assert!(!probe.answers_after(SystemTime::now()).await);
        assert!(fresh.elapsed() >= Duration::from_millis(500), "a later moment needs a new probe: {:?}", fresh.elapsed());
    }
}
