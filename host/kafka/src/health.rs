//! Whether a connector's Kafka clients can reach any broker.
//!
//! librdkafka retries forever and says so only through errors: a consumer returns
//! `AllBrokersDown` from a read, a producer hands it to its context. A run's consumer reports
//! to the run's [`BrokerHealth`], as does a source's positions reader; the host's one producer
//! reports to a health of its own, which passes each report on to every run's
//! ([`BrokerHealth::forward_to`]). An error only raises a suspicion: consumer errors wait in a
//! queue and can be read seconds after the broker is back, so the task's broker watch asks a
//! broker for metadata before it calls the brokers unreachable, and again until one answers.
//! Nothing wakes up while the brokers answer: a thousand idle connectors cost nothing here.

use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use rdkafka::client::ClientContext;
use rdkafka::error::{KafkaError as RdKafkaError, RDKafkaErrorCode};
use tokio::sync::watch;

/// Since when no broker answers, and librdkafka's words for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// When a client first said every broker was down.
    pub since: SystemTime,
    /// librdkafka's message (e.g. `1/1 brokers are down`).
    pub message: String,
}

/// The shared reachability of one run's clients.
#[derive(Debug)]
pub struct BrokerHealth {
    /// The first "all brokers are down" not yet taken by the watch.
    suspicion: watch::Sender<Option<Unreachable>>,
    /// Healths every report is passed on to (the runs sharing the host's producer). Weak, so
    /// a run that ended drops out.
    listeners: Mutex<Vec<Weak<BrokerHealth>>>,
}

impl Default for BrokerHealth {
    fn default() -> Self {
        Self { suspicion: watch::channel(None).0, listeners: Mutex::default() }
    }
}

/// Whether a client error says the broker connection is lost (logged quietly: the broker
/// watch reports an outage once, as an event).
pub(crate) fn is_connection_error(error: &RdKafkaError) -> bool {
    matches!(error.rdkafka_error_code(), Some(RDKafkaErrorCode::AllBrokersDown | RDKafkaErrorCode::BrokerTransportFailure))
}

/// Logs a `client`'s error (a lost connection at debug level) and reports it to `health`.
pub(crate) fn client_error(health: &BrokerHealth, client: &str, error: &RdKafkaError, reason: &str) {
    if is_connection_error(error) {
        tracing::debug!(error = %error, reason, client, "kafka client cannot reach a broker");
    } else {
        tracing::warn!(error = %error, reason, client, "kafka client error");
    }
    health.report(error, reason);
}

impl BrokerHealth {
    /// Notes what a client reported: "all brokers are down" raises a suspicion for the watch
    /// to check (one broker of several being down is librdkafka's business).
    pub fn report(&self, error: &RdKafkaError, reason: &str) {
        if error.rdkafka_error_code() != Some(RDKafkaErrorCode::AllBrokersDown) {
            return;
        }
        let message = if reason.is_empty() { error.to_string() } else { reason.to_owned() };
        self.raise(&Unreachable { since: SystemTime::now(), message });
    }

    /// Passes every later report on to `listener` too, for as long as it lives. (Ended runs'
    /// listeners are forgotten here too, so restarts do not pile them up.)
    pub fn forward_to(&self, listener: &Arc<BrokerHealth>) {
        let mut listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        listeners.retain(|l| l.strong_count() > 0);
        if !listeners.iter().any(|l| std::ptr::eq(l.as_ptr(), Arc::as_ptr(listener))) {
            listeners.push(Arc::downgrade(listener));
        }
    }

    fn raise(&self, unreachable: &Unreachable) {
        self.suspicion.send_if_modified(|s| {
            if s.is_some() {
                return false;
            }
            *s = Some(unreachable.clone());
            true
        });
        let listeners: Vec<Arc<BrokerHealth>> = {
            let mut listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
            listeners.retain(|l| l.strong_count() > 0);
            listeners.iter().filter_map(Weak::upgrade).collect()
        };
        for listener in listeners {
            listener.raise(unreachable);
        }
    }

    /// Waits for a client to say every broker is down and takes that suspicion (what it said,
    /// and when): errors from then on raise a new one, so none is lost while it is checked.
    pub async fn take_suspicion(&self) -> Unreachable {
        let mut rx = self.suspicion.subscribe();
        // The sender lives in `self`, so the channel cannot close while this borrows it.
        let _ = rx.wait_for(Option::is_some).await;
        self.suspicion.send_replace(None).unwrap_or_else(|| Unreachable { since: SystemTime::now(), message: String::new() })
    }
}

/// The context of a client that reports to a [`BrokerHealth`]: the producer, and the
/// source positions reader (a source's only client of its own while it starts).
#[derive(Clone)]
pub struct HealthContext {
    pub(crate) health: Arc<BrokerHealth>,
    /// Which client, for the log.
    pub(crate) client: &'static str,
}

impl ClientContext for HealthContext {
    fn error(&self, error: RdKafkaError, reason: &str) {
        client_error(&self.health, self.client, &error, reason);
    }
}

impl rdkafka::consumer::ConsumerContext for HealthContext {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_report_reaches_every_live_listener_and_a_dropped_one_drops_out() {
        let root = BrokerHealth::default();
        let (a, b) = (Arc::new(BrokerHealth::default()), Arc::new(BrokerHealth::default()));
        root.forward_to(&a);
        root.forward_to(&b);
        drop(b);
        root.report(&RdKafkaError::MessageConsumption(RDKafkaErrorCode::AllBrokersDown), "1/1 brokers are down");
        let heard = tokio::time::timeout(Duration::from_secs(5), a.take_suspicion()).await.expect("the listener hears the root's report");
        assert_eq!(heard.message, "1/1 brokers are down");
        assert_eq!(root.listeners.lock().unwrap().len(), 1, "the dropped listener is forgotten");
    }

    #[tokio::test]
    async fn only_all_brokers_down_raises_a_suspicion_and_the_first_one_is_kept() {
        let health = Arc::new(BrokerHealth::default());
        health.report(&RdKafkaError::MessageConsumption(RDKafkaErrorCode::BrokerTransportFailure), "one broker lost");
        let waiter = tokio::spawn({
            let health = health.clone();
            async move { health.take_suspicion().await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "one broker's transport failure is not an outage");
        health.report(&RdKafkaError::MessageConsumption(RDKafkaErrorCode::AllBrokersDown), "1/1 brokers are down");
        health.report(&RdKafkaError::MessageConsumption(RDKafkaErrorCode::AllBrokersDown), "later");
        let first = tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("the waiter wakes").expect("joined");
        assert_eq!(first.message, "1/1 brokers are down", "a repeat keeps the first time and message");
        health.report(&RdKafkaError::MessageConsumption(RDKafkaErrorCode::AllBrokersDown), "after the take");
        let second = tokio::time::timeout(Duration::from_secs(5), health.take_suspicion()).await.expect("a report after the take is a new suspicion");
        assert_eq!(second.message, "after the take");
    }
}
