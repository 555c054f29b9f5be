//! The source and the sink of each language (`examples/plugins/*-sequence-source` and
//! `*-webhook-sink`, the same logic in each), measured through the host's runtime: records
//! per second polled from the source, and written to the sink and flushed to a local
//! endpoint that answers `200` at once.

use std::time::{Duration, Instant};

use turnpike_runtime::{input_len, HttpGrant, InputBatch, InstanceLabels, InstanceLimits, Plugin, SinkInstance, SourceInstance};

/// Records a poll may return, and records per written batch.
pub const BATCH: u32 = 256;
/// Polls or writes per round.
const CALLS: usize = 40;
/// Rounds; the fastest is reported.
const ROUNDS: usize = 5;
/// Batches written between two flushes (one POST per flush).
const BATCHES_PER_FLUSH: usize = 4;

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "bench".into(), plugin: "bench".into() }
}

/// Nanoseconds per record polled, best round, and how many times an instance faulted (its
/// memory cap, say) and was replaced, as the host's supervisor would (timed too).
pub async fn source_ns(plugin: &Plugin) -> anyhow::Result<(f64, usize)> {
    let config = format!(r#"{{"name":"bench","per_poll":{BATCH}}}"#);
    let fresh = || SourceInstance::create(plugin, &config, None, "bench", labels(), InstanceLimits::default());
    let mut source = fresh().await?;
    let first = source.poll(BATCH).await?;
    anyhow::ensure!(input_len(&first.batch) == BATCH as usize, "the source gave {} records, not {BATCH}", input_len(&first.batch));
    let (mut best, mut replaced) = (Duration::MAX, 0);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS {
            match source.poll(BATCH).await {
                Ok(polled) => drop(std::hint::black_box(polled)),
                Err(e) if source.is_poisoned() && replaced < CALLS => {
                    eprintln!("  source instance replaced after: {e}");
                    source = fresh().await?;
                    replaced += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
        best = best.min(start.elapsed());
    }
    Ok((best.as_nanos() as f64 / (CALLS * BATCH as usize) as f64, replaced))
}

/// Nanoseconds per record written to the sink and flushed to `endpoint` (a local server), best
/// round, and how many times an instance faulted and was replaced (timed too).
pub async fn sink_ns(plugin: &Plugin, batch: &InputBatch, endpoint: std::net::SocketAddr) -> anyhow::Result<(f64, usize)> {
    let limits = InstanceLimits { http: HttpGrant::parse(&[endpoint.to_string()]).map_err(anyhow::Error::msg)?, ..InstanceLimits::default() };
    let config = format!(r#"{{"url":"http://{endpoint}/bench"}}"#);
    let fresh = || SinkInstance::create(plugin, &config, labels(), limits.clone());
    let mut sink = fresh().await?;
    let rejected = sink.write(batch).await?;
    anyhow::ensure!(rejected.is_empty(), "the sink rejected records: {:?}", rejected.first());
    sink.flush().await?;
    let (mut best, mut replaced) = (Duration::MAX, 0);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for call in 1..=CALLS {
            let result = match sink.write(batch).await {
                Ok(rejected) => Ok(drop(std::hint::black_box(rejected))),
                Err(e) => Err(e),
            };
            let result = if result.is_ok() && call % BATCHES_PER_FLUSH == 0 { sink.flush().await } else { result };
            match result {
                Ok(()) => {}
                Err(e) if sink.is_poisoned() && replaced < CALLS => {
                    eprintln!("  sink instance replaced after: {e}");
                    sink = fresh().await?;
                    replaced += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
        best = best.min(start.elapsed());
    }
    Ok((best.as_nanos() as f64 / (CALLS * input_len(batch)) as f64, replaced))
}

/// A local HTTP endpoint answering `200` to every request once it has read the body.
pub async fn endpoint() -> anyhow::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let app = axum::Router::new().fallback(|body: axum::body::Bytes| async move { format!("{} bytes", body.len()) }).layer(axum::extract::DefaultBodyLimit::disable());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(address)
}
