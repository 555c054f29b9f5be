//! The runtime against the real built-in components (embedded by turnpike-builtins).

use std::sync::OnceLock;

use turnpike_runtime::{
    BatchBuilder, CreateError, InstanceLabels, InstanceLimits, LoadError, OutputView, Plugin, RecordRef, Runtime, Scrub,
    TransformInstance,
};

fn runtime_and_plugins() -> &'static (Runtime, Vec<(&'static str, Plugin)>) {
    static LOADED: OnceLock<(Runtime, Vec<(&'static str, Plugin)>)> = OnceLock::new();
    LOADED.get_or_init(|| {
        let runtime = Runtime::new().expect("engine");
        // A component serving several names (the Kafka Connect transforms) is compiled once.
        let mut compiled: Vec<(&'static [u8], Plugin)> = Vec::new();
        let mut plugins = Vec::new();
        for b in turnpike_builtins::BUILTINS {
            let base = match compiled.iter().find(|(wasm, _)| std::ptr::eq(*wasm, b.wasm)) {
                Some((_, p)) => p.clone(),
                None => {
                    let p = runtime.load(b.wasm).expect("load plugin");
                    compiled.push((b.wasm, p.clone()));
                    p
                }
            };
            plugins.push((b.name, b.preset.map_or_else(|| base.clone(), |preset| base.preset(preset))));
        }
        (runtime, plugins)
    })
}

fn plugin(name: &str) -> Plugin {
    runtime_and_plugins().1.iter().find(|(n, _)| *n == name).expect("built-in exists").1.clone()
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "test".into(), plugin: "p@1".into() }
}

fn batch(values: &[&str]) -> turnpike_runtime::InputBatch {
    let mut b = BatchBuilder::default();
    for (i, v) in values.iter().enumerate() {
        let record = RecordRef { key: Some(b"k"), value: Some(v.as_bytes()), timestamp: Some(42), topic: "in", partition: 0, offset: i as i64 };
        b.push(record, [("trace", &b"abc"[..])]);
    }
    b.finish()
}

#[tokio::test]
async fn identity_returns_every_record_unchanged() {
    let mut t = TransformInstance::create(&plugin("identity"), "{}", labels(), InstanceLimits::default()).await.unwrap();
    let input = batch(&["a", "bb", ""]);
    for _ in 0..3 {
        let out = t.transform(&input).await.unwrap();
        let view = OutputView::new(&out);
        let values: Vec<_> = view.iter().map(|p| p.value.unwrap()).collect();
        assert_eq!(values, [&b"a"[..], b"bb", b""]);
        assert_eq!(view.iter().map(|p| p.input).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(view.iter().map(|p| p.key).collect::<Vec<_>>(), [Some(&b"k"[..]); 3]);
        let headers: Vec<_> = view.headers(&view.get(1)).collect();
        assert_eq!(headers, [("trace", &b"abc"[..])]);
        assert_eq!(view.get(0).timestamp, Some(42));
    }
}

/// Every output of a batch as `(input, key, value, timestamp, headers)`, owned.
type Read = Vec<(u32, Option<Vec<u8>>, Option<Vec<u8>>, Option<i64>, Vec<(String, Vec<u8>)>)>;

async fn run_all(plugin: &Plugin, config: &str, input: &turnpike_runtime::InputBatch) -> Read {
    let mut t = TransformInstance::create(plugin, config, labels(), InstanceLimits::default()).await.unwrap();
    let out = t.transform(input).await.unwrap();
    let view = OutputView::new(&out);
    view.iter()
        .map(|p| (p.input, p.key.map(<[u8]>::to_vec), p.value.map(<[u8]>::to_vec), p.timestamp, view.headers(&p).map(|(k, v)| (k.to_owned(), v.to_vec())).collect()))
        .collect()
}

/// The built-in identity lists the inputs it passes on whole (contract 0.1.6), gets its batches
/// without their bytes (0.1.5) and names its outputs' parts instead of copying them (0.1.4),
/// and the host's resolution gives exactly what the same plugin built against 0.1.5 (whose
/// passed inputs are written out as forwarded outputs, `tests/fixtures/plugins-0.1.5`), 0.1.4
/// (whose batches come with their bytes, `tests/fixtures/plugins-0.1.4`) and 0.1.3 (which
/// copies every byte back, `tests/fixtures/plugins-0.1.3`) give: old plugins keep working, new
/// ones lose nothing.
#[tokio::test]
async fn a_passing_identity_gives_what_a_lazy_a_forwarding_and_a_copying_identity_give() {
    let runtime = &runtime_and_plugins().0;
    let old = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.3/identity.wasm")).expect("a 0.1.3 transform still loads");
    let forwarding = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.4/identity.wasm")).expect("a 0.1.4 transform still loads");
    let lazy = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.5/identity.wasm")).expect("a 0.1.5 transform still loads");
    let new = plugin("identity");
    assert!(new.passes() && new.is_lazy() && new.forwards(), "the SDK's transforms export passing-transform");
    assert!(lazy.is_lazy() && !lazy.passes(), "a 0.1.5 transform runs through lazy-transform");
    assert!(forwarding.forwards() && !forwarding.is_lazy(), "a 0.1.4 transform runs through forwarding-transform");
    assert!(!old.forwards(), "a 0.1.3 transform runs through the plain export");
    let mut b = BatchBuilder::default();
    let record = |key: Option<&'static [u8]>, value: Option<&'static [u8]>, offset| RecordRef { key, value, timestamp: Some(7 + offset), topic: "in", partition: 3, offset };
    b.push(record(Some(b"k"), Some(b"first"), 0), [("a", &b"1"[..]), ("b", &b""[..])]);
    b.push(record(None, None, 1), []);
    b.push(record(Some(b""), Some(b"third"), 2), [("c", &b"3"[..])]);
    let input = b.finish();
    let from_new = run_all(&new, "{}", &input).await;
    assert_eq!(from_new, run_all(&old, "{}", &input).await);
    assert_eq!(from_new, run_all(&forwarding, "{}", &input).await);
    assert_eq!(from_new, run_all(&lazy, "{}", &input).await);
    assert_eq!(from_new.len(), 3);
    assert_eq!(from_new[0], (0, Some(b"k".to_vec()), Some(b"first".to_vec()), Some(7), vec![("a".into(), b"1".to_vec()), ("b".into(), vec![])]));
    assert_eq!(from_new[1], (1, None, None, Some(8), vec![]));
}

/// A lazy transform that decides from the columns alone never has the batch's bytes copied
/// into it: `half-filter` (which keeps even offsets) runs a batch of 16 MiB in 4 MiB of
/// memory, and forwards the records it keeps whole.
#[tokio::test]
async fn a_lazy_transform_that_reads_no_bytes_never_has_them_copied_in() {
    let runtime = &runtime_and_plugins().0;
    let filter = runtime.load(turnpike_test_components::HALF_FILTER).expect("load half-filter");
    assert!(filter.is_lazy() && filter.passes());
    let big = vec![b'x'; 1 << 20];
    let mut b = BatchBuilder::default();
    for offset in 0..32 {
        let value: &[u8] = if offset % 2 == 0 { b"kept" } else { &big };
        b.push(RecordRef { key: Some(b"k"), value: Some(value), timestamp: Some(offset), topic: "in", partition: 0, offset }, [("h", &b"v"[..])]);
    }
    let input = b.finish();
    assert!(input.data.len() > 16 << 20);
    let limits = InstanceLimits { memory_bytes: 4 << 20, ..InstanceLimits::default() };
    let mut t = TransformInstance::create(&filter, "{}", labels(), limits).await.expect("create");
    let out = t.transform(&input).await.expect("a batch four times the plugin's memory runs");
    let view = OutputView::new(&out);
    assert_eq!(view.len(), 16);
    for (i, p) in view.iter().enumerate() {
        assert_eq!((p.input, p.key, p.value, p.timestamp), (2 * i as u32, Some(&b"k"[..]), Some(&b"kept"[..]), Some(2 * i as i64)));
        assert_eq!(view.headers(&p).collect::<Vec<_>>(), [("h", &b"v"[..])]);
    }
}

/// pii-mask forwards key and headers and writes only the masked value.
#[tokio::test]
async fn pii_mask_keeps_key_and_headers_it_forwards() {
    let out = run_all(&plugin("pii-mask"), r#"{"fields":["email"]}"#, &batch(&[r#"{"email":"a@b.co"}"#])).await;
    assert_eq!(out, [(0, Some(b"k".to_vec()), Some(br#"{"email":"***"}"#.to_vec()), Some(42), vec![("trace".into(), b"abc".to_vec())])]);
}

#[tokio::test]
async fn pii_mask_masks_inside_the_sandbox() {
    let cfg = r#"{"fields":["email"],"detectors":["ssn"]}"#;
    let mut t = TransformInstance::create(&plugin("pii-mask"), cfg, labels(), InstanceLimits::default()).await.unwrap();
    let out = t.transform(&batch(&[r#"{"email":"a@b.co","n":"ssn 123-45-6789"}"#, "nope"])).await.unwrap();
    let view = OutputView::new(&out);
    assert_eq!(view.len(), 1);
    assert_eq!(view.get(0).value.unwrap(), br#"{"email":"***","n":"ssn ***"}"#);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].input, 1);
}

#[tokio::test]
async fn a_refused_config_names_the_key() {
    let err = TransformInstance::create(&plugin("pii-mask"), r#"{"fields":["a"],"modde":1}"#, labels(), InstanceLimits::default())
        .await
        .err()
        .expect("config refused");
    match err {
        // serde's "unknown field `modde`", as the host says it to the user.
        CreateError::Config { message, .. } => assert!(message.starts_with(r#"unknown key "modde"; the keys here are fields, default_mode"#), "{message}"),
        other => panic!("expected a config error, got {other}"),
    }
}

#[test]
fn non_components_are_refused_with_a_reason() {
    let runtime = &runtime_and_plugins().0;
    assert!(matches!(runtime.load(b"\0asm\x01\0\0\0"), Err(LoadError::CoreModule)));
    assert!(matches!(runtime.load(b"definitely not wasm"), Err(LoadError::Invalid(_))));
    let text = runtime.load(b"\0asm\x01\0\0\0").err().unwrap().to_string();
    assert!(text.contains("core WebAssembly module"), "{text}");
}

#[tokio::test]
async fn compiled_plugins_are_cached_and_a_damaged_cache_is_recompiled() {
    let runtime = &runtime_and_plugins().0;
    let bytes = turnpike_builtins::get("identity").expect("built in").wasm.to_vec();
    let dir = std::env::temp_dir().join(format!("turnpike-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let first = runtime.load_cached(&bytes, Some(&dir)).expect("compiles and caches");
    let cached: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(cached.len(), 1, "one artefact: {cached:?}");
    let name = cached[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with(first.digest()) && name.ends_with(".cwasm"), "{name}");

    let from_cache = runtime.load_cached(&bytes, Some(&dir)).expect("loads from the cache");
    let mut t = TransformInstance::create(&from_cache, "{}", labels(), InstanceLimits::default()).await.unwrap();
    assert_eq!(OutputView::new(&t.transform(&batch(&["x"])).await.unwrap()).len(), 1, "cached code runs");

    std::fs::write(&cached[0], b"damaged").unwrap();
    let recompiled = runtime.load_cached(&bytes, Some(&dir)).expect("a damaged artefact is recompiled");
    let mut t = TransformInstance::create(&recompiled, "{}", labels(), InstanceLimits::default()).await.unwrap();
    assert_eq!(OutputView::new(&t.transform(&batch(&["x"])).await.unwrap()).len(), 1);
    assert_ne!(std::fs::read(&cached[0]).unwrap(), b"damaged", "and replaced");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plugin that repeats a config value in its error (here serde's "unknown variant") hands
/// the host text with the secret in it; the sandbox hides it before anyone sees the error.
#[tokio::test]
async fn a_secret_a_plugin_repeats_in_its_config_error_is_hidden() {
    let secret = "tok-4f1c9e2a";
    let cfg = format!(r#"{{"fields":["a"],"default_mode":"{secret}"}}"#);
    let plain = refusal(&cfg, InstanceLimits::default()).await;
    assert!(plain.contains(secret), "the plugin does repeat the value: {plain}");
    let limits = InstanceLimits { scrub: Scrub::new([secret.to_owned()]), ..InstanceLimits::default() };
    let hidden = refusal(&cfg, limits).await;
    assert!(!hidden.contains(secret) && hidden.contains("***"), "{hidden}");
}

async fn refusal(cfg: &str, limits: InstanceLimits) -> String {
    TransformInstance::create(&plugin("pii-mask"), cfg, labels(), limits).await.err().expect("config refused").to_string()
}
