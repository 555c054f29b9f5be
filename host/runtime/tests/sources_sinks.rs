//! Source and sink plugins through the runtime, and outgoing HTTP behind the grant.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, OnceLock};

use turnpike_runtime::{
    input_record, BatchBuilder, CallError, CreateError, ErrorKind, HttpGrant, InstanceLabels, InstanceLimits, Plugin, PluginKind, RecordRef,
    Runtime, SinkInstance, SourceInstance, TransformInstance,
};

fn plugin(name: &str) -> Plugin {
    static LOADED: OnceLock<Vec<(&'static str, Plugin)>> = OnceLock::new();
    let all = LOADED.get_or_init(|| {
        let runtime = Runtime::new().expect("engine");
        // The Kafka Connect transforms (presets of one component) are tested elsewhere.
        turnpike_builtins::BUILTINS.iter().filter(|b| b.preset.is_none()).map(|b| (b.name, runtime.load(b.wasm).expect("load"))).collect()
    });
    all.iter().find(|(n, _)| *n == name).expect("built-in exists").1.clone()
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "test".into(), plugin: "p@1".into() }
}

fn granted(entries: &[&str]) -> InstanceLimits {
    let http = HttpGrant::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("grant");
    InstanceLimits { http, ..InstanceLimits::default() }
}

/// A one-thread HTTP server on 127.0.0.1 answering every request with `status` and `body`,
/// keeping the request texts.
fn serve(status: u16, body: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then as many body bytes as Content-Length says.
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0))).unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            kept.lock().unwrap().push(String::from_utf8_lossy(&request).into_owned());
            let reply = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{body}", body.len());
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (port, seen)
}

#[tokio::test]
async fn kinds_are_inferred_and_a_plugin_used_as_another_kind_is_refused() {
    assert_eq!(plugin("datagen").kind(), PluginKind::Source);
    assert_eq!(plugin("http-sink").kind(), PluginKind::Sink);
    assert_eq!(plugin("pii-mask").kind(), PluginKind::Transform);
    let wrong = TransformInstance::create(&plugin("datagen"), "{}", labels(), InstanceLimits::default()).await.err().expect("refused");
    assert!(matches!(wrong, CreateError::WrongKind { wanted: "transform", actual: "source" }), "{wrong}");
}

#[tokio::test]
async fn a_source_resumes_from_the_position_it_is_given() {
    let config = r#"{"seed": 1, "fields": [{"name": "n", "type": "sequence"}]}"#;
    let mut source = SourceInstance::create(&plugin("datagen"), config, None, "out", labels(), InstanceLimits::default()).await.expect("create");
    let polled = source.poll(5).await.expect("poll");
    assert_eq!(polled.position.as_deref(), Some(&b"5"[..]));
    let (record, _) = input_record(&polled.batch, 4);
    assert_eq!((record.topic, record.value), ("out", Some(&br#"{"n":4}"#[..])));

    let mut resumed = SourceInstance::create(&plugin("datagen"), config, Some(b"5"), "out", labels(), InstanceLimits::default()).await.expect("create");
    let next = resumed.poll(1).await.expect("poll");
    assert_eq!(input_record(&next.batch, 0).0.value, Some(&br#"{"n":5}"#[..]));
}

fn one_record() -> turnpike_runtime::InputBatch {
    let mut b = BatchBuilder::default();
    b.push(RecordRef { key: None, value: Some(b"{\"a\":1}"), timestamp: None, topic: "in", partition: 0, offset: 7 }, []);
    b.finish()
}

#[tokio::test]
async fn a_granted_sink_reaches_the_loopback_address_it_names() {
    let (port, seen) = serve(200, "");
    let config = format!(r#"{{"url": "http://127.0.0.1:{port}/in"}}"#);
    let mut sink = SinkInstance::create(&plugin("http-sink"), &config, labels(), granted(&[&format!("127.0.0.1:{port}")])).await.expect("create");
    let rejected = sink.write(&one_record()).await.expect("write");
    assert!(rejected.is_empty());
    sink.flush().await.expect("flush");
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].starts_with("POST /in HTTP/1.1"), "{}", requests[0]);
    assert!(requests[0].ends_with("{\"a\":1}\n"), "{}", requests[0]);
}

#[tokio::test]
async fn without_a_grant_the_request_is_refused_and_the_error_says_why() {
    let (port, seen) = serve(200, "");
    let config = format!(r#"{{"url": "http://127.0.0.1:{port}/in"}}"#);
    let mut sink = SinkInstance::create(&plugin("http-sink"), &config, labels(), InstanceLimits::default()).await.expect("create");
    let error = sink.write(&one_record()).await.expect_err("refused");
    let CallError::Plugin { kind, message } = &error else { panic!("a plugin error, not a fault: {error}") };
    assert_eq!(*kind, ErrorKind::Fatal);
    assert!(message.contains("grants no outgoing HTTP"), "{message}");
    assert!(!sink.is_poisoned(), "a refusal is not a trap");
    assert!(seen.lock().unwrap().is_empty(), "nothing reached the server");
}

/// An internal address is reached only by naming it, in the request and in one grant entry:
/// a grant that names `127.0.0.1` does not also open every allowed name resolving there.
#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_even_when_the_address_is_named() {
    let (port, seen) = serve(200, "[]");
    let config = format!(r#"{{"url": "http://localhost:{port}/items"}}"#);
    let by_name = granted(&[&format!("localhost:{port}")]);
    let mut source = SourceInstance::create(&plugin("http-source"), &config, None, "out", labels(), by_name).await.expect("create");
    let error = source.poll(10).await.expect_err("refused");
    assert!(error.to_string().contains("resolves to internal address"), "{error}");
    assert!(seen.lock().unwrap().is_empty());

    let also_named = granted(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}"), &format!("[::1]:{port}")]);
    let mut source = SourceInstance::create(&plugin("http-source"), &config, None, "out", labels(), also_named.clone()).await.expect("create");
    let error = source.poll(10).await.expect_err("the name still may not reach the internal address");
    assert!(error.to_string().contains("resolves to internal address"), "{error}");
    assert!(seen.lock().unwrap().is_empty());

    let by_address = format!(r#"{{"url": "http://127.0.0.1:{port}/items"}}"#);
    let mut source = SourceInstance::create(&plugin("http-source"), &by_address, None, "out", labels(), also_named).await.expect("create");
    let polled = source.poll(10).await.expect("allowed when the request names the granted address");
    assert_eq!(turnpike_runtime::input_len(&polled.batch), 0);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_host_not_on_the_list_is_refused() {
    let (port, _) = serve(200, "");
    let config = format!(r#"{{"url": "http://127.0.0.1:{port}/in"}}"#);
    let other_port = granted(&[&format!("127.0.0.1:{}", port.wrapping_add(1))]);
    let mut sink = SinkInstance::create(&plugin("http-sink"), &config, labels(), other_port).await.expect("create");
    let error = sink.write(&one_record()).await.expect_err("refused");
    assert!(error.to_string().contains("is not in the connector's http.allow list"), "{error}");
}
