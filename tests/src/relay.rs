//! A TCP relay in front of a test server, which a test takes down and brings back on the same
//! port. To its clients the server is gone while it is down (new connections refused, open
//! ones cut), but the server behind keeps its state: moto holds buckets and objects in memory
//! only, so stopping moto itself would lose what the test wants to read back.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;

/// A running relay; it goes down when dropped.
pub struct Relay {
    /// Where clients connect (`127.0.0.1:PORT`); the same address down and up.
    pub address: SocketAddr,
    upstream: SocketAddr,
    /// Both ends of every relayed connection, so that going down can cut them.
    open: Arc<Mutex<Vec<TcpStream>>>,
    /// The accept loop while up: its stop flag and thread.
    accepting: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Relay {
    /// Relays a free loopback port to `upstream` (`host:port`).
    pub fn start(upstream: &str) -> anyhow::Result<Self> {
        let upstream: SocketAddr = upstream.parse().with_context(|| format!("{upstream:?} is not an address like 127.0.0.1:9000"))?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let mut relay = Self { address: listener.local_addr()?, upstream, open: Arc::default(), accepting: None };
        relay.accept_on(listener);
        Ok(relay)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Takes the server away: once this returns, the port refuses connections and every
    /// relayed connection is cut.
    pub fn down(&mut self) {
        if let Some((running, thread)) = self.accepting.take() {
            running.store(false, Ordering::SeqCst);
            // Wakes the accept loop, which then drops (closes) the listener.
            let _ = TcpStream::connect(self.address);
            let _ = thread.join();
        }
        for stream in self.open.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Brings the server back on the same port.
    pub fn up(&mut self) -> anyhow::Result<()> {
        if self.accepting.is_none() {
            let listener = TcpListener::bind(self.address).with_context(|| format!("binding {} again", self.address))?;
            self.accept_on(listener);
        }
        Ok(())
    }

    fn accept_on(&mut self, listener: TcpListener) {
        let running = Arc::new(AtomicBool::new(true));
        let (flag, open, upstream) = (running.clone(), self.open.clone(), self.upstream);
        let thread = std::thread::spawn(move || {
            for client in listener.incoming() {
                if !flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                if let Err(e) = relay_one(client, upstream, &open) {
                    eprintln!("test relay: {e}");
                }
            }
        });
        self.accepting = Some((running, thread));
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.down();
    }
}

/// Connects `client` to `upstream` and copies bytes both ways, each way on a thread of its own.
fn relay_one(client: TcpStream, upstream: SocketAddr, open: &Mutex<Vec<TcpStream>>) -> io::Result<()> {
    let server = TcpStream::connect(upstream)?;
    {
        let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
        open.push(client.try_clone()?);
        open.push(server.try_clone()?);
    }
    let (mut from_client, mut to_server) = (client.try_clone()?, server.try_clone()?);
    std::thread::spawn(move || {
        let _ = io::copy(&mut from_client, &mut to_server);
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let (mut from_server, mut to_client) = (server, client);
    std::thread::spawn(move || {
        let _ = io::copy(&mut from_server, &mut to_client);
        let _ = to_client.shutdown(Shutdown::Write);
    });
    Ok(())
}
