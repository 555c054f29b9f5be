// Outgoing HTTP natively: the responder, refusals, URLs, and the wasi:http transport the
// component uses, run against a fake of componentize-js's generated bindings.
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { HttpError, Response, http } from "../turnpike.js";
import { clearHttp, respondHttp } from "../testing.js";
import { setTransport } from "../http-transport.js";
import { wasiTransport } from "../wasi-http.js";

afterEach(() => {
  clearHttp();
  setTransport(null);
});

test("requests go to the responder; plain answers become Responses", () => {
  const seen = [];
  respondHttp((request) => {
    seen.push(request);
    return request.method === "GET" ? { status: 200, headers: { "Content-Type": "application/json" }, body: { ok: true } } : new Response(201, { body: "made" });
  });
  const got = http.get("http://api.example.com/x?y=1", { headers: { accept: "application/json" }, timeout: 1500 });
  assert.equal(got.status, 200);
  assert.ok(got.ok);
  assert.deepEqual(got.json(), { ok: true });
  assert.equal(got.header("content-type"), "application/json");
  assert.ok(got.body instanceof Uint8Array);
  const made = http.post("https://api.example.com/items", { name: "a" });
  assert.equal(made.text(), "made");
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.header("ACCEPT"), r.header("content-type"), r.text(), r.timeout]), [
    ["GET", "http://api.example.com/x?y=1", "application/json", null, "", 1500],
    ["POST", "https://api.example.com/items", null, "application/json", '{"name":"a"}', null],
  ]);
  http.send({ method: "put", url: "http://a.example/b", body: "text", headers: [["content-type", "text/plain"]] });
  assert.deepEqual([seen[2].method, seen[2].header("content-type"), seen[2].text()], ["PUT", "text/plain", "text"]);
});

test("without a responder a request is refused, as on a connector with no grant", () => {
  assert.throws(() => http.get("http://api.example.com/"), (e) => e instanceof HttpError && e.refused === true && e.message === "no HTTP responder installed (testing.respondHttp)");
});

test("a responder's HttpError reaches the plugin as thrown", () => {
  respondHttp(() => {
    throw new HttpError("api.example.com:80 is not in the connector's http.allow list", true);
  });
  assert.throws(() => http.get("http://api.example.com/"), (e) => e instanceof HttpError && e.refused);
  respondHttp(() => {
    throw new HttpError("connection-refused");
  });
  assert.throws(() => http.get("http://api.example.com/"), (e) => e instanceof HttpError && !e.refused);
});

test("URLs split as the Rust SDK splits them", () => {
  assert.deepEqual(http.splitUrl("http://127.0.0.1:8080/a/b?c=d"), ["http", "127.0.0.1:8080", "/a/b?c=d"]);
  assert.deepEqual(http.splitUrl("https://api.example.com"), ["https", "api.example.com", "/"]);
  assert.deepEqual(http.splitUrl("https://api.example.com?x=1"), ["https", "api.example.com", "?x=1"]);
  for (const bad of ["ftp://x/", "http:///x", "api.example.com", undefined]) {
    assert.throws(() => http.checkUrl(bad), (e) => e instanceof HttpError && !e.refused);
  }
  respondHttp(() => new Response(200));
  assert.throws(() => http.get("file:///etc/passwd"), HttpError);
});

/** A fake of the generated wasi:http bindings that records what the transport does. */
function fakeWasi({ refuse = null, late = null, status = 200, body = "hello", chunk = 3 } = {}) {
  const log = [];
  const dispose = Symbol.dispose || Symbol.for("dispose");
  const resource = (name, methods = {}) => Object.assign({ [dispose]: () => log.push(`drop ${name}`) }, methods);
  const types = {
    Fields: { fromList: (entries) => (log.push(["headers", entries.map(([k, v]) => [k, new TextDecoder().decode(v)])]), resource("fields")) },
    OutgoingRequest: class {
      constructor() {
        const blockingWriteAndFlush = (b) => {
          // The host closes the body of a request it refuses after `handle` returned.
          if (late) throw Object.assign(new Error("closed"), { payload: { tag: "closed" } });
          log.push(["write", new TextDecoder().decode(b)]);
        };
        this.body = () => resource("outgoing-body", { write: () => resource("output-stream", { blockingWriteAndFlush }) });
      }
      setMethod(m) {
        log.push(["method", m]);
      }
      setScheme(s) {
        log.push(["scheme", s]);
      }
      setAuthority(a) {
        log.push(["authority", a]);
      }
      setPathWithQuery(p) {
        log.push(["path", p]);
      }
    },
    RequestOptions: class {
      setFirstByteTimeout(n) {
        log.push(["first-byte", n]);
      }
      setBetweenBytesTimeout(n) {
        log.push(["between-bytes", n]);
      }
    },
    OutgoingBody: { finish: () => log.push("finish") },
    IncomingBody: { finish: () => resource("future-trailers") },
  };
  const handle = () => {
    if (refuse) throw Object.assign(new Error("err"), { payload: refuse });
    const bytes = new TextEncoder().encode(body);
    let at = 0;
    const stream = resource("input-stream", {
      blockingRead: (max) => {
        assert.equal(typeof max, "bigint");
        if (at >= bytes.length) throw Object.assign(new Error("closed"), { payload: { tag: "closed" } });
        const c = bytes.slice(at, at + chunk);
        at += chunk;
        return c;
      },
    });
    const response = resource("incoming-response", {
      status: () => status,
      headers: () => resource("response-fields", { entries: () => [["content-type", new TextEncoder().encode("text/plain")]] }),
      consume: () => resource("incoming-body", { stream: () => stream }),
    });
    const result = late ? { tag: "err", val: late } : { tag: "ok", val: response };
    return resource("future-response", { subscribe: () => resource("pollable", { block: () => log.push("block") }), get: () => ({ tag: "ok", val: result }) });
  };
  return { log, handle, types };
}

test("the wasi:http transport sends the request and reads the whole response", () => {
  const wasi = fakeWasi({ body: "hello world" });
  setTransport(wasiTransport(wasi));
  const got = http.post("https://api.example.com:8443/in?x=1", "abcdef", { headers: { "X-Token": "t" }, timeout: 2 });
  assert.equal(got.status, 200);
  assert.equal(got.text(), "hello world");
  assert.equal(got.header("Content-Type"), "text/plain");
  assert.deepEqual(wasi.log.slice(0, 7), [
    ["headers", [["x-token", "t"], ["content-length", "6"]]],
    ["method", { tag: "post" }],
    ["scheme", { tag: "HTTPS" }],
    ["authority", "api.example.com:8443"],
    ["path", "/in?x=1"],
    ["first-byte", 2_000_000n],
    ["between-bytes", 2_000_000n],
  ]);
  // Children are dropped before their parents are finished or dropped.
  const order = wasi.log.filter((s) => typeof s === "string");
  assert.deepEqual(order, ["drop output-stream", "finish", "block", "drop pollable", "drop future-response", "drop response-fields", "drop input-stream", "drop future-trailers", "drop incoming-response"]);
  assert.deepEqual(wasi.log.filter((s) => Array.isArray(s) && s[0] === "write"), [["write", "abcdef"]]);
});

test("the host's refusal codes are refused HttpErrors; other codes are not", () => {
  for (const [code, refused] of [
    [{ tag: "HTTP-request-denied" }, true],
    [{ tag: "destination-IP-prohibited" }, true],
    [{ tag: "connection-refused" }, false],
    [{ tag: "DNS-error", val: { rcode: "NXDOMAIN", infoCode: undefined } }, false],
  ]) {
    setTransport(wasiTransport(fakeWasi({ refuse: code })));
    assert.throws(
      () => http.get("http://api.example.com/"),
      (e) => e instanceof HttpError && e.refused === refused && e.message.includes(code.tag),
    );
  }
});

test("a refusal that closes the body before it is written is still a refusal", () => {
  // The race seen under the host: the body stream closes first, the code comes with the response.
  setTransport(wasiTransport(fakeWasi({ late: { tag: "HTTP-request-denied" } })));
  assert.throws(() => http.post("http://api.example.com/", "body"), (e) => e instanceof HttpError && e.refused && /HTTP-request-denied/.test(e.message));
  setTransport(wasiTransport(fakeWasi({ late: { tag: "connection-refused" } })));
  assert.throws(() => http.post("http://api.example.com/", "body"), (e) => e instanceof HttpError && !e.refused && /connection-refused/.test(e.message));
});

test("a 404 or 500 is a Response, not an HttpError", () => {
  setTransport(wasiTransport(fakeWasi({ status: 503, body: "" })));
  const got = http.get("http://api.example.com/");
  assert.equal(got.status, 503);
  assert.ok(!got.ok);
  assert.equal(got.body.length, 0);
});
