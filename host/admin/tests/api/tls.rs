//! The API over HTTPS, through the real accept loop on a real socket: a client that trusts
//! only the test certificate is answered; plain HTTP, a client that never says hello and
//! unusable certificate files are not. The certificate and keys are fixtures
//! (`tests/fixtures/README.md` says how they were made); nothing is generated here.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_util::sync::CancellationToken;
use turnpike_admin::{ServeLimits, TlsError};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

/// The bound on anything a test waits for; a passing run takes milliseconds per step.
const PATIENCE: Duration = Duration::from_secs(20);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The real router served over TLS with the fixture certificate on 127.0.0.1.
struct Server {
    address: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Server {
    async fn start(header_read_timeout: Duration, max_connections: usize) -> Self {
        let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
        let host = Arc::new(Host::new(Runtime::new().expect("engine"), kafka, SandboxConfig::default()));
        let tls = turnpike_admin::load_tls(&fixture("cert.pem"), &fixture("key.pem")).expect("the fixture pair loads");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("local address");
        let limits = ServeLimits { header_read_timeout, max_connections };
        let stop = CancellationToken::new();
        let task = tokio::spawn(turnpike_admin::serve(listener, turnpike_admin::router(host), limits, Some(tls), stop.clone()));
        Self { address, stop, task }
    }

    async fn stop(self) {
        self.stop.cancel();
        tokio::time::timeout(PATIENCE, self.task).await.expect("the server stops").expect("the server task ends cleanly");
    }
}

/// A TLS client whose only trusted root is the fixture certificate, offering HTTP/2 first so
/// that the server's choice of HTTP/1.1 shows.
fn client() -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(fixture("cert.pem")).expect("the fixture certificate")).expect("the fixture certificate as a root");
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// `GET /healthz` over HTTPS, verifying the server as 127.0.0.1; the whole answer.
async fn get_healthz(address: SocketAddr) -> String {
    let tcp = TcpStream::connect(address).await.expect("connect");
    let mut tls = client().connect(ServerName::from(Ipv4Addr::LOCALHOST), tcp).await.expect("a handshake verified against the fixture certificate");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]), "the server offers HTTP/1.1 only");
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.expect("send the request");
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer).await.expect("the answer, then a clean TLS close");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_trusting_the_certificate_is_answered_over_https() {
    let server = Server::start(Duration::from_secs(10), 4).await;
    let answer = tokio::time::timeout(PATIENCE, get_healthz(server.address)).await.expect("an answer in time");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"ok\""), "{answer}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_to_the_https_port_gets_no_http_answer() {
    let server = Server::start(Duration::from_secs(10), 4).await;
    let mut plain = TcpStream::connect(server.address).await.expect("connect");
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", server.address);
    plain.write_all(request.as_bytes()).await.expect("send the request");
    let mut answer = Vec::new();
    // A reset instead of a close is as good: either way the connection ends unanswered.
    let ended = tokio::time::timeout(PATIENCE, plain.read_to_end(&mut answer)).await;
    assert!(ended.is_ok(), "the server keeps a connection that speaks no TLS");
    assert!(!answer.starts_with(b"HTTP/"), "answered in plain HTTP: {}", String::from_utf8_lossy(&answer));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_says_hello_is_dropped_and_frees_its_slot() {
    // One slot: while the silent client holds it, no one else is served.
    let server = Server::start(Duration::from_secs(1), 1).await;
    let mut silent = TcpStream::connect(server.address).await.expect("connect");
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, silent.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the server still holds a connection whose handshake never started");
    let answer = tokio::time::timeout(PATIENCE, get_healthz(server.address)).await.expect("the slot is free again");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_handshake_holds_up_neither_other_clients_nor_shutdown() {
    // A handshake deadline far beyond the test's patience: only running handshakes outside
    // the accept loop, and abandoning them at stop, lets this pass.
    let server = Server::start(Duration::from_secs(600), 4).await;
    let silent = TcpStream::connect(server.address).await.expect("connect");
    let answer = tokio::time::timeout(PATIENCE, get_healthz(server.address)).await.expect("answered while another client stalls");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    server.stop().await;
    drop(silent);
}

#[test]
fn unusable_files_are_named_with_what_is_wrong() {
    let missing = fixture("missing.pem");
    let error = turnpike_admin::load_tls(&missing, &fixture("key.pem")).expect_err("a missing certificate file");
    assert!(matches!(error, TlsError::Unreadable { ref path, .. } if path == &missing), "{error:?}");
    assert!(error.to_string().contains("missing.pem"), "{error}");

    let error = turnpike_admin::load_tls(&fixture("cert.pem"), &fixture("cert.pem")).expect_err("a key file with no key");
    assert!(matches!(error, TlsError::NoKey { .. }), "{error:?}");
    assert!(error.to_string().contains("cert.pem holds no private key"), "{error}");

    let error = turnpike_admin::load_tls(&fixture("key.pem"), &fixture("key.pem")).expect_err("a certificate file with no certificate");
    assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
    assert!(error.to_string().contains("key.pem holds no certificate"), "{error}");

    let error = turnpike_admin::load_tls(&fixture("cert.pem"), &fixture("other_key.pem")).expect_err("a key of another certificate");
    assert!(matches!(error, TlsError::KeyMismatch { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("other_key.pem") && message.contains("cert.pem") && message.contains("does not belong"), "{message}");
    let key = std::fs::read_to_string(fixture("other_key.pem")).expect("fixture");
    for line in key.lines().filter(|l| !l.starts_with("-----")) {
        assert!(!message.contains(line), "the message quotes the key: {message}");
    }
}
