//! `turnpike plugin new|build|test`: writing a plugin, on the author's machine. No host or
//! broker is involved; `test` runs the component through the same runtime the host uses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use turnpike_authoring::{Kind, Lang};
use turnpike_config::PluginName;
use turnpike_pipeline::{Host, SampleRecord, SandboxConfig};
use turnpike_runtime::{input_len, input_record, BatchBuilder, InstanceLabels, InstanceLimits, PluginKind, RecordRef, Runtime, SinkInstance, SourceInstance};

use crate::output::{self, escape, Format};

/// `turnpike plugin new --lang L [--kind K] NAME`.
pub fn new(lang: &str, kind: &str, name: &str, parent: &Path) -> Result<()> {
    let lang = Lang::parse(lang)?;
    let kind = Kind::parse(kind)?;
    let dir = turnpike_authoring::new_plugin(lang, kind, name, parent)?;
    println!("created {} ({} {}). Next: see its README.md\n  cd {}\n  {}\n  turnpike plugin build", dir.display(), lang.as_str(), kind.as_str(), dir.display(), lang.native_test_command());
    Ok(())
}

/// `turnpike plugin build [DIR]`.
pub fn build(dir: &Path) -> Result<()> {
    let started = std::time::Instant::now();
    if let Ok(lang) = Lang::detect(dir) {
        if !turnpike_authoring::toolchain::is_installed(lang) {
            eprintln!("installing the {} toolchain into {} (first build only; about a minute)", lang.as_str(), turnpike_authoring::toolchain::dir().display());
        }
    }
    let built = turnpike_authoring::build(dir)?;
    let size = std::fs::metadata(&built.component).map(|m| m.len()).unwrap_or(0);
    println!("built {} ({}, {:.1} MB) in {:.1} s", built.component.display(), built.lang.as_str(), size as f64 / 1e6, started.elapsed().as_secs_f64());
    Ok(())
}

/// What `turnpike plugin test` runs.
pub struct TestArgs {
    pub file: PathBuf,
    pub input: Option<PathBuf>,
    pub config: Option<String>,
    pub max: u32,
    pub allow_http: Vec<String>,
    pub output: Format,
}

/// `turnpike plugin test FILE.wasm --input records.jsonl`.
pub fn test(args: TestArgs) -> Result<()> {
    let bytes = std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let config = match &args.config {
        None => json!({}),
        Some(c) => parse_config(c)?,
    };
    let records = match &args.input {
        Some(path) => read_records(path)?,
        None => Vec::new(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let http = turnpike_runtime::HttpGrant::parse(&args.allow_http).map_err(|e| anyhow::anyhow!("--allow-http {e}"))?;
    let limits = InstanceLimits { http, ..InstanceLimits::default() };
    let result = rt.block_on(run_test(bytes, config, records, args.max, limits))?;
    match args.output {
        Format::Json => println!("{}", output::json(&result)),
        Format::Table => print_result(&result),
    }
    let failed = result["errors"].as_array().is_some_and(|e| !e.is_empty());
    if failed {
        eprintln!("(some records failed; they are listed above)");
    }
    Ok(())
}

async fn run_test(bytes: Vec<u8>, config: Value, records: Vec<SampleRecord>, max: u32, limits: InstanceLimits) -> Result<Value> {
    let runtime = Runtime::new()?;
    let plugin = tokio::task::spawn_blocking({
        let runtime = runtime.clone();
        let bytes = bytes.clone();
        move || runtime.load(&bytes)
    })
    .await??;
    let labels = InstanceLabels { connector: "plugin test".into(), plugin: "local".into() };
    let config_text = config.to_string();
    match plugin.kind() {
        PluginKind::Transform => {
            // The host's own dry run, without a broker.
            let host = Host::new(runtime, Vec::new(), SandboxConfig::default());
            let name = PluginName::parse("local".to_owned())?;
            let info = host.load_plugin(name, "test".into(), bytes).await?;
            let reference = turnpike_config::PluginRef { name: info.name.clone(), version: Some(info.version.clone()) };
            let result = host.dry_run(&reference, &config, None, &records, None, limits.http.clone()).await?;
            Ok(json!({ "kind": "transform", "outputs": result.outputs, "errors": result.errors }))
        }
        PluginKind::Source => {
            let mut source = SourceInstance::create(&plugin, &config_text, None, "(output topic)", labels, limits).await?;
            let polled = source.poll(max).await?;
            let outputs: Vec<Value> = (0..input_len(&polled.batch)).map(|i| record_json(&polled.batch, i)).collect();
            let errors: Vec<Value> = polled.errors.iter().map(|e| json!({ "input": e.input, "kind": e.error.kind.as_str(), "message": e.error.message })).collect();
            let position = polled.position.map(|p| String::from_utf8_lossy(&p).into_owned());
            Ok(json!({ "kind": "source", "outputs": outputs, "errors": errors, "position": position }))
        }
        PluginKind::Sink => {
            let mut sink = SinkInstance::create(&plugin, &config_text, labels, limits).await?;
            let mut builder = BatchBuilder::default();
            for (i, r) in records.iter().enumerate() {
                let record = RecordRef { key: r.key.as_deref().map(str::as_bytes), value: r.value.as_deref().map(str::as_bytes), timestamp: None, topic: "input", partition: 0, offset: i as i64 };
                builder.push(record, r.headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes())));
            }
            let rejected = sink.write(&builder.finish()).await?;
            sink.flush().await?;
            let errors: Vec<Value> = rejected.iter().map(|e| json!({ "input": e.input, "kind": e.error.kind.as_str(), "message": e.error.message })).collect();
            Ok(json!({ "kind": "sink", "written": records.len() - rejected.len(), "errors": errors }))
        }
    }
}

fn record_json(batch: &turnpike_runtime::InputBatch, i: usize) -> Value {
    let (r, headers) = input_record(batch, i);
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    let headers: BTreeMap<&str, String> = headers.into_iter().map(|(k, v)| (k, String::from_utf8_lossy(v).into_owned())).collect();
    json!({ "input": i, "key": text(r.key), "value": text(r.value), "headers": headers, "topic": r.topic })
}

/// Config as JSON text, or `@FILE` (JSON or YAML).
fn parse_config(text: &str) -> Result<Value> {
    let (source, body) = match text.strip_prefix('@') {
        Some(path) => (path.to_owned(), std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?),
        None => ("--config".to_owned(), text.to_owned()),
    };
    let value: Value = serde_yaml_ng::from_str(&body).with_context(|| format!("{source}: not JSON or YAML"))?;
    if !value.is_object() {
        bail!("{source}: the plugin config must be a mapping of keys to values");
    }
    Ok(value)
}

/// One record per line: `{"key": …, "value": …, "headers": {…}}`, or any other JSON value,
/// taken as the value. A value that is not a string is written as JSON text.
fn read_records(path: &Path) -> Result<Vec<SampleRecord>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut records = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}:{}: not JSON", path.display(), n + 1))?;
        let as_text = |v: &Value| match v {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        };
        let record = match &v {
            Value::Object(o) if o.contains_key("value") || o.contains_key("key") => SampleRecord {
                key: o.get("key").and_then(as_text),
                value: o.get("value").and_then(as_text),
                headers: o.get("headers").and_then(Value::as_object).map(|h| h.iter().filter_map(|(k, v)| Some((k.clone(), as_text(v)?))).collect()).unwrap_or_default(),
            },
            other => SampleRecord { key: None, value: as_text(other), headers: BTreeMap::new() },
        };
        records.push(record);
    }
    Ok(records)
}

/// Prints what the plugin returned; all of it is plugin text, so escaped for the terminal.
fn print_result(result: &Value) {
    for o in result["outputs"].as_array().into_iter().flatten() {
        let topic = o["topic"].as_str().map(|t| format!(" -> {}", escape(t))).unwrap_or_default();
        let key = escape(o["key"].as_str().unwrap_or("null"));
        println!("[{}] key={key} value={}{topic}", o["input"], escape(o["value"].as_str().unwrap_or("null")));
    }
    if let Some(p) = result["position"].as_str() {
        println!("position after the poll: {}", escape(p));
    }
    if let Some(w) = result["written"].as_u64() {
        println!("written: {w}");
    }
    for e in result["errors"].as_array().into_iter().flatten() {
        println!("[{}] FAILED ({}): {}", e["input"], escape(e["kind"].as_str().unwrap_or("?")), escape(e["message"].as_str().unwrap_or("")));
    }
}
