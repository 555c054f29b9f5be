//! Every plugin kind in Python and JavaScript, on a real broker, built from the examples with
//! the real toolchains: sources resume after `kill -9` with nothing missing, sinks flush
//! before their offsets are committed and lose nothing while the endpoint fails, transforms
//! call a granted HTTP endpoint and are refused another, and an exception is a fault.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

const LANGS: [&str; 2] = ["python", "js"];

/// `plugins:` entries for the examples named, built.
fn plugin_section(names: &[String]) -> Result<String> {
    let mut section = String::from("plugins:\n");
    for name in names {
        section.push_str(&format!("  {name}: {{ path: {} }}\n", example(name)?.display()));
    }
    Ok(section)
}

fn numbers(records: &[(String, String)]) -> BTreeSet<u64> {
    records.iter().filter_map(|(k, _)| k.parse().ok()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_javascript_sources_resume_after_kill_9_with_nothing_missing() -> Result<()> {
    // Far more than a source produces before the kill, however fast it runs: killed mid-stream.
    const LIMIT: u64 = 1_000_000;
    let positions_topic = unique("positions");
    let out: Vec<String> = LANGS.iter().map(|l| unique(&format!("seq-{l}"))).collect();
    let names = LANGS.map(|l| format!("seq-{l}"));
    let mut connectors = String::new();
    for ((lang, topic), name) in LANGS.iter().zip(&out).zip(&names) {
        create_topic(topic, 1).await?;
        connectors.push_str(&format!(
            "- name: {name}\n  output_topic: {topic}\n  source:\n    plugin: {lang}-sequence-source\n    poll_interval_ms: 100\n    config: {{ name: {lang}, per_poll: 20, limit: {LIMIT} }}\n"
        ));
    }
    let sections = format!("source_positions_topic: {positions_topic}\n{}", plugin_section(&LANGS.map(|l| format!("{l}-sequence-source")))?);
    let config = host_config_with(free_port(), &sections, &connectors);
    let dir = std::env::temp_dir().join(unique("turnpike-lang-sources"));
    let mut first = HostProcess::start(&dir.join("first"), &config)?;
    for name in &names {
        first.wait_state(name, "RUNNING", Duration::from_secs(180))?;
    }
    // Killed only once each source has a position saved (saves come every second).
    saved_positions(&positions_topic, &names.each_ref().map(String::as_str), Duration::from_secs(60)).await.with_context(|| first.log_text())?;
    first.kill_hard()?;
    let produced: Vec<i64> = out.iter().map(|t| end_offset(t)).collect::<Result<_>>()?;
    // What the second host will read: the last save of each, now that nothing saves.
    let last_saved = all_saved_positions(&positions_topic, Duration::from_secs(60)).await?;

    // A new host with a new state directory: positions live in Kafka.
    let mut second = HostProcess::start(&dir.join("second"), &config)?;
    for (((lang, topic), name), produced) in LANGS.iter().zip(&out).zip(&names).zip(produced) {
        let produced = usize::try_from(produced)?;
        assert!((produced as u64) + 200 < LIMIT, "{lang}: killed mid-stream ({produced} records of {LIMIT})");
        second.wait_state(name, "RUNNING", Duration::from_secs(180))?;
        let saved_at: u64 = last_saved.get(name).with_context(|| format!("{lang}: no saved position"))?.parse()?;
        // What the first host produced and 200 more, so the second host's records are read.
        let all = consume_until(topic, Duration::from_secs(120), |got| got.len() >= produced + 200).await?;
        assert!(all.len() >= produced + 200, "{lang}: the second host produced too little ({} records); log:\n{}", all.len(), second.log_text());
        let keys: Vec<u64> = all.iter().map(|(k, _)| k.parse()).collect::<Result<_, _>>()?;
        assert!(keys[..produced].iter().copied().eq(0..produced as u64), "{lang}: the first host counted 0..{produced} without a break");
        let top = keys.iter().copied().max().unwrap_or(0);
        assert_eq!(numbers(&all), (0..=top).collect(), "{lang}: 0..={top}, no gap");
        // The second host's records start at the first break at or after what the first host
        // produced (a request the broker took just before the kill may land after the count).
        let restart = (produced.max(1)..keys.len()).find(|&i| keys[i] != keys[i - 1] + 1);
        let resumed_at = restart.map_or(keys[produced], |i| keys[i]);
        let duplicates = restart.map_or(0, |i| i - resumed_at as usize);
        println!("{lang} source kill -9: {produced} records before the kill, last position saved {saved_at}, resumed at {resumed_at}, {duplicates} duplicates");
        // At or past it: a save the broker took just before the kill may land after the read.
        assert!(resumed_at > saved_at, "{lang}: resumed after the last position saved before the kill ({saved_at}), not from the start or an older one; second host:\n{}", second.log_text());
        assert!(all.iter().all(|(k, v)| *v == format!(r#"{{"n":{k},"source":"{lang}"}}"#)), "{lang}: {:?}", &all[..2]);
    }
    assert!(second.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_javascript_sinks_commit_only_what_they_flushed_and_lose_nothing_while_the_endpoint_fails() -> Result<()> {
    const RECORDS: usize = 50;
    let failing = Arc::new(AtomicBool::new(true));
    let down = failing.clone();
    let hooks = TestServer::start(move |_| if down.load(Ordering::SeqCst) { json(503, "busy") } else { json(200, "ok") })?;
    let topic = unique("lang-sink-in");
    create_topic(&topic, 1).await?;
    let records: Vec<(String, String)> = (0..RECORDS).map(|i| (format!("k{i}"), format!(r#"{{"i":{i}}}"#))).collect();
    produce(&producer()?, &topic, &records).await?;
    let mut connectors = String::new();
    for lang in LANGS {
        connectors.push_str(&format!(
            "- name: hook-{lang}\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: {lang}-webhook-sink\n    flush_interval_ms: 200\n    config: {{ url: \"{}\" }}\n",
            hooks.port,
            hooks.url(&format!("/{lang}"))
        ));
    }
    let sections = plugin_section(&LANGS.map(|l| format!("{l}-webhook-sink")))?;
    let dir = std::env::temp_dir().join(unique("turnpike-lang-sinks"));
    let host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connectors))?;
    // While the endpoint fails, each sink keeps trying to flush and nothing is committed.
    wait_until("three refused flushes from each sink", Duration::from_secs(180), || {
        let got = hooks.received();
        Ok(LANGS.iter().all(|l| got.iter().filter(|r| r.target == format!("/{l}") && r.status == 503).count() >= 3).then_some(()))
    })
    .with_context(|| host.log_text())?;
    for lang in LANGS {
        let (_, offsets) = host.get(&format!("/v1/connectors/hook-{lang}/offsets"))?;
        let committed = &offsets["partitions"][0]["committed"];
        assert!(committed.is_null() || committed == 0, "{lang}: nothing committed while the flush fails: {offsets}");
    }
    failing.store(false, Ordering::SeqCst);
    for lang in LANGS {
        let delivered = wait_until(&format!("{lang}: every record delivered"), Duration::from_secs(120), || {
            let mut offsets = BTreeSet::new();
            for r in hooks.received().iter().filter(|r| r.target == format!("/{lang}") && r.status == 200) {
                let posted: serde_json::Value = serde_json::from_slice(&r.body)?;
                offsets.extend(posted.as_array().into_iter().flatten().filter_map(|p| p["offset"].as_u64()));
            }
            Ok((offsets.len() == RECORDS).then_some(offsets))
        })
        .with_context(|| host.log_text())?;
        assert_eq!(delivered, (0..RECORDS as u64).collect(), "{lang}");
        wait_until(&format!("{lang}: offsets committed after the flush"), Duration::from_secs(60), || {
            let (_, offsets) = host.get(&format!("/v1/connectors/hook-{lang}/offsets"))?;
            Ok((offsets["partitions"][0]["committed"] == RECORDS).then_some(()))
        })?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_javascript_transforms_call_a_granted_endpoint_and_are_refused_another() -> Result<()> {
    let api = TestServer::start(|req| match req.target.rsplit('/').next() {
        Some("missing") => json(404, "{}"),
        Some(key) => json(200, &format!(r#"{{"tier":"gold-{key}"}}"#)),
        None => json(400, "{}"),
    })?;
    let topic = unique("lookup-in");
    create_topic(&topic, 1).await?;
    let mut connectors = String::new();
    for lang in LANGS {
        // One connector granted the endpoint, one granted only another port.
        for (name, grant) in [(format!("lookup-{lang}"), api.port), (format!("refused-{lang}"), free_port())] {
            connectors.push_str(&format!(
                "- name: {name}\n  topics: [{topic}]\n  output_topic: {topic}-{name}\n  http: {{ allow: [\"127.0.0.1:{grant}\"] }}\n  restart: {{ enabled: false }}\n  transforms:\n    - plugin: {lang}-lookup-transform\n      config: {{ url: \"{}\", field: customer }}\n",
                api.url("/customers")
            ));
        }
    }
    let sections = plugin_section(&LANGS.map(|l| format!("{l}-lookup-transform")))?;
    let dir = std::env::temp_dir().join(unique("turnpike-lang-lookup"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connectors))?;
    for lang in LANGS {
        host.wait_state(&format!("lookup-{lang}"), "RUNNING", Duration::from_secs(180))?;
    }
    let input = [("c1", r#"{"order":1}"#), ("missing", r#"{"order":2}"#), ("c3", r#"{"order":3}"#)].map(|(k, v)| (k.to_owned(), v.to_owned()));
    produce(&producer()?, &topic, &input).await?;
    for lang in LANGS {
        let mut out = consume_until(&format!("{topic}-lookup-{lang}"), Duration::from_secs(60), |got| got.len() >= 3).await?;
        out.sort();
        let expected = [("c1", r#"{"order":1,"customer":{"tier":"gold-c1"}}"#), ("c3", r#"{"order":3,"customer":{"tier":"gold-c3"}}"#), ("missing", r#"{"order":2}"#)];
        assert_eq!(out, expected.map(|(k, v)| (k.to_owned(), v.to_owned())), "{lang}: looked up, the 404 passed unchanged");
        let status = host.wait_state(&format!("refused-{lang}"), "FAILED", Duration::from_secs(120))?;
        let message = status["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("is not in the connector's http.allow list"), "{lang}: the host's refusal reaches the status: {status}");
    }
    let reached: Vec<String> = api.received().iter().map(|r| format!("{} {}", r.method, r.target)).collect();
    assert_eq!(reached.len(), 6, "one GET per record from each granted connector, none from the refused ones: {reached:?}");
    Ok(())
}

/// A transform that throws on a record whose value is `POISON`, in `lang`, as a project in `dir`.
fn poisoned_project(lang: &str, dir: &Path) -> Result<PathBuf> {
    let project = dir.join(format!("poisoned-{lang}"));
    std::fs::create_dir_all(&project)?;
    match lang {
        "python" => std::fs::write(
            project.join("plugin.py"),
            "from turnpike import Transform, export\n\n\nclass Poisoned(Transform):\n    def transform(self, record):\n        if record.value == b\"POISON\":\n            raise ValueError(\"a bug in the plugin\")\n        return record\n\n\nexport(Poisoned)\n",
        )?,
        _ => std::fs::write(
            project.join("plugin.js"),
            "import { Transform } from \"turnpike-sdk\";\n\nexport default class Poisoned extends Transform {\n  transform(record) {\n    if (record.text() === \"POISON\") throw new TypeError(\"a bug in the plugin\");\n    return record;\n  }\n}\n",
        )?,
    }
    Ok(project)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exception_in_a_python_or_javascript_transform_is_a_fault_and_only_its_record_is_dead_lettered() -> Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-lang-poison"));
    let topic = unique("poison-lang-in");
    create_topic(&topic, 1).await?;
    let mut plugins = String::from("plugins:\n");
    let mut connectors = String::new();
    for lang in LANGS {
        let wasm = build(&poisoned_project(lang, &dir)?)?;
        plugins.push_str(&format!("  poisoned-{lang}: {{ path: {} }}\n", wasm.display()));
        connectors.push_str(&format!(
            "- name: poisoned-{lang}\n  topics: [{topic}]\n  output_topic: {topic}-{lang}\n  errors: {{ tolerance: all, dead_letter_topic: {topic}-{lang}-dlq }}\n  transforms:\n    - plugin: poisoned-{lang}\n"
        ));
    }
    let mut host = HostProcess::start(&dir.join("host"), &host_config_with(free_port(), &plugins, &connectors))?;
    for lang in LANGS {
        host.wait_state(&format!("poisoned-{lang}"), "RUNNING", Duration::from_secs(180))?;
    }
    let records: Vec<(String, String)> = (0..20).map(|i| (format!("k{i}"), if i == 7 { "POISON".to_owned() } else { format!("v{i}") })).collect();
    produce(&producer()?, &topic, &records).await?;
    for lang in LANGS {
        let out = consume_until(&format!("{topic}-{lang}"), Duration::from_secs(60), |got| got.len() >= 19).await?;
        let dead = consume_until(&format!("{topic}-{lang}-dlq"), Duration::from_secs(60), |got| !got.is_empty()).await?;
        assert_eq!(distinct_and_duplicates(&out).0, 19, "{lang}: every other record");
        assert_eq!(dead, [("k7".to_owned(), "POISON".to_owned())], "{lang}: only the poisoned record is dead-lettered");
        let (_, status) = host.get(&format!("/v1/connectors/poisoned-{lang}"))?;
        assert!(status["faults"]["trap"].as_u64().unwrap_or(0) >= 1, "{lang}: the exception is a fault (the instance trapped), not a record error: {status}");
        assert_eq!(status["records_dead_lettered"], 1, "{lang}: {status}");
    }
    Ok(())
}
