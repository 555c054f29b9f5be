//! Kafka Connect's transforms as a chain with predicates on real Kafka (#19): five steps, each
//! with its own predicate; records a predicate does not select pass that step unchanged, and
//! a record that fails a step goes through the error policy with the step named.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use turnpike_tests::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_five_step_chain_with_predicates_transforms_filters_and_dead_letters() -> anyhow::Result<()> {
    let (orders, refunds, out, dlq) = (unique("orders"), unique("refunds"), unique("chain-out"), unique("chain-dlq"));
    create_topic(&orders, 1).await?;
    create_topic(&refunds, 1).await?;
    let customer = r#"{"email":"ann@example.com","name":"Ann"}"#;
    let producer = producer()?;
    produce(
        &producer,
        &orders,
        &[
            ("o1".into(), format!(r#"{{"id":1,"status":"open","customer":{customer},"amount":"12.5"}}"#)),
            ("o2".into(), format!(r#"{{"id":2,"status":"cancelled","customer":{customer},"amount":"3"}}"#)),
            ("o3".into(), "not json".into()),
        ],
    )
    .await?;
    produce(&producer, &refunds, &[("r1".into(), format!(r#"{{"id":9,"status":"open","customer":{customer},"amount":"7"}}"#))]).await?;
    produce_with_header(&orders, "o4", &format!(r#"{{"id":4,"status":"open","customer":{customer},"amount":"1"}}"#), ("keep-email", "yes")).await?;

    let connector = format!(
        r#"- name: chain
  topics: [{orders}, {refunds}]
  output_topic: {out}
  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}
  transforms:
    - plugin: filter
      predicate: {{ json_path: "$[?@.status == 'cancelled']" }}
    - plugin: cast
      predicate: {{ topic_matches: "orders.*" }}
      config: {{ spec: {{ amount: float64 }} }}
    - plugin: mask-field
      predicate: {{ has_header: keep-email, negate: true }}
      config: {{ fields: [customer.email] }}
    - plugin: insert-field
      config: {{ topic_field: source.topic, static_field: pipeline, static_value: turnpike }}
    - plugin: header-from
      config: {{ fields: [id], headers: [order-id], operation: copy }}
"#
    );
    let dir = std::env::temp_dir().join(unique("turnpike-chain"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("chain", "RUNNING", Duration::from_secs(120))?;

    // o3 is not JSON: the filter's predicate does not select it (it passes), cast fails it.
    let dead = read_with_headers(&dlq, 1, Duration::from_secs(60)).await?;
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!((dead[0].key.as_str(), dead[0].value.as_str()), ("o3", "not json"));
    assert_eq!(dead[0].headers["turnpike.error.stage"], "transforms[1]");
    assert_eq!(dead[0].headers["turnpike.error.plugin"], "cast");
    assert!(dead[0].headers["turnpike.error.message"].contains("not JSON"), "{:?}", dead[0].headers);

    // Once all five are read and their outputs acknowledged, the output topic holds all there
    // will be: a fourth record would be o2, which the filter must have dropped.
    wait_until("the five records through the chain", Duration::from_secs(60), || {
        let status = host.get("/v1/connectors/chain")?.1;
        Ok((status["records_in"] == 5 && status["records_out"].as_u64() >= Some(3)).then_some(()))
    })?;
    let got = read_with_headers(&out, 4, Duration::from_secs(10)).await?;
    assert_eq!(got.len(), 3, "o1, r1 and o4 come out, o2 is filtered and o3 dead-lettered: {got:?}\nlog:\n{}", host.log_text());
    let by_key: HashMap<&str, (Value, &HashMap<String, String>)> = got.iter().map(|r| (r.key.as_str(), (serde_json::from_str(&r.value).unwrap_or(Value::Null), &r.headers))).collect();
    let masked = json!({"email": "", "name": "Ann"});
    let expected = |id: i64, amount: Value, customer: &Value, topic: &str| json!({"id": id, "status": "open", "customer": customer, "amount": amount, "source": {"topic": topic}, "pipeline": "turnpike"});
    // Cast ran only on the orders topic; the refund's amount is still text.
    assert_eq!(by_key["o1"].0, expected(1, json!(12.5), &masked, &orders));
    assert_eq!(by_key["r1"].0, expected(9, json!("7"), &masked, &refunds));
    // The record with the header skipped the masking step, and only it.
    let clear: Value = serde_json::from_str(customer)?;
    assert_eq!(by_key["o4"].0, expected(4, json!(1.0), &clear, &orders));
    assert_eq!(by_key["o1"].1.get("order-id").map(String::as_str), Some("1"));
    assert_eq!(by_key["o4"].1.get("keep-email").map(String::as_str), Some("yes"), "headers pass the chain");

    let status = host.get("/v1/connectors/chain")?.1;
    // A dead letter is not an output (it was counted as one before).
    let counts = ["records_in", "records_out", "records_failed", "records_dead_lettered"].map(|k| status[k].as_u64());
    assert_eq!(counts, [Some(5), Some(3), Some(1), Some(1)], "{status}");
    assert!(host.stop()?.success(), "graceful stop; log:\n{}", host.log_text());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_predicate_is_refused_with_every_problem_keyed() -> anyhow::Result<()> {
    let host = HostProcess::start(&std::env::temp_dir().join(unique("turnpike-predicate")), &bare_host_config())?;
    wait_healthy(&host)?;
    let body = json!({
        "name": "bad", "topics": ["in"], "output_topic": "out",
        "transforms": [{"plugin": "filter", "predicate": {"topic_matches": "(", "json_path": "$["}}]
    });
    let (code, answer) = http_json(&host.admin, "POST", "/v1/connectors/bad/validate", &body)?;
    assert_eq!(code, 422, "{answer}");
    let keys: Vec<&str> = answer["problems"].as_array().into_iter().flatten().filter_map(|p| p["key"].as_str()).collect();
    assert!(keys.contains(&"connector.transforms[0].predicate.topic_matches") && keys.contains(&"connector.transforms[0].predicate.json_path"), "{answer}");
    Ok(())
}

/// Produces one record with one header, waiting for its acknowledgement.
async fn produce_with_header(topic: &str, key: &str, value: &str, (name, header): (&str, &str)) -> anyhow::Result<()> {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::FutureRecord;
    let headers = OwnedHeaders::new().insert(Header { key: name, value: Some(header) });
    let record = FutureRecord::to(topic).key(key).payload(value).headers(headers);
    producer()?.send(record, Duration::from_secs(30)).await.map_err(|(e, _)| anyhow::anyhow!("delivery: {e}"))?;
    Ok(())
}
