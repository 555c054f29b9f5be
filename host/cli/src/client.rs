//! A small client of the admin API for the CLI: JSON in, JSON out, API errors turned into
//! messages that say what the server said to fix.

use std::io::Read;

use anyhow::{bail, Context, Result};
use serde_json::Value;
use ureq::Agent;

/// The admin API at `base` (e.g. `http://127.0.0.1:8080`).
pub struct Api {
    base: String,
    agent: Agent,
}

impl Api {
    pub fn new(base: &str) -> Self {
        // 4xx/5xx are answers to show, not transport errors.
        let agent: Agent = Agent::config_builder().http_status_as_error(false).build().into();
        Self { base: base.trim_end_matches('/').to_owned(), agent }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn answer(&self, result: Result<ureq::http::Response<ureq::Body>, ureq::Error>, what: &str) -> Result<Value> {
        let mut response = result.with_context(|| format!("{what}: is the host running with its admin API at {}?", self.base))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status >= 400 {
            let mut message = format!("{what}: {} ({status})", body["detail"].as_str().unwrap_or(text.trim()));
            if let Some(problems) = body["problems"].as_array() {
                for p in problems {
                    message.push_str(&format!("\n  - {}: {}", p["key"].as_str().unwrap_or("?"), p["message"].as_str().unwrap_or("")));
                }
            }
            bail!(message);
        }
        Ok(body)
    }

    pub fn get(&self, path: &str) -> Result<Value> {
        self.answer(self.agent.get(&self.url(path)).call(), &format!("GET {path}"))
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.agent.post(&self.url(path)).send_json(body), &format!("POST {path}"))
    }

    pub fn put(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.agent.put(&self.url(path)).send_json(body), &format!("PUT {path}"))
    }

    pub fn delete(&self, path: &str) -> Result<Value> {
        self.answer(self.agent.delete(&self.url(path)).call(), &format!("DELETE {path}"))
    }

    /// POSTs a component from `reader` as the raw body.
    pub fn upload(&self, path: &str, reader: impl Read) -> Result<Value> {
        let mut reader = reader;
        let request = self.agent.post(&self.url(path)).header("content-type", "application/wasm");
        self.answer(request.send(ureq::SendBody::from_reader(&mut reader)), "upload")
    }
}
