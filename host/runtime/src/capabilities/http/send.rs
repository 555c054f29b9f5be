//! Sends one granted request: check the name, resolve once, drop internal addresses, connect
//! to a checked address, speak HTTP/1.1 (over TLS for `https`, verified against the name).
//! Every wait is bounded: DNS, TCP connect, the TLS and HTTP handshakes by the connect
//! timeout; the response head by the first-byte timeout; each gap in the response body by
//! the between-bytes timeout.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::uri::Scheme;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use super::grant::HttpGrant;

/// A request that was not sent. `refused` says why when the host refused it (as opposed to
/// the network failing).
pub(crate) struct Failed {
    pub(crate) refused: Option<String>,
    pub(crate) code: Error,
}

fn refuse(reason: String, code: Error) -> Failed {
    Failed { refused: Some(reason), code }
}

fn failed(code: Error) -> Failed {
    Failed { refused: None, code }
}

type Sent = (http::Response<WasiBody>, Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>);

pub(crate) async fn guarded_send(grant: &HttpGrant, mut request: http::Request<WasiBody>, options: Option<RequestOptions>) -> Result<Sent, Failed> {
    let uri = request.uri().clone();
    let use_tls = uri.scheme() == Some(&Scheme::HTTPS);
    let host = uri.host().ok_or_else(|| failed(Error::HttpRequestUriInvalid))?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let port = uri.port_u16().unwrap_or(if use_tls { 443 } else { 80 });
    if grant.is_empty() {
        return Err(refuse(format!("{host}:{port}: this connector grants no outgoing HTTP (add the host to its http.allow list)"), Error::HttpRequestDenied));
    }
    if !grant.allows(&host, port) {
        return Err(refuse(format!("{host}:{port} is not in the connector's http.allow list"), Error::HttpRequestDenied));
    }
    let connect_timeout = clamp(options.and_then(|o| o.connect_timeout), grant.connect_timeout);
    let response_timeout = clamp(options.and_then(|o| o.first_byte_timeout), grant.response_timeout);
    let between_bytes_timeout = clamp(options.and_then(|o| o.between_bytes_timeout), grant.response_timeout);

    let resolved: Vec<SocketAddr> = match tokio::time::timeout(connect_timeout, tokio::net::lookup_host((host.as_str(), port))).await {
        Err(_) => return Err(failed(Error::DnsTimeout)),
        Ok(Err(e)) => return Err(failed(Error::DnsError { rcode: Some(e.to_string()), info_code: None })),
        Ok(Ok(addrs)) => addrs.collect(),
    };
    let (safe, internal): (Vec<SocketAddr>, Vec<SocketAddr>) = resolved.into_iter().partition(|a| grant.may_reach(&host, port, a.ip()));
    if safe.is_empty() {
        let shown: Vec<String> = internal.iter().map(|a| a.ip().to_string()).collect();
        return Err(refuse(
            format!(
                "{host}:{port} resolves to internal address {}, which only a request to the address itself reaches, with that address and port in http.allow",
                shown.join(", ")
            ),
            Error::DestinationIpProhibited,
        ));
    }

    let stream = connect(&safe, connect_timeout).await?;
    let io: Box<dyn Stream> = if use_tls {
        let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| failed(Error::from(e)))?;
        // A server that accepts and then never answers the hello would otherwise hold the
        // plugin until the call deadline.
        let tls = tokio::time::timeout(connect_timeout, tls_connector().connect(name, stream))
            .await
            .map_err(|_| failed(Error::ConnectionTimeout))?
            .map_err(|e| failed(Error::Tls(e)))?;
        Box::new(tls)
    } else {
        Box::new(stream)
    };
    let (mut sender, conn) = tokio::time::timeout(connect_timeout, hyper::client::conn::http1::handshake(TokioIo::new(io)))
        .await
        .map_err(|_| failed(Error::ConnectionTimeout))?
        .map_err(|e| failed(Error::from(e)))?;
    // The connection is driven on its own task; the guest's body reads and the call
    // deadline bound how long it lives.
    let driver = tokio::spawn(conn);

    // Only the path goes on the request line (no proxy form).
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    *request.uri_mut() = path.parse().map_err(|_| failed(Error::HttpRequestUriInvalid))?;
    let response = tokio::time::timeout(response_timeout, sender.send_request(request))
        .await
        .map_err(|_| failed(Error::ConnectionReadTimeout))?
        .map_err(|e| failed(Error::from(e)))?;
    let response = response.map(|body| GapLimited::new(body, between_bytes_timeout).boxed_unsync());
    let io_done = async move {
        match driver.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::from(e)),
            Err(_) => Err(Error::ConnectionTerminated),
        }
    };
    Ok((response, Box::new(io_done)))
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Stream for T {}

/// Tries each checked address in turn until one connects.
async fn connect(addrs: &[SocketAddr], timeout: Duration) -> Result<TcpStream, Failed> {
    let mut last = Error::ConnectionRefused;
    for addr in addrs {
        match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = Error::Connect(e),
            Err(_) => last = Error::ConnectionTimeout,
        }
    }
    Err(failed(last))
}

/// A response body that ends with [`Error::ConnectionReadTimeout`] when no chunk arrives
/// within `gap` of the reader starting to wait for one.
///
/// The clock runs from the first poll that finds nothing ready, not from the previous chunk
/// (as wasmtime's default sender does): hyper reads the socket only as the body is read, so
/// time the plugin spends on the previous chunk is not the server's silence and must not
/// count against it.
struct GapLimited<B> {
    inner: B,
    gap: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Whether `timer` is running: a poll found no chunk and none has arrived since.
    waiting: bool,
}

impl<B> GapLimited<B> {
    fn new(inner: B, gap: Duration) -> Self {
        Self { inner, gap, timer: Box::pin(tokio::time::sleep(gap)), waiting: false }
    }
}

impl<B> Body for GapLimited<B>
where
    B: Body<Data = Bytes> + Unpin,
    Error: From<B::Error>,
{
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.waiting = false;
                Poll::Ready(frame.map(|f| f.map_err(Error::from)))
            }
            Poll::Pending => {
                if !this.waiting {
                    this.waiting = true;
                    let now = tokio::time::Instant::now();
                    // A gap too long to add is as good as none.
                    let deadline = now.checked_add(this.gap).unwrap_or(now + Duration::from_secs(365 * 24 * 3600));
                    this.timer.as_mut().reset(deadline);
                }
                match this.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Error::ConnectionReadTimeout))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The plugin's own timeout if it asked for a shorter one, else the host's.
fn clamp(asked: Option<Duration>, most: Duration) -> Duration {
    asked.map_or(most, |a| a.min(most))
}

fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grant for any port on 127.0.0.1, with these timeouts.
    fn loopback_grant(connect: Duration, response: Duration) -> HttpGrant {
        HttpGrant::parse(&["127.0.0.1:*".to_owned()]).expect("grant").with_timeouts(connect, response)
    }

    fn get(uri: &str) -> http::Request<WasiBody> {
        let body = http_body_util::Empty::<Bytes>::new().map_err(Error::from).boxed_unsync();
        http::Request::builder().uri(uri).body(body).expect("request")
    }

    /// Reads from `socket` to the end of a request head (or until the peer closes).
    async fn read_head(socket: &TcpStream) {
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            socket.readable().await.expect("readable");
            match socket.try_read(&mut buf) {
                Ok(0) => return,
                Ok(n) => head.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    async fn write_all(socket: &TcpStream, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            socket.writable().await.expect("writable");
            match socket.try_write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("write: {e}"),
            }
        }
    }

    /// Serves one connection on 127.0.0.1: reads the request head, then writes each part of
    /// `parts` after its delay, then holds the connection open for a minute.
    async fn serve_once(parts: Vec<(Duration, &'static str)>) -> (u16, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = tokio::spawn(async move {
            let (socket, _) = listener.accept().await.expect("accept");
            read_head(&socket).await;
            for (delay, part) in parts {
                tokio::time::sleep(delay).await;
                write_all(&socket, part.as_bytes()).await;
            }
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        (port, server)
    }

    /// Reads the body to its end or first error, within `most`.
    async fn read_body(body: &mut WasiBody, most: Duration) -> (Vec<u8>, Option<Error>) {
        let mut got = Vec::new();
        let read = async {
            loop {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            got.extend_from_slice(&data);
                        }
                    }
                    Some(Err(e)) => break Some(e),
                    None => break None,
                }
            }
        };
        let end = tokio::time::timeout(most, read).await.expect("the body neither ended nor failed: its wait is unbounded");
        (got, end)
    }

    #[tokio::test]
    async fn a_server_silent_after_accepting_times_out_the_tls_handshake() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // Accepts and holds the connection, never answering the TLS hello.
        let server = tokio::spawn(async move {
            let (_socket, _) = listener.accept().await.expect("accept");
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let grant = loopback_grant(Duration::from_millis(300), Duration::from_secs(30));
        let sent = tokio::time::timeout(Duration::from_secs(20), guarded_send(&grant, get(&format!("https://127.0.0.1:{port}/")), None)).await;
        server.abort();
        match sent {
            Err(_) => panic!("the TLS handshake is not bounded by the connect timeout"),
            Ok(Ok(_)) => panic!("a silent server cannot complete a TLS handshake"),
            Ok(Err(f)) => assert!(matches!(f.code, Error::ConnectionTimeout) && f.refused.is_none(), "{}", f.code),
        }
    }

    #[tokio::test]
    async fn a_body_that_stalls_between_chunks_ends_with_a_read_timeout() {
        let head = "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello";
        let (port, server) = serve_once(vec![(Duration::ZERO, head)]).await;
        // The grant allows long waits; the plugin asks for a short gap, which is kept.
        let grant = loopback_grant(Duration::from_secs(5), Duration::from_secs(30));
        let options = RequestOptions { between_bytes_timeout: Some(Duration::from_millis(300)), ..RequestOptions::default() };
        let sent = guarded_send(&grant, get(&format!("http://127.0.0.1:{port}/")), Some(options)).await;
        let (response, _io) = match sent {
            Ok(sent) => sent,
            Err(f) => panic!("the request should be sent: {}", f.code),
        };
        let (got, end) = read_body(&mut response.into_body(), Duration::from_secs(20)).await;
        server.abort();
        assert_eq!(got, b"hello");
        assert!(matches!(end, Some(Error::ConnectionReadTimeout)), "{end:?}");
    }

    #[tokio::test]
    async fn a_body_that_keeps_coming_is_not_cut_however_long_it_takes_in_all() {
        // Five chunks 100 ms apart: 500 ms in all, each gap well under the 400 ms allowed.
        let step = Duration::from_millis(100);
        let head = (Duration::ZERO, "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n");
        let (port, server) = serve_once(vec![head, (step, "a"), (step, "b"), (step, "c"), (step, "d"), (step, "e")]).await;
        let grant = loopback_grant(Duration::from_secs(5), Duration::from_millis(400));
        let sent = guarded_send(&grant, get(&format!("http://127.0.0.1:{port}/")), None).await;
        let (response, _io) = match sent {
            Ok(sent) => sent,
            Err(f) => panic!("the request should be sent: {}", f.code),
        };
        let (got, end) = read_body(&mut response.into_body(), Duration::from_secs(20)).await;
        server.abort();
        assert_eq!(got, b"abcde");
        assert!(end.is_none(), "{end:?}");
    }

    /// A body fed one chunk per message; it ends when the sender is dropped.
    struct Fed(tokio::sync::mpsc::UnboundedReceiver<Bytes>);

    impl Body for Fed {
        type Data = Bytes;
        type Error = Error;

        fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
            self.0.poll_recv(cx).map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
        }
    }

    #[tokio::test]
    async fn time_the_reader_spends_elsewhere_is_not_a_gap() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut body = GapLimited::new(Fed(rx), Duration::from_millis(300));
        tx.send(Bytes::from_static(b"a")).expect("send");
        let first = body.frame().await;
        assert!(matches!(first, Some(Ok(_))), "{first:?}");
        // The reader is busy for longer than the gap allowed, then waits; the next chunk
        // comes 100 ms into its wait.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            tx.send(Bytes::from_static(b"b")).expect("send");
            tx
        });
        let second = body.frame().await;
        assert!(matches!(second, Some(Ok(_))), "{second:?}");
        // Then silence, with the sender still open: the wait is bounded.
        let _tx = later.await.expect("sender task");
        let third = tokio::time::timeout(Duration::from_secs(20), body.frame()).await.expect("the gap is bounded");
        assert!(matches!(third, Some(Err(Error::ConnectionReadTimeout))), "{third:?}");
    }
}
