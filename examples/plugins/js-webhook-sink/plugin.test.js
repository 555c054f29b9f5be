import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, FATAL, HttpError, RETRIABLE, RecordError, Response } from "turnpike-sdk";
import { clearHttp, createSink, flush, respondHttp, write } from "turnpike-sdk/testing";
import Webhook from "./plugin.js";

const URL = "http://hooks.example.com/in";
let sent;

beforeEach(() => {
  sent = [];
  respondHttp((request) => {
    sent.push(request);
    return new Response(200);
  });
});

test("one POST per flush, with every record written since the last one", () => {
  const sink = createSink(Webhook, { url: URL });
  assert.deepEqual(write(sink, [{ key: "a", value: "1" }, { key: null, value: '{"x":2}' }]), []);
  write(sink, [{ key: "c", value: null, topic: "orders", partition: 3, offset: 7 }]);
  assert.equal(sent.length, 0, "nothing is sent before the flush");
  flush(sink);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].method, "POST");
  assert.equal(sent[0].url, URL);
  assert.equal(sent[0].header("content-type"), "application/json");
  assert.deepEqual(sent[0].json(), [
    { topic: "test", partition: 0, offset: 0, key: "a", value: "1" },
    { topic: "test", partition: 0, offset: 1, key: null, value: '{"x":2}' },
    { topic: "orders", partition: 3, offset: 7, key: "c", value: null },
  ]);
  flush(sink);
  assert.equal(sent.length, 1, "an empty buffer sends nothing");
});

test("a failed flush is retriable and keeps the records for the retry", () => {
  const sink = createSink(Webhook, { url: URL });
  write(sink, [{ key: "a", value: "1" }]);
  respondHttp(() => new Response(503, { body: "down" }));
  assert.throws(() => flush(sink), (e) => e instanceof RecordError && e.kind === RETRIABLE && /503/.test(e.message));
  respondHttp(() => {
    throw new HttpError("connection refused");
  });
  assert.throws(() => flush(sink), (e) => e instanceof RecordError && e.kind === RETRIABLE);
  respondHttp((request) => (sent.push(request), new Response(204)));
  flush(sink);
  assert.deepEqual(sent.map((r) => r.json().length), [1]);
});

test("a host the connector does not grant stops the connector", () => {
  const sink = createSink(Webhook, { url: URL });
  write(sink, [{ value: "1" }]);
  clearHttp();
  assert.throws(() => flush(sink), (e) => e instanceof RecordError && e.kind === FATAL);
});

test("the url is checked when the sink is created", () => {
  for (const config of [{}, { url: "ftp://x/" }, { url: "http://" }]) {
    assert.throws(() => createSink(Webhook, config), (e) => e instanceof ConfigError && e.key === "url");
  }
  assert.throws(() => createSink(Webhook, { url: URL, timeout: 0 }), (e) => e instanceof ConfigError && e.key === "timeout");
  assert.throws(() => createSink(Webhook, { url: URL, uri: URL }), (e) => e instanceof ConfigError && e.key === "uri");
});
