//! The one live connection of a connector and the retry loop every call goes through.
//!
//! A call takes the session lock (a tokio mutex: calls of a connector's instances take
//! turns on its one connection), connects if there is no session, and runs. A failed
//! connection is dropped and remade after a pause (100 ms doubling to 2 s, with jitter)
//! until the retry budget is spent; each retry is counted and logged. A session the backend
//! marks unusable is dropped after the call, and the next one connects afresh; so is one
//! whose last call was cancelled midway (the caller's own deadline dropped it).

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::config::Target;
use crate::error::Fault;
use crate::introspect::Catalog;
use crate::mysql::MySession;
use crate::postgres::PgSession;
use crate::{Dialect, Param, RowSet, SqlError};

/// The first pause; each further one doubles, up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest pause between two attempts.
const MAX_DELAY: Duration = Duration::from_secs(2);
/// Added to twice the statement timeout to give the time one attempt may take before the
/// connection is taken for dead (a server that vanished without closing it).
const ATTEMPT_MARGIN: Duration = Duration::from_secs(5);

/// What a call asks of the session.
pub(crate) enum Op<'a> {
    Check,
    /// The catalog of these schemas (lower case; `None`: all but the system ones).
    Catalog(Option<&'a [String]>),
    Query { statement: &'a str, params: &'a [Param], limit: u32 },
}

/// What it got; one variant per [`Op`].
pub(crate) enum Done {
    Checked,
    Catalog(Catalog),
    Rows(RowSet),
}

impl Done {
    pub(crate) fn into_catalog(self) -> Result<Catalog, SqlError> {
        match self {
            Done::Catalog(catalog) => Ok(catalog),
            _ => Err(mismatch()),
        }
    }

    pub(crate) fn into_rows(self) -> Result<RowSet, SqlError> {
        match self {
            Done::Rows(rows) => Ok(rows),
            _ => Err(mismatch()),
        }
    }
}

/// Cannot happen: each backend answers an op with its own variant.
fn mismatch() -> SqlError {
    SqlError::Unavailable("internal error: the database session answered a different request".to_owned())
}

enum Session {
    Postgres(PgSession),
    Mysql(MySession),
}

impl Session {
    async fn open(target: &Target, pg_tls: Option<&MakeRustlsConnect>) -> Result<Session, Fault> {
        let opening = async {
            match target.dialect {
                Dialect::Postgresql => PgSession::open(target, pg_tls).await.map(Session::Postgres),
                Dialect::Mysql => MySession::open(target).await.map(Session::Mysql),
            }
        };
        match tokio::time::timeout(target.connect_timeout, opening).await {
            Ok(opened) => opened,
            Err(_) => Err(Fault::Connection(format!(
                "connecting and signing in took longer than connect_timeout ({:.1} s)",
                target.connect_timeout.as_secs_f64()
            ))),
        }
    }

    async fn run(&mut self, target: &Target, op: &Op<'_>) -> Result<Done, Fault> {
        match (self, op) {
            (Session::Postgres(session), Op::Check) => session.check(target).await.map(|()| Done::Checked),
            (Session::Postgres(session), Op::Catalog(schemas)) => session.catalog(target, *schemas).await.map(Done::Catalog),
            (Session::Postgres(session), Op::Query { statement, params, limit }) => {
                session.query(target, statement, params, *limit).await.map(Done::Rows)
            }
            (Session::Mysql(session), Op::Check) => session.check(target).await.map(|()| Done::Checked),
            (Session::Mysql(session), Op::Catalog(schemas)) => session.catalog(target, *schemas).await.map(Done::Catalog),
            (Session::Mysql(session), Op::Query { statement, params, limit }) => {
                session.query(target, statement, params, *limit).await.map(Done::Rows)
            }
        }
    }

    fn usable(&self) -> bool {
        match self {
            Session::Postgres(session) => session.usable(),
            Session::Mysql(session) => session.usable(),
        }
    }
}

/// A session in the slot.
struct Live {
    session: Session,
}

/// The session slot of one database, with what it takes to fill it.
pub(crate) struct Connector {
    pub target: Target,
    pg_tls: Option<MakeRustlsConnect>,
    slot: Mutex<Option<Live>>,
    retries: AtomicU64,
}

impl Connector {
    pub(crate) fn new(target: Target, pg_tls: Option<MakeRustlsConnect>) -> Self {
        Connector { target, pg_tls, slot: Mutex::new(None), retries: AtomicU64::new(0) }
    }

    pub(crate) fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Runs `op`, reconnecting on connection failures until the retry budget is spent.
    pub(crate) async fn call(&self, op: Op<'_>) -> Result<Done, SqlError> {
        let mut slot = self.slot.lock().await;
        let started = Instant::now();
        let mut attempt: u32 = 0;
        loop {
            let detail = match self.attempt(&mut slot, &op).await {
                Ok(done) => return Ok(done),
                Err(Fault::Final(error) | Fault::Fatal(error)) => return Err(error),
                Err(Fault::Connection(detail)) => detail,
            };
            let delay = backoff(attempt);
            let spent = started.elapsed();
            if spent + delay > self.target.retry_budget {
                return Err(SqlError::Unavailable(format!(
                    "cannot reach {}: {detail} (retried {attempt} times over {:.1} s)",
                    self.target.shown,
                    spent.as_secs_f64()
                )));
            }
            self.retries.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                database = %self.target.shown,
                attempt = attempt + 1,
                retry_in_ms = delay.as_millis() as u64,
                error = %detail,
                "database connection failed, reconnecting"
            );
            tokio::time::sleep(delay).await;
            attempt = attempt.saturating_add(1);
        }
    }

    /// One attempt: connect if needed, run, and keep the session only when it is still good.
    /// The session is taken out of the slot while it runs, so a call cancelled midway (its
    /// caller stopped waiting) drops it, closing the connection with whatever transaction or
    /// half-read rows it held, rather than leaving it open until some next call.
    async fn attempt(&self, slot: &mut Option<Live>, op: &Op<'_>) -> Result<Done, Fault> {
        let mut live = match slot.take() {
            Some(live) => live,
            None => {
                let session = Session::open(&self.target, self.pg_tls.as_ref()).await?;
                tracing::debug!(database = %self.target.shown, "database session opened");
                Live { session }
            }
        };
        let limit = self.target.statement_timeout.saturating_mul(2).saturating_add(ATTEMPT_MARGIN);
        let outcome = match tokio::time::timeout(limit, live.session.run(&self.target, op)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(Fault::Connection(format!("no answer within {:.1} s", limit.as_secs_f64()))),
        };
        let keep = match &outcome {
            Ok(_) | Err(Fault::Final(_)) => live.session.usable(),
            Err(Fault::Fatal(_) | Fault::Connection(_)) => false,
        };
        if keep {
            *slot = Some(live);
        }
        outcome
    }
}

/// The pause before retry number `attempt + 1`: half the capped exponential step plus a
/// random part of the other half, so that connectors failing together do not retry in
/// lockstep.
fn backoff(attempt: u32) -> Duration {
    let step = FIRST_DELAY.saturating_mul(1u32 << attempt.min(16)).min(MAX_DELAY);
    let half = step / 2;
    half + half.mul_f64(unit_random())
}

/// A number in [0, 1). Jitter needs no quality: a randomly keyed hasher is enough.
fn unit_random() -> f64 {
    let bits = RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_100_ms_to_2_s_with_jitter() {
        for attempt in 0..40 {
            let step = (100u128 << attempt.min(16)).min(2_000);
            let delay = backoff(attempt).as_millis();
            assert!(delay >= step / 2 && delay <= step, "attempt {attempt}: {delay} ms outside [{}, {step}]", step / 2);
        }
        let pauses: std::collections::HashSet<Duration> = (0..32).map(|_| backoff(5)).collect();
        assert!(pauses.len() > 1);
    }
}
