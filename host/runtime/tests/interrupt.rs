//! A stopping connector's `Interrupt` ends its plugin calls: one spinning in guest code, one
//! waiting in a host call, and any call or `create` that would start after it.

use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use turnpike_runtime::{
    BatchBuilder, CallError, CreateError, HttpGrant, InstanceLabels, InstanceLimits, Interrupt, Plugin, RecordRef, Runtime, SinkInstance,
    TransformInstance,
};

/// The `faulty` fixture and the built-in `http-sink`.
fn plugins() -> &'static (Plugin, Plugin) {
    static LOADED: OnceLock<(Plugin, Plugin)> = OnceLock::new();
    LOADED.get_or_init(|| {
        let runtime = Runtime::new().expect("engine");
        let faulty = runtime.load(turnpike_test_components::FAULTY).expect("load faulty");
        let sink = runtime.load(turnpike_builtins::get("http-sink").expect("built-in").wasm).expect("load http-sink");
        (faulty, sink)
    })
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "test".into(), plugin: "p@1".into() }
}

/// Limits whose batch timeout (a minute) is far longer than any test here may take.
fn patient(interrupt: &Interrupt) -> InstanceLimits {
    InstanceLimits { batch_timeout: Duration::from_secs(60), interrupt: interrupt.clone(), ..InstanceLimits::default() }
}

fn one_record(value: &str) -> turnpike_runtime::InputBatch {
    let mut b = BatchBuilder::default();
    b.push(RecordRef { key: None, value: Some(value.as_bytes()), timestamp: None, topic: "t", partition: 0, offset: 0 }, []);
    b.finish()
}

/// Fires `interrupt` after `delay`, from another task.
fn fire_after(interrupt: &Interrupt, delay: Duration) {
    let interrupt = interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        interrupt.fire();
    });
}

#[tokio::test]
async fn a_call_spinning_in_the_plugin_ends_when_the_interrupt_fires() {
    let interrupt = Interrupt::default();
    let mut t = TransformInstance::create(&plugins().0, r#"{"fault":"loop","marker":"BAD"}"#, labels(), patient(&interrupt)).await.expect("create");
    let start = Instant::now();
    fire_after(&interrupt, Duration::from_millis(300));
    match t.transform(&one_record("BAD")).await {
        Err(CallError::Stopped) => {}
        other => panic!("expected the call to be stopped, got {:?}", other.map(|o| o.records.len())),
    }
    assert!(start.elapsed() < Duration::from_secs(5), "ended at the interrupt, not the batch timeout: {:?}", start.elapsed());
    assert!(t.is_poisoned(), "an interrupted instance is not called again");
    assert!(matches!(t.transform(&one_record("fine")).await, Err(CallError::Stopped)), "a call after an interrupted one is a stop, not a fault");
}

#[tokio::test]
async fn a_call_waiting_in_a_host_call_ends_when_the_interrupt_fires() {
    // Accepts the sink's connection and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let config = format!(r#"{{"url": "http://127.0.0.1:{port}/in", "timeout_ms": 60000}}"#);
    let interrupt = Interrupt::default();
    let http = HttpGrant::parse(&[format!("127.0.0.1:{port}")]).expect("grant");
    let limits = InstanceLimits { http, ..patient(&interrupt) };
    let mut sink = SinkInstance::create(&plugins().1, &config, labels(), limits).await.expect("create");
    let start = Instant::now();
    fire_after(&interrupt, Duration::from_millis(300));
    match sink.write(&one_record(r#"{"a":1}"#)).await {
        Err(CallError::Stopped) => {}
        other => panic!("expected the write to be stopped, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(5), "ended at the interrupt, not the response timeout: {:?}", start.elapsed());
    assert!(sink.is_poisoned());
    // What a stopping sink task does next: its last flush, which must not count as a fault.
    assert!(matches!(sink.flush().await, Err(CallError::Stopped)), "a flush after an interrupted write is a stop, not a fault");
    drop(listener);
}

#[tokio::test]
async fn nothing_starts_after_the_interrupt() {
    let interrupt = Interrupt::default();
    let mut t = TransformInstance::create(&plugins().0, r#"{"fault":"trap","marker":"BAD"}"#, labels(), patient(&interrupt)).await.expect("create");
    interrupt.fire();
    assert!(matches!(t.transform(&one_record("fine")).await, Err(CallError::Stopped)), "a call after the interrupt does not run");
    match TransformInstance::create(&plugins().0, r#"{"fault":"trap"}"#, labels(), patient(&interrupt)).await {
        Err(CreateError::Stopped) => {}
        Err(e) => panic!("expected the create to be stopped, got {e}"),
        Ok(_) => panic!("expected the create to be stopped"),
    }
}
