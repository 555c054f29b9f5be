//! Each fault class, provoked by the fixtures in `tests/components`, seen from the runtime.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use turnpike_runtime::{
    BatchBuilder, CallError, CreateError, Fault, InstanceLabels, InstanceLimits, LoadError, OutputView, Plugin,
    RecordRef, Runtime, Scrub, TransformInstance,
};

fn fixtures() -> &'static (Runtime, Plugin, Vec<u8>) {
    static LOADED: OnceLock<(Runtime, Plugin, Vec<u8>)> = OnceLock::new();
    LOADED.get_or_init(|| {
        let runtime = Runtime::new().expect("engine");
        let faulty = runtime.load(turnpike_test_components::FAULTY).expect("load faulty");
        let wrong_world = turnpike_test_components::WRONG_WORLD.to_vec();
        (runtime, faulty, wrong_world)
    })
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "test".into(), plugin: "faulty@test".into() }
}

fn batch(values: &[&str]) -> turnpike_runtime::InputBatch {
    let mut b = BatchBuilder::default();
    for (i, v) in values.iter().enumerate() {
        b.push(RecordRef { key: None, value: Some(v.as_bytes()), timestamp: None, topic: "t", partition: 0, offset: i as i64 }, []);
    }
    b.finish()
}

async fn fault_of(config: &str, limits: InstanceLimits) -> Fault {
    let mut t = TransformInstance::create(&fixtures().1, config, labels(), limits).await.expect("create");
    match t.transform(&batch(&["ok", "BAD"])).await {
        Err(CallError::Fault(f)) => {
            assert!(t.is_poisoned(), "a faulted instance is not reused");
            f
        }
        other => panic!("expected a fault, got {:?}", other.map(|o| o.records.len())),
    }
}

#[tokio::test]
async fn a_trap_is_reported_with_the_panic_message_and_a_fresh_instance_works() {
    let fault = fault_of(r#"{"fault":"trap","marker":"BAD"}"#, InstanceLimits::default()).await;
    let Fault::Trap { message } = fault else { panic!("expected a trap, got {fault}") };
    assert!(message.contains("poison record at offset 1"), "{message}");
    let mut fresh = TransformInstance::create(&fixtures().1, r#"{"fault":"trap","marker":"BAD"}"#, labels(), InstanceLimits::default()).await.unwrap();
    let out = fresh.transform(&batch(&["ok", "fine"])).await.expect("a fresh instance works");
    assert_eq!(OutputView::new(&out).len(), 2);
}

/// The panic message stands in for a plugin repeating a secret of its config as it panics:
/// the trap's explanation, error output included, hides it.
#[tokio::test]
async fn a_trap_explanation_hides_the_connectors_secrets() {
    let limits = InstanceLimits { scrub: Scrub::new(["poison record".to_owned()]), ..InstanceLimits::default() };
    let Fault::Trap { message } = fault_of(r#"{"fault":"trap","marker":"BAD"}"#, limits).await else { panic!("expected a trap") };
    assert!(message.contains("*** at offset 1") && !message.contains("poison record"), "{message}");
}

#[tokio::test]
async fn an_infinite_loop_is_interrupted_at_its_deadline() {
    let limits = InstanceLimits { batch_timeout: Duration::from_millis(200), ..InstanceLimits::default() };
    let start = Instant::now();
    let fault = fault_of(r#"{"fault":"loop","marker":"BAD"}"#, limits).await;
    assert_eq!(fault, Fault::Timeout { limit_ms: 200 });
    assert!(start.elapsed() < Duration::from_secs(3), "interrupted promptly: {:?}", start.elapsed());
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let limits = InstanceLimits { memory_bytes: 32 << 20, ..InstanceLimits::default() };
    assert_eq!(fault_of(r#"{"fault":"memory","marker":"BAD"}"#, limits).await, Fault::MemoryLimit { limit_mib: 32 });
}

#[tokio::test]
async fn a_flood_of_output_hits_the_output_limit_while_being_copied() {
    let limits = InstanceLimits { memory_bytes: 512 << 20, max_output_bytes: 8 << 20, ..InstanceLimits::default() };
    let fault = fault_of(r#"{"fault":"huge_output","marker":"BAD","output_mib":32}"#, limits).await;
    assert_eq!(fault.class().as_str(), "output_limit", "{fault}");
}

#[tokio::test]
async fn too_many_output_records_hit_the_record_limit() {
    let limits = InstanceLimits { memory_bytes: 256 << 20, max_output_records: 10, ..InstanceLimits::default() };
    let fault = fault_of(r#"{"fault":"huge_output","marker":"BAD","output_mib":16}"#, limits).await;
    assert_eq!(fault, Fault::OutputLimit { limit: "10 records per batch".into() });
}

#[tokio::test]
async fn a_create_that_never_returns_is_interrupted() {
    let limits = InstanceLimits { create_timeout: Duration::from_millis(200), ..InstanceLimits::default() };
    match TransformInstance::create(&fixtures().1, r#"{"fault":"slow_create"}"#, labels(), limits).await {
        Err(CreateError::Fault(f)) => assert_eq!(f, Fault::Timeout { limit_ms: 200 }),
        Err(e) => panic!("expected a timeout, got {e}"),
        Ok(_) => panic!("expected a timeout"),
    }
}

#[test]
fn components_of_the_wrong_world_are_refused_with_the_reason() {
    let err = fixtures().0.load(&fixtures().2).expect_err("refused");
    assert!(matches!(err, LoadError::WrongWorld(_)), "{err}");
    assert!(err.to_string().contains("transform-plugin"), "{err}");
    let random: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
    assert_eq!(fixtures().0.load(&random).err().map(|e| e.class().as_str()), Some("invalid_component"));
}

#[tokio::test]
async fn past_the_host_instance_cap_creation_fails_cleanly() {
    let runtime = Runtime::with_limits(&turnpike_runtime::EngineLimits { max_instances: 1, max_memory_bytes: 64 << 20 }).unwrap();
    let plugin = runtime.load(turnpike_test_components::FAULTY).unwrap();
    let config = r#"{"fault":"trap","marker":"never"}"#;
    let first = TransformInstance::create(&plugin, config, labels(), InstanceLimits::default()).await.expect("first fits");
    match TransformInstance::create(&plugin, config, labels(), InstanceLimits::default()).await {
        Err(CreateError::Fault(f)) => assert_eq!(f.class().as_str(), "host_capacity", "{f}"),
        Err(e) => panic!("expected host_capacity, got {e}"),
        Ok(_) => panic!("a second instance must not fit"),
    }
    drop(first);
    TransformInstance::create(&plugin, config, labels(), InstanceLimits::default()).await.expect("room again once the first is gone");
}

#[tokio::test]
async fn a_leaking_instance_asks_to_be_replaced_before_it_runs_out() {
    let limits = InstanceLimits { memory_bytes: 32 << 20, ..InstanceLimits::default() };
    let mut t = TransformInstance::create(&fixtures().1, r#"{"fault":"leak"}"#, labels(), limits).await.expect("create");
    let mut batches = 0;
    while !t.needs_replacing() {
        // 1 MiB kept per record: memory fills up a batch at a time.
        let out = t.transform(&batch(&["a"])).await.expect("no fault before the replacement point");
        assert_eq!(OutputView::new(&out).len(), 1);
        batches += 1;
        assert!(batches < 32, "never asked to be replaced");
    }
    assert!(batches >= 8, "not replaced while memory was still low ({batches} MiB kept)");
}

/// A forwarding batch, or a list of passed inputs, that no SDK writes is a plugin bug the host
/// names and refuses (the instance is replaced), never a panic or a record made up from the
/// wrong parts.
#[tokio::test]
async fn forwarded_flags_no_sdk_writes_are_refused_as_invalid_output() {
    let cases = [
        ("unknown_flag", "output 0: unknown forwarded flags 0xf"),
        ("missing_flag", "1 forwarded flags for 2 outputs"),
        ("forwarded_and_written", "output 0: a part is both forwarded and written"),
        ("pass_out_of_order", "passed input 1: index 0 does not follow the one before (passed inputs go in increasing order, each once)"),
        ("pass_out_of_range", "passed input 2: index 1002 out of range (batch of 2)"),
    ];
    for (fault, why) in cases {
        let found = fault_of(&format!(r#"{{"fault":"{fault}"}}"#), InstanceLimits::default()).await;
        assert_eq!(found, Fault::InvalidOutput(why.into()), "{fault}");
    }
}

/// One input forwarded many times counts as its copies would: over `max_output_bytes` it is
/// the output limit, as copying would have been, and under it every copy is the whole input.
#[tokio::test]
async fn one_input_forwarded_many_times_is_capped_like_its_copies() {
    let value = "v".repeat(64 << 10);
    let limits = InstanceLimits { max_output_bytes: 1 << 20, ..InstanceLimits::default() };
    let mut t = TransformInstance::create(&fixtures().1, r#"{"fault":"forward_copies","copies":10}"#, labels(), limits.clone()).await.expect("create");
    let out = t.transform(&batch(&[&value, "second"])).await.expect("640 KiB fits in 1 MiB");
    let view = OutputView::new(&out);
    assert_eq!(view.len(), 10);
    assert!((0..10).all(|i| view.get(i).value == Some(value.as_bytes())), "every copy is the first input's value");

    let mut t = TransformInstance::create(&fixtures().1, r#"{"fault":"forward_copies","copies":100}"#, labels(), limits).await.expect("create");
    match t.transform(&batch(&[&value, "second"])).await {
        Err(CallError::Fault(f)) => assert_eq!(f, Fault::OutputLimit { limit: "1 MiB per batch (with the parts it forwards)".into() }),
        other => panic!("expected the output limit, got {:?}", other.map(|o| o.records.len())),
    }
    assert!(t.is_poisoned());
}
