//! (a) 10,000 JSON records through `pii-mask` on real Kafka.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::value::RawValue;
use turnpike_tests::*;

const RECORDS: usize = 10_000;

fn input(i: usize) -> String {
    // Numbers written in forms a re-serializer could change (10.50, 1e3) prove that fields
    // the plugin does not touch pass through byte for byte.
    format!(
        r#"{{"id":"r{i}","email":"user{i}@example.com","user":{{"name":"User {i}","ssn":"123-45-{:04}","tier":{}}},"cards":[{{"number":"4111111111111111","brand":"visa"}},{{"number":"5500000000000004","brand":"mc"}}],"price":10.50,"big":1e3,"tags":["a","b"],"note":null}}"#,
        i % 10_000,
        i % 5
    )
}

type Fields = serde_json::Map<String, serde_json::Value>;

#[tokio::test(flavor = "multi_thread")]
async fn pii_mask_masks_10000_records_and_leaves_other_fields_byte_identical() -> anyhow::Result<()> {
    let (topic_in, topic_out) = (unique("customers"), unique("customers-masked"));
    create_topic(&topic_in, 3).await?;
    create_topic(&topic_out, 3).await?;
    let records: Vec<(String, String)> = (0..RECORDS).map(|i| (format!("r{i}"), input(i))).collect();
    produce(&producer()?, &topic_in, &records).await?;

    let connector = format!(
        r#"- name: mask
  topics: [{topic_in}]
  output_topic: {topic_out}
  transforms:
    - plugin: pii-mask
      config:
        fields: [email, user.ssn, {{ path: "cards[*].number", mode: partial }}]
"#
    );
    let dir = std::env::temp_dir().join(unique("turnpike-mask"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("mask", "RUNNING", Duration::from_secs(120))?;

    let out = consume_until(&topic_out, Duration::from_secs(180), distinct_keys_reach(RECORDS)).await?;
    let by_key: HashMap<&str, &str> = out.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(by_key.len(), RECORDS, "every input has an output; log:\n{}", host.log_text());

    for (key, original) in &records {
        let masked = by_key[key.as_str()];
        let before: HashMap<String, Box<RawValue>> = serde_json::from_str(original)?;
        let after: HashMap<String, Box<RawValue>> = serde_json::from_str(masked)?;
        assert_eq!(before.len(), after.len(), "{key}: same fields");
        for (field, raw) in &before {
            match field.as_str() {
                "email" => assert_eq!(after[field].get(), r#""***""#),
                "user" => {
                    let (b, a): (Fields, Fields) = (serde_json::from_str(raw.get())?, serde_json::from_str(after[field].get())?);
                    assert_eq!(a["ssn"], "***", "{key}");
                    assert_eq!((&a["name"], &a["tier"]), (&b["name"], &b["tier"]), "{key}");
                }
                "cards" => assert_eq!(
                    after[field].get(),
                    r#"[{"number":"************1111","brand":"visa"},{"number":"************0004","brand":"mc"}]"#
                ),
                _ => assert_eq!(after[field].get(), raw.get(), "{key}.{field} must be byte-identical"),
            }
        }
    }
    // An output is counted once its acknowledgement is handled, which can come just after
    // it is readable.
    let status = wait_until("every output counted", Duration::from_secs(30), || {
        let status = host.get("/v1/connectors/mask")?.1;
        Ok((status["records_out"] == RECORDS).then_some(status))
    })?;
    assert_eq!(status["records_in"], RECORDS);
    assert_eq!(status["records_out"], RECORDS);
    assert_eq!(status["records_failed"], 0);
    assert!(host.stop()?.success(), "graceful stop; log:\n{}", host.log_text());
    Ok(())
}
