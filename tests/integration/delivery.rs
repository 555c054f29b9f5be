//! (b) At-least-once across a hard kill: no record lost, duplicates counted.

use std::time::Duration;

use turnpike_tests::*;

const RECORDS: usize = 20_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_host_killed_mid_stream_loses_no_record() -> anyhow::Result<()> {
    let (topic_in, topic_out) = (unique("orders"), unique("orders-masked"));
    create_topic(&topic_in, 3).await?;
    create_topic(&topic_out, 3).await?;
    let connector = format!(
        r#"- name: mask-orders
  topics: [{topic_in}]
  output_topic: {topic_out}
  batch: {{ max_records: 200, max_wait_ms: 10 }}
  transforms:
    - plugin: pii-mask
      config: {{ fields: [email] }}
"#
    );
    let dir = std::env::temp_dir().join(unique("turnpike-kill"));
    let config = host_config(free_port(), &connector);
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("mask-orders", "RUNNING", Duration::from_secs(120))?;

    // Input keeps arriving in the background while the host is killed and restarted.
    let producing = {
        let topic_in = topic_in.clone();
        tokio::spawn(async move {
            let producer = producer()?;
            for chunk in (0..RECORDS).collect::<Vec<_>>().chunks(500) {
                let records: Vec<_> = chunk.iter().map(|i| (format!("o{i}"), format!(r#"{{"order":{i},"email":"u{i}@x.io"}}"#))).collect();
                produce(&producer, &topic_in, &records).await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            anyhow::Ok(())
        })
    };

    // Kill once the host is visibly mid-stream.
    let seen = consume_until(&topic_out, Duration::from_secs(120), |got| got.len() >= RECORDS / 4).await?;
    assert!(seen.len() >= RECORDS / 4, "host made progress before the kill; log:\n{}", host.log_text());
    host.kill_hard()?;
    let first_log = host.log_text();

    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("mask-orders", "RUNNING", Duration::from_secs(120))?;
    producing.await??;

    let out = consume_until(&topic_out, Duration::from_secs(240), distinct_keys_reach(RECORDS)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&out);
    println!("hard kill mid-stream: {RECORDS} inputs, {distinct} distinct outputs, {duplicates} duplicates (re-processed after the kill)");
    assert_eq!(distinct, RECORDS, "no record lost; first run log:\n{first_log}\nsecond run log:\n{}", host.log_text());
    for (k, v) in &out {
        assert!(v.contains(r#""email":"***""#), "{k} masked: {v}");
    }
    assert!(host.stop()?.success());
    Ok(())
}
