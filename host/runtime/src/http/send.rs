//! Sends one granted request: check the name, resolve once, drop internal addresses, connect
//! to a checked address, speak HTTP/1.1 (over TLS for `https`, verified against the name).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http::uri::Scheme;
use http_body_util::BodyExt;
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use super::grant::{is_internal, HttpGrant};

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

    let resolved: Vec<SocketAddr> = match tokio::time::timeout(connect_timeout, tokio::net::lookup_host((host.as_str(), port))).await {
        Err(_) => return Err(failed(Error::DnsTimeout)),
        Ok(Err(e)) => return Err(failed(Error::DnsError { rcode: Some(e.to_string()), info_code: None })),
        Ok(Ok(addrs)) => addrs.collect(),
    };
    let (safe, internal): (Vec<SocketAddr>, Vec<SocketAddr>) = resolved.into_iter().partition(|a| !is_internal(a.ip()) || grant.names_address(a.ip()));
    if safe.is_empty() {
        let shown: Vec<String> = internal.iter().map(|a| a.ip().to_string()).collect();
        return Err(refuse(
            format!("{host} resolves to internal address {} which the grant does not name (add the address itself to http.allow to reach it)", shown.join(", ")),
            Error::DestinationIpProhibited,
        ));
    }

    let stream = connect(&safe, connect_timeout).await?;
    let io: Box<dyn Stream> = if use_tls {
        let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| failed(Error::from(e)))?;
        let tls = tls_connector().connect(name, stream).await.map_err(|e| failed(Error::Tls(e)))?;
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
    let response = response.map(|body| body.map_err(Error::from).boxed_unsync());
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
