//! A real HTTP/1.1 server on 127.0.0.1 for the tests, answering through a closure and
//! keeping every request it received. Plain `std`: one thread per connection, one request per
//! connection (`connection: close`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// `POST`, `GET`, …
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Header names (lower-case) and values.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
    /// The status the server answered it with.
    pub status: u16,
}

impl Received {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// An answer: status, headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

type Handler = dyn Fn(&Received) -> Answer + Send + Sync;

/// A running test server. It stops with the test process.
pub struct TestServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl TestServer {
    /// Starts a server answering with `handler`.
    pub fn start(handler: impl Fn(&Received) -> Answer + Send + Sync + 'static) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let (kept, handler): (_, Arc<Handler>) = (received.clone(), Arc::new(handler));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, handler) = (kept.clone(), handler.clone());
                std::thread::spawn(move || {
                    if let Err(e) = serve_one(stream, &kept, &*handler) {
                        eprintln!("test server: {e}");
                    }
                });
            }
        });
        Ok(Self { port, received })
    }

    /// Every request so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A JSON answer.
pub fn json(status: u16, body: &str) -> Answer {
    (status, vec![("content-type".into(), "application/json".into())], body.as_bytes().to_vec())
}

fn serve_one(stream: TcpStream, kept: &Mutex<Vec<Received>>, handler: &Handler) -> anyhow::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or_default().to_owned(), parts.next().unwrap_or_default().to_owned());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(len, 0);
        reader.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16)?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    let mut request = Received { method, target, headers, body, status: 0 };
    let (status, answer_headers, answer_body) = handler(&request);
    request.status = status;
    kept.lock().unwrap_or_else(|p| p.into_inner()).push(request);
    let mut out = stream;
    let mut head = format!("HTTP/1.1 {status} Test\r\ncontent-length: {}\r\nconnection: close\r\n", answer_body.len());
    for (k, v) in answer_headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.write_all(&answer_body)?;
    Ok(())
}
