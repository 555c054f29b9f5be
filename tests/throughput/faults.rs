//! Fault containment under load: plugins that trap, loop, eat memory, flood output, hang in
//! `create`, or are not Turnpike plugins at all, beside a well-behaved neighbour. The host
//! survives, each faulty connector says what happened, and the neighbour keeps pace with its
//! feed while they fail and restart around it.

use std::time::Duration;

use anyhow::Context;
use turnpike_tests::*;

use crate::neighbour::{feed, one_at_a_time, traffic_runtime, wait_keeping_up, Fed, Rates, RATE};

/// How long the neighbour is measured beside the faulty connectors.
const WINDOW: Duration = Duration::from_secs(8);

const STEADY: &str = "- name: steady\n  topics: [STEADY_IN]\n  output_topic: STEADY_IN-out\n  batch: { max_wait_ms: 5 }\n  transforms:\n    - plugin: identity\n";

/// A connector failing with `plugin`, restarted every 0.5–1 s for as long as the test runs.
fn faulty(name: &str, plugin: &str, config: &str, extra: &str) -> String {
    format!(
        "- name: {name}\n  topics: [FAULT_IN]\n  output_topic: FAULT_IN-{name}\n  restart: {{ base_ms: 500, max_ms: 1000, max_failures: 1000 }}\n{extra}  transforms:\n    - plugin: {plugin}\n      config: {config}\n"
    )
}

#[test]
fn faulty_plugins_are_contained_and_a_neighbour_keeps_its_throughput() -> anyhow::Result<()> {
    let _alone = one_at_a_time();
    let traffic = traffic_runtime()?;
    let (faulty_wasm, wrong_world_wasm) = fixtures()?;
    let dir = std::env::temp_dir().join(unique("turnpike-faults"));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("core.wasm"), b"\0asm\x01\0\0\0")?;
    std::fs::write(dir.join("random.wasm"), (0..4096).map(|_| rand::random::<u8>()).collect::<Vec<_>>())?;
    let (steady_in, fault_in) = (unique("steady"), unique("faults"));
    traffic.block_on(async {
        create_topic(&steady_in, 1).await?;
        create_topic(&fault_in, 1).await?;
        produce(&producer()?, &fault_in, &[("k".to_owned(), "boom".to_owned()), ("k2".to_owned(), "boom".to_owned())]).await
    })?;

    // The neighbour beside every kind of broken plugin, in one host.
    let cases = [
        ("trap", "faulty", r#"{ fault: trap }"#, "", "trap"),
        ("loop", "faulty", r#"{ fault: loop }"#, "  limits: { batch_timeout_ms: 300 }\n", "timeout"),
        ("memory", "faulty", r#"{ fault: memory }"#, "  limits: { memory_mib: 16 }\n", "memory_limit"),
        ("huge", "faulty", r#"{ fault: huge_output }"#, "", "memory_limit"),
        ("flood", "faulty", r#"{ fault: huge_output, output_mib: 64 }"#, "  limits: { memory_mib: 1024, max_output_mib: 16 }\n", "output_limit"),
        ("slowcreate", "faulty", r#"{ fault: slow_create }"#, "  limits: { create_timeout_ms: 300 }\n", "timeout"),
        ("wrongworld", "wrongworld", "{}", "", "wrong_world"),
        ("coremodule", "coremodule", "{}", "", "core_module"),
        ("random", "random", "{}", "", "invalid_component"),
    ];
    let mut connectors = STEADY.replace("STEADY_IN", &steady_in);
    for (name, plugin, config, extra, _) in cases {
        connectors.push_str(&faulty(name, plugin, config, extra).replace("FAULT_IN", &fault_in));
    }
    let sections = format!(
        "plugins:\n  faulty: {{ path: {} }}\n  wrongworld: {{ path: {} }}\n  coremodule: {{ path: {} }}\n  random: {{ path: {} }}\n",
        faulty_wasm.display(),
        wrong_world_wasm.display(),
        dir.join("core.wasm").display(),
        dir.join("random.wasm").display()
    );
    let mut host = HostProcess::start(&dir.join("faults"), &host_config_with(free_port(), &sections, &connectors))?;
    host.wait_state("steady", "RUNNING", Duration::from_secs(120))?;

    // Fed from now on; measured once it keeps up, while the others fail and restart.
    let fed = Fed::default();
    let feeding = traffic.spawn(feed(steady_in.clone(), 0..240 * RATE, fed.clone()));
    wait_keeping_up(&host, "steady", &fed)?;
    let rates = Rates::measure(&host, "steady", &fed, || {
        std::thread::sleep(WINDOW);
        Ok(())
    })?;
    let Rates { fed_per_s, out_per_s } = rates;
    println!("neighbour beside 9 faulty connectors: fed {fed_per_s:.0} records/s, wrote {out_per_s:.0} records/s ({:.0} %)", 100.0 * out_per_s / fed_per_s);
    rates.ensure_kept_pace("9 faulty connectors").with_context(|| format!("log:\n{}", host.log_text()))?;

    for (name, _, _, _, class) in cases {
        let path = format!("/v1/connectors/{name}");
        let reported = wait_until(&format!("{name} to report a {class} fault"), Duration::from_secs(60), || {
            let status = host.get(&path)?.1;
            Ok((status["error"]["class"] == class).then_some(status))
        });
        let status = reported.with_context(|| format!("{name} now: {}", host.get(&path).map(|s| s.1.to_string()).unwrap_or_default()))?;
        assert!(matches!(status["state"].as_str(), Some("FAILED" | "RESTARTING")), "{name}: {status}");
        if name != "wrongworld" && name != "coremodule" && name != "random" {
            assert!(status["faults"][class].as_u64().unwrap_or(0) >= 1, "{name}: fault counted: {status}");
        }
    }
    let (_, metrics) = http(&host.admin, "GET", "/metrics")?;
    assert!(metrics.contains(r#"turnpike_connector_faults_total{class="trap",connector="trap"}"#), "{metrics}");
    assert!(metrics.contains(r#"turnpike_connector_failures_total{class="wrong_world",connector="wrongworld"}"#), "{metrics}");
    assert_eq!(host.get("/healthz")?.1["status"], "ok", "the host survived");
    assert!(host.stop()?.success(), "the host stops cleanly after all that; log:\n{}", host.log_text());
    feeding.abort();
    Ok(())
}
