//! The web console in a real Chromium (over WebDriver) against a host on real Kafka: a data
//! scientist masks a topic with the wizard and the masked records are read back from Kafka;
//! the connector page pauses, resumes, stops and shows a failure with its record; the
//! plugins page shows the host's verdict on an upload; the overview stays quick with 1,000
//! connectors. Screenshots of every page at 1280×800 and 390×844 land in
//! `target/tmp/console-screenshots`; the browser's console must log no error.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};
use turnpike_tests::browser::{screenshot_dir, Browser};
use turnpike_tests::*;

fn people(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("k{i}"), json!({ "customer": { "email": format!("user{i}@example.com"), "name": format!("User {i}") }, "card": "4111111111111111", "amount": i }).to_string()))
        .collect()
}

fn state_of(host: &HostProcess, name: &str) -> anyhow::Result<Value> {
    Ok(host.get(&format!("/v1/connectors/{name}"))?.1["state"].clone())
}

/// Fails on any error the browser logged, except the refusals the test provoked: Chromium
/// logs every 4xx answer to a `fetch` as an error, and `expected` names those requests.
async fn assert_no_console_errors(browser: &Browser, when: &str, expected: &[&str]) -> anyhow::Result<()> {
    let mut errors = browser.console_errors().await?;
    errors.retain(|e| !(e.contains("the server responded with a status of 4") && expected.iter().any(|url| e.contains(url))));
    anyhow::ensure!(errors.is_empty(), "the browser logged errors {when}: {errors:#?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_scientist_masks_a_topic_and_an_operator_runs_it_from_the_console() -> anyhow::Result<()> {
    let (topic, raw) = (unique("console-people"), unique("console-raw"));
    create_topic(&topic, 2).await?;
    create_topic(&raw, 1).await?;
    let producer = producer()?;
    produce(&producer, &topic, &people(6)).await?;
    produce(&producer, &raw, &[("a".into(), r#"{"email":"a@example.com"}"#.into()), ("b".into(), "not json at all".into())]).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-console"));
    let mut host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    let base = format!("http://{}", host.admin);
    let browser = Browser::start().await?;

    // The wizard: pick the topic, see its records, click two fields, preview, deploy.
    browser.open(&format!("{base}/#/mask"), &format!("#mask-topic option[value='{topic}']")).await?;
    browser.wait_for("#mask-topic").await?.select_by_value(&topic).await?;
    browser.click("#sample [data-path='customer.email']").await?;
    browser.click("#sample [data-path='card']").await?;
    browser.wait_for("#mask-fields tr[data-path='card'] select.mode").await?.select_by_value("partial").await?;
    anyhow::ensure!(!browser.wait_for("#deploy").await?.is_enabled().await?, "deploy is possible before a preview");
    browser.click("#preview-button").await?;
    browser.wait_js("the preview of the six sampled records", "document.querySelectorAll('#preview .preview-row').length === 6").await?;
    let preview = browser.text("#preview").await?;
    anyhow::ensure!(preview.contains("************1111"), "the card is shown partially masked in the preview: {preview}");
    browser.wait_js("deploy enabled after a good preview", "!document.querySelector('#deploy').disabled").await?;
    browser.screenshots("mask-preview").await?;
    // Any change to the selection needs a new preview before deploying.
    browser.click("#sample [data-path='customer.name']").await?;
    browser.wait_js("deploy disabled after a change", "document.querySelector('#deploy').disabled").await?;
    browser.click("#sample [data-path='customer.name']").await?;
    browser.click("#preview-button").await?;
    browser.wait_js("deploy enabled again", "!document.querySelector('#deploy').disabled").await?;
    let output = format!("{topic}.masked");
    let name_input = browser.wait_for("#connector-name").await?;
    name_input.clear().await?;
    name_input.send_keys("mask-people").await?;
    let output_input = browser.wait_for("#output-topic").await?;
    output_input.clear().await?;
    output_input.send_keys(&output).await?;
    browser.click("#deploy").await?;
    browser.wait_js("the new connector's page", "location.hash === '#/connectors/mask-people'").await?;
    browser.wait_js("the page shows it running", "document.querySelector('#state') && document.querySelector('#state').textContent === 'RUNNING'").await?;
    let masked = consume_until(&output, Duration::from_secs(60), distinct_keys_reach(6)).await?;
    for (key, value) in &masked {
        let v: Value = serde_json::from_str(value)?;
        let i: usize = key.trim_start_matches('k').parse()?;
        let email = v["customer"]["email"].as_str().unwrap_or_default();
        anyhow::ensure!(email.len() == 64 && email.chars().all(|c| c.is_ascii_hexdigit()), "the e-mail is hashed (the default mode): {value}");
        anyhow::ensure!(v["card"] == "************1111", "the card keeps its last four: {value}");
        anyhow::ensure!(v["customer"]["name"] == format!("User {i}") && v["amount"] == i, "other fields are untouched: {value}");
    }
    // A preview that fails (a record that is not JSON) cannot be deployed.
    browser.open(&format!("{base}/#/mask"), &format!("#mask-topic option[value='{raw}']")).await?;
    browser.wait_for("#mask-topic").await?.select_by_value(&raw).await?;
    browser.click("#sample [data-path='email']").await?;
    browser.click("#preview-button").await?;
    let failed = browser.wait_js("the failed preview's reason", "document.querySelector('#preview-error') && document.querySelector('#preview-error').textContent").await?;
    let deployable = browser.client.execute("return document.querySelector('#deploy').disabled;", vec![]).await?;
    anyhow::ensure!(deployable == json!(true), "a mask whose preview failed ({failed}) cannot be deployed");

    // The connector page: pause and resume change what the API reports; stop asks first.
    browser.open(&format!("{base}/#/connectors/mask-people"), "button[data-action='pause']").await?;
    browser.click("button[data-action='pause']").await?;
    host.wait_state("mask-people", "PAUSED", Duration::from_secs(60))?;
    browser.wait_js("the page shows it paused", "document.querySelector('#state').textContent === 'PAUSED'").await?;
    browser.click("button[data-action='resume']").await?;
    host.wait_state("mask-people", "RUNNING", Duration::from_secs(60))?;
    browser.wait_js("the page shows it running again", "document.querySelector('#state').textContent === 'RUNNING'").await?;
    // Edit and check before saving: the problem is shown at its field, and saving stays off.
    browser
        .client
        .execute(
            "const t = document.querySelector('#config-edit'); const c = JSON.parse(t.value); c.batch = Object.assign(c.batch || {}, { max_records: 0 }); t.value = JSON.stringify(c, null, 2); t.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![],
        )
        .await?;
    browser.click("#validate").await?;
    let problem = browser.text("#problems li[data-path='connector.batch.max_records']").await?;
    anyhow::ensure!(problem.contains("max_records"), "the problem names the field: {problem}");
    let saveable = browser.client.execute("return !document.querySelector('#save').disabled;", vec![]).await?;
    anyhow::ensure!(saveable == json!(false), "an edit that did not pass its check cannot be saved");
    browser.screenshots("connector").await?;
    browser.click("button[data-action='stop']").await?;
    browser.wait_js("a confirmation before stopping", "document.querySelector('#confirm-dialog').open").await?;
    anyhow::ensure!(state_of(&host, "mask-people")? == "RUNNING", "nothing stops before the confirmation");
    browser.click("#confirm-yes").await?;
    host.wait_state("mask-people", "STOPPED", Duration::from_secs(60))?;

    // A connector that fails on a record shows the error and the record.
    let poison = json!({ "topics": [raw], "output_topic": format!("{raw}.out"), "transforms": [{ "plugin": "pii-mask", "config": { "fields": ["email"] } }] });
    let (code, body) = http_json(&host.admin, "PUT", "/v1/connectors/poisoned", &poison)?;
    anyhow::ensure!(code == 201, "created: {code} {body}");
    host.wait_state("poisoned", "FAILED", Duration::from_secs(60))?;
    browser.open(&format!("{base}/#/connectors/poisoned"), "#error-record").await?;
    let record = browser.text("#error-record").await?;
    anyhow::ensure!(record.contains("not json at all"), "the failing record is shown: {record}");
    anyhow::ensure!(browser.text("#error").await?.contains("record_error"), "the error's class is shown");
    browser.screenshots("connector-failed").await?;

    // The plugins page: random bytes are refused in the host's words; a component is listed.
    let files = std::env::temp_dir().join(unique("console-uploads"));
    std::fs::create_dir_all(&files)?;
    let (junk, component) = (files.join("junk.wasm"), files.join("copy.wasm"));
    std::fs::write(&junk, (0..4096).map(|_| rand::random::<u8>()).collect::<Vec<u8>>())?;
    std::fs::write(&component, builtin("identity")?)?;
    browser.open(&format!("{base}/#/plugins"), "#upload-input").await?;
    browser.wait_for("#upload-name").await?.send_keys("junk").await?;
    browser.wait_for("#upload-version").await?.send_keys("1.0.0").await?;
    browser.wait_for("#upload-input").await?.send_keys(&junk.display().to_string()).await?;
    let verdict = browser.wait_js("the verdict on random bytes", "document.querySelector('#upload-result.error') && document.querySelector('#upload-result').textContent").await?;
    anyhow::ensure!(verdict.as_str().is_some_and(|v| v.contains("component")), "the refusal says it is not a component: {verdict}");
    browser.screenshots("plugins-refused").await?;
    let name = browser.wait_for("#upload-name").await?;
    name.clear().await?;
    name.send_keys("copy").await?;
    browser.wait_for("#upload-input").await?.send_keys(&component.display().to_string()).await?;
    browser.wait_js("the uploaded plugin listed", "document.querySelector('#plugins tr[data-plugin=\"copy\"]')").await?;
    anyhow::ensure!(browser.text("#upload-result").await?.contains("Uploaded copy 1.0.0"), "the upload is confirmed");
    let (_, listed) = host.get("/v1/plugins/copy")?;
    anyhow::ensure!(listed.to_string().contains("1.0.0"), "the host has it: {listed}");
    browser.screenshots("plugins").await?;

    // The events page shows the live stream; the overview lists both connectors.
    browser.open(&format!("{base}/#/events"), "#events").await?;
    let shown = "document.querySelectorAll(\"#events li[data-kind='state_changed'][data-connector='mask-people']\").length";
    let before = browser.client.execute(&format!("return {shown};"), vec![]).await?;
    let (code, body) = http_json(&host.admin, "POST", "/v1/connectors/mask-people/resume", &json!({}))?;
    anyhow::ensure!(code == 202, "resumed: {code} {body}");
    browser.wait_js("the resume's events arriving live", &format!("{shown} > {before}")).await?;
    browser.screenshots("events").await?;
    browser.open(&format!("{base}/#/"), "#connectors tr[data-connector='poisoned']").await?;
    browser.wait_for("#connectors tr[data-connector='mask-people'] .state").await?;
    browser.screenshots("overview").await?;
    assert_no_console_errors(&browser, "while masking, operating and uploading", &["/v1/plugins?name=junk", "/v1/connectors/mask-people/validate"]).await?;
    browser.close().await?;
    eprintln!("console screenshots in {}", screenshot_dir().display());
    Ok(())
}

/// `count` stopped connectors written to the state directory as a host saves them, so the
/// host starts with them and no Kafka client per connector.
fn stopped_connectors(state_dir: &std::path::Path, topic: &str, count: usize) -> anyhow::Result<()> {
    let dir = state_dir.join("connectors");
    std::fs::create_dir_all(&dir)?;
    for i in 0..count {
        let name = format!("c-{i:04}");
        let saved = json!({ "config": { "name": name, "topics": [topic], "output_topic": format!("{topic}-{i}"), "transforms": [{ "plugin": "identity" }] }, "lifecycle": "stopped" });
        std::fs::write(dir.join(format!("{name}.json")), serde_json::to_vec(&saved)?)?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_overview_renders_and_filters_a_thousand_connectors_quickly() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-console-1000"));
    stopped_connectors(&dir.join("turnpike-state"), &unique("idle"), 1000)?;
    let host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    let (_, list) = host.get("/v1/connectors")?;
    anyhow::ensure!(list["connectors"].as_array().map(Vec::len) == Some(1000), "the host loaded 1,000 connectors");
    let browser = Browser::start().await?;
    browser.open(&format!("http://{}/#/", host.admin), "#connectors tr[data-connector='c-0999']").await?;
    let first_render = browser.wait_js("the first render's time", "window.turnpikeTimings && window.turnpikeTimings.firstRenderMs").await?;
    let rows = browser.client.execute("return document.querySelectorAll('#connectors tr[data-connector]').length;", vec![]).await?;
    anyhow::ensure!(rows == json!(1000), "every connector has a row: {rows}");
    browser.wait_for("#filter-name").await?.send_keys("c-07").await?;
    browser.wait_js("the filter applied", "document.body.dataset.filtered === '100'").await?;
    let filter = browser.wait_js("the filter's time", "window.turnpikeTimings.filterMs !== undefined && String(window.turnpikeTimings.filterMs)").await?;
    let visible = browser.client.execute("return [...document.querySelectorAll('#connectors tr[data-connector]')].filter(r => !r.hidden).length;", vec![]).await?;
    anyhow::ensure!(visible == json!(100), "c-0700…c-0799 stay visible: {visible}");
    browser.screenshots("overview-1000-filtered").await?;
    // What the page itself loaded (the document, its scripts and style), as the browser saw it.
    let assets = browser
        .client
        .execute("return performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname.startsWith('/ui/')).reduce((n, e) => n + e.decodedBodySize, performance.getEntriesByType('navigation')[0].decodedBodySize);", vec![])
        .await?;
    let (render_ms, filter_ms) = (first_render.as_f64().unwrap_or(f64::MAX), filter.as_str().and_then(|f| f.parse::<f64>().ok()).unwrap_or(f64::MAX));
    eprintln!("console with 1,000 connectors: first render at {render_ms:.0} ms after navigation, a name filter applied in {filter_ms:.1} ms; page assets {assets} bytes");
    anyhow::ensure!(render_ms < 10_000.0, "the overview rendered 1,000 connectors in {render_ms} ms");
    anyhow::ensure!(filter_ms < 500.0, "a filter over 1,000 rows took {filter_ms} ms (the page froze)");
    assert_no_console_errors(&browser, "with 1,000 connectors", &[]).await?;
    browser.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_shared_host_the_console_asks_for_a_token_once_per_session() -> anyhow::Result<()> {
    let topic = unique("analytics.console");
    create_topic(&topic, 1).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-console-auth"));
    std::fs::create_dir_all(&dir)?;
    let port = free_port();
    let config = format!(
        "kafka:\n  bootstrap.servers: {}\n  session.timeout.ms: 6000\nadmin:\n  listen: 127.0.0.1:{port}\n  auth: true\nteams:\n  analytics: {{ topics: [\"analytics.*\"] }}\n",
        bootstrap()
    );
    let config_file = dir.join("turnpike.yaml");
    std::fs::write(&config_file, &config)?;
    let config_arg = config_file.to_str().context("path")?;
    let (code, stdout, stderr) = turnpike_cli(&["token", "create", "-c", config_arg, "--role", "editor", "--team", "analytics"], None)?;
    anyhow::ensure!(code == 0, "token: {stderr}");
    let token = stdout.trim().to_owned();
    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let browser = Browser::start().await?;
    let base = format!("http://{}", host.admin);

    browser.open(&format!("{base}/#/mask"), "#token-input").await?;
    browser.wait_js("the token form shown", "!document.querySelector('#token-form').hidden").await?;
    browser.screenshots("token").await?;
    browser.wait_for("#token-input").await?.send_keys(&token).await?;
    browser.click("#token-save").await?;
    // Signed in: the wizard lists the team's topic, and the form is gone.
    browser.wait_for(&format!("#mask-topic option[value='{topic}']")).await?;
    browser.wait_js("the token form hidden", "document.querySelector('#token-form').hidden").await?;
    // The 401s before the token was given are expected, and nothing else.
    let mut before_sign_in = browser.console_errors().await?;
    before_sign_in.retain(|e| !e.contains("the server responded with a status of 401"));
    anyhow::ensure!(before_sign_in.is_empty(), "errors before signing in: {before_sign_in:#?}");
    let stored = browser.client.execute("return JSON.stringify(localStorage) + document.cookie;", vec![]).await?;
    anyhow::ensure!(!stored.to_string().contains("tpk_"), "the token is kept only in the tab's session storage: {stored}");
    // Another page and a reload of the tab: no second prompt.
    browser.open(&format!("{base}/#/plugins"), "#plugins tr[data-plugin='pii-mask']").await?;
    browser.client.refresh().await?;
    browser.wait_for("#plugins tr[data-plugin='pii-mask']").await?;
    let prompted = browser.client.execute("return !document.querySelector('#token-form').hidden;", vec![]).await?;
    anyhow::ensure!(prompted == json!(false), "the token is kept for the session");
    assert_no_console_errors(&browser, "once signed in", &[]).await?;
    browser.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn from_turnpike_dev_a_new_user_masks_a_topic_through_the_printed_url() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-dev-console"));
    std::fs::create_dir_all(&dir)?;
    let stdout_path = dir.join("stdout");
    let mut dev = KillOnDrop(
        std::process::Command::new(turnpike_bin())
            .args(["dev", "--listen", &format!("127.0.0.1:{}", free_port()), "--rate", "20", "--samples", "0"])
            .stdout(std::fs::File::create(&stdout_path)?)
            .stderr(std::process::Stdio::null())
            .spawn()?,
    );
    let url = wait_until("turnpike dev to print the console's URL", Duration::from_secs(60), || {
        let printed = std::fs::read_to_string(&stdout_path)?;
        Ok(printed.lines().find_map(|l| l.trim().strip_prefix("Open the console: ")).and_then(|rest| rest.split_whitespace().next()).map(str::to_owned))
    })?;
    let address = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let browser = Browser::start().await?;
    let started = std::time::Instant::now();
    // Only what the page offers: the overview's button, then the wizard's four steps.
    browser.open(&url, "#new-mask").await?;
    browser.click("#new-mask").await?;
    browser.wait_for("#mask-topic option[value='customers']").await?;
    browser.wait_for("#mask-topic").await?.select_by_value("customers").await?;
    for field in ["email", "ssn", "card.number"] {
        browser.click(&format!("#sample [data-path='{field}']")).await?;
    }
    browser.click("#preview-button").await?;
    browser.wait_js("deploy enabled by the preview", "!document.querySelector('#deploy').disabled").await?;
    let name = browser.wait_for("#connector-name").await?;
    name.clear().await?;
    name.send_keys("my-mask").await?;
    let output = browser.wait_for("#output-topic").await?;
    output.clear().await?;
    output.send_keys("customers.safe").await?;
    browser.click("#deploy").await?;
    browser.wait_js("the new connector running", "location.hash === '#/connectors/my-mask' && document.querySelector('#state') && document.querySelector('#state').textContent === 'RUNNING'").await?;
    wait_until("records through my-mask", Duration::from_secs(60), || {
        let (_, status) = http_get(&address, "/v1/connectors/my-mask")?;
        Ok((status["records_out"].as_u64().unwrap_or(0) > 0).then_some(()))
    })?;
    let took = started.elapsed();
    eprintln!("turnpike dev: from opening {url} to masked records flowing through the wizard's connector: {took:.1?}");
    anyhow::ensure!(took < Duration::from_secs(60), "masking a topic from the printed URL took {took:?}");
    browser.screenshots("dev-mask-deployed").await?;
    assert_no_console_errors(&browser, "masking a topic in turnpike dev", &[]).await?;
    browser.close().await?;
    std::process::Command::new("kill").arg("-TERM").arg(dev.0.id().to_string()).status()?;
    wait_until("turnpike dev to stop", Duration::from_secs(30), || Ok(dev.0.try_wait()?))?;
    Ok(())
}

/// A child process killed if the test ends early.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
