//! A real Chromium, driven over WebDriver (the system's `chromedriver`, which `tests/run.sh`
//! installs with apt-get when missing), for the console's tests: waits on conditions in the
//! page, screenshots at desktop and phone sizes, and the browser's own console log.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::elements::Element;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

/// How long a condition in the page may take.
pub const PAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// A headless Chromium session and the chromedriver serving it.
pub struct Browser {
    pub client: Client,
    driver: Child,
}

fn find_program(env: &str, names: &[&str]) -> Result<PathBuf> {
    if let Ok(path) = std::env::var(env) {
        return Ok(PathBuf::from(path));
    }
    for name in names {
        for dir in ["/usr/bin", "/usr/lib/chromium", "/usr/local/bin"] {
            let path = PathBuf::from(dir).join(name);
            if path.exists() {
                return Ok(path);
            }
        }
    }
    bail!("none of {names:?} is installed (set {env}); tests/run.sh installs Debian's chromium and chromium-driver")
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless Chromium at 1280×800 whose
    /// console log (every level) the test can read.
    pub async fn start() -> Result<Self> {
        let driver_path = find_program("TURNPIKE_TEST_CHROMEDRIVER", &["chromedriver"])?;
        let chromium = find_program("TURNPIKE_TEST_CHROMIUM", &["chromium", "chromium-browser", "chrome"])?;
        let port = crate::free_port();
        let driver = Command::new(&driver_path)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", driver_path.display()))?;
        let url = format!("http://127.0.0.1:{port}");
        let capabilities = json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800", "--no-first-run", "--disable-extensions"]
            },
            "goog:loggingPrefs": { "browser": "ALL" }
        });
        let serde_json::Value::Object(capabilities) = capabilities else { unreachable!() };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = loop {
            match ClientBuilder::new(connector.clone()).capabilities(capabilities.clone()).connect(&url).await {
                Ok(client) => break client,
                Err(e) if Instant::now() < deadline => {
                    tracing_free_log(&format!("chromedriver not ready yet: {e}"));
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => bail!("could not open a Chromium session through {}: {e}", driver_path.display()),
            }
        };
        Ok(Self { client, driver })
    }

    /// Goes to `url` and waits until `css` is in the page.
    pub async fn open(&self, url: &str, css: &str) -> Result<Element> {
        self.client.goto(url).await?;
        self.wait_for(css).await
    }

    /// The first element matching `css`, waiting up to [`PAGE_TIMEOUT`] for it.
    pub async fn wait_for(&self, css: &str) -> Result<Element> {
        self.client.wait().at_most(PAGE_TIMEOUT).for_element(Locator::Css(css)).await.with_context(|| format!("{css} never appeared in the page"))
    }

    /// Waits until `script` (a JavaScript expression) is truthy in the page; returns its value.
    pub async fn wait_js(&self, what: &str, script: &str) -> Result<Value> {
        let deadline = Instant::now() + PAGE_TIMEOUT;
        loop {
            let value = self.client.execute(&format!("return ({script});"), vec![]).await?;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false)) && value != json!(0) && value != json!("");
            if truthy {
                return Ok(value);
            }
            if Instant::now() > deadline {
                bail!("{what}: `{script}` still {value} after {PAGE_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The text of the first element matching `css`.
    pub async fn text(&self, css: &str) -> Result<String> {
        Ok(self.wait_for(css).await?.text().await?)
    }

    /// Clicks the first element matching `css`, once it is there.
    pub async fn click(&self, css: &str) -> Result<()> {
        self.wait_for(css).await?.click().await.with_context(|| format!("clicking {css}"))?;
        Ok(())
    }

    /// Saves the page at 1280×800 and at 390×844 (a phone) as `<name>-desktop.png` and
    /// `<name>-phone.png` under the screenshots directory; returns their paths.
    pub async fn screenshots(&self, name: &str) -> Result<Vec<PathBuf>> {
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir)?;
        let mut saved = Vec::new();
        for (size, (w, h)) in [("desktop", (1280, 800)), ("phone", (390, 844))] {
            self.client.set_window_size(w, h).await?;
            // Let the layout settle at the new size before the capture.
            self.client.execute("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));", vec![]).await?;
            let png = self.client.screenshot().await?;
            let path = dir.join(format!("{name}-{size}.png"));
            std::fs::write(&path, png)?;
            saved.push(path);
        }
        self.client.set_window_size(1280, 800).await?;
        Ok(saved)
    }

    /// The browser console's entries at level SEVERE (errors, failed loads, CSP refusals)
    /// since the last call.
    pub async fn console_errors(&self) -> Result<Vec<String>> {
        let log = self.client.issue_cmd(BrowserLog).await?;
        let entries = log.as_array().cloned().unwrap_or_default();
        Ok(entries.into_iter().filter(|e| e["level"] == "SEVERE").map(|e| e["message"].as_str().unwrap_or_default().to_owned()).collect())
    }

    /// Closes the session and stops chromedriver.
    pub async fn close(self) -> Result<()> {
        let closed = self.client.clone().close().await;
        closed.map_err(Into::into)
    }
}

impl Drop for Browser {
    /// Stops chromedriver. After [`Browser::close`] the session (and Chromium with it) is
    /// already gone; a test that failed before it may leave a headless Chromium behind.
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Where screenshots go: `target/tmp/console-screenshots` (the test's output directory).
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tmp/console-screenshots")
}

fn tracing_free_log(line: &str) {
    if std::env::var_os("TURNPIKE_TEST_VERBOSE").is_some() {
        eprintln!("{line}");
    }
}

/// Chromedriver's `GET log` (`POST /session/{id}/se/log` with `{"type": "browser"}`): the
/// browser console's entries since the last read. Not part of W3C WebDriver, so fantoccini
/// has no method for it.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/se/log", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}
