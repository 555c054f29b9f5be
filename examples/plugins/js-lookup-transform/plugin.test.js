import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, FATAL, HttpError, INVALID_RECORD, RETRIABLE, Response } from "turnpike-sdk";
import { clearHttp, create, respondHttp, run, text } from "turnpike-sdk/testing";
import Lookup from "./plugin.js";

const customers = { c1: { tier: "gold" }, "a b": { tier: "silver" } };
let asked;

beforeEach(() => {
  asked = [];
  respondHttp((request) => {
    asked.push(request.url);
    const id = decodeURIComponent(request.url.split("/").pop());
    return id in customers ? new Response(200, { body: customers[id] }) : new Response(404);
  });
});

const values = ({ outputs }) => outputs.map(([i, r]) => [i, JSON.parse(text(r.value))]);

test("puts the answer under the field; a 404 leaves the record unchanged", () => {
  const result = run(create(Lookup, { url: "http://crm.example.com/customers/", field: "customer" }), [
    { key: "c1", value: '{"order":1}' },
    { key: "zz", value: '{"order":2}' },
    { key: "a b", value: '{"order":3}' },
  ]);
  assert.deepEqual(values(result), [
    [0, { order: 1, customer: { tier: "gold" } }],
    [1, { order: 2 }],
    [2, { order: 3, customer: { tier: "silver" } }],
  ]);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(asked, ["http://crm.example.com/customers/c1", "http://crm.example.com/customers/zz", "http://crm.example.com/customers/a%20b"]);
});

test("refused is fatal, other failures are retriable, bad records are invalid", () => {
  const lookup = create(Lookup, { url: "http://crm.example.com/customers" });
  const kinds = () =>
    run(lookup, [
      { key: "c1", value: "{}" },
      { key: "c1", value: "not json" },
      { key: null, value: "{}" },
    ]).errors.map(([i, e]) => [i, e.kind]);
  respondHttp(() => new Response(500));
  assert.deepEqual(kinds(), [[0, RETRIABLE], [1, INVALID_RECORD], [2, INVALID_RECORD]]);
  respondHttp(() => {
    throw new HttpError("connection refused");
  });
  assert.equal(kinds()[0][1], RETRIABLE);
  respondHttp(() => new Response(200, { body: "<html>" }));
  assert.equal(kinds()[0][1], RETRIABLE);
  clearHttp();
  const [[, refused]] = run(lookup, [{ key: "c1", value: "{}" }]).errors;
  assert.equal(refused.kind, FATAL);
  assert.match(refused.message, /no HTTP responder/);
});

test("the url and field are checked when the transform is created", () => {
  assert.throws(() => create(Lookup, {}), (e) => e instanceof ConfigError && e.key === "url");
  assert.throws(() => create(Lookup, { url: "crm.example.com" }), (e) => e instanceof ConfigError && e.key === "url");
  assert.throws(() => create(Lookup, { url: "http://crm.example.com", field: "" }), (e) => e instanceof ConfigError && e.key === "field");
  assert.throws(() => create(Lookup, { url: "http://crm.example.com", timeout: "5s" }), (e) => e instanceof ConfigError && e.key === "timeout");
  assert.throws(() => create(Lookup, { url: "http://crm.example.com", feild: "x" }), (e) => e instanceof ConfigError && e.key === "feild");
});

test("the timeout is passed on in milliseconds", () => {
  const timeouts = [];
  respondHttp((request) => (timeouts.push(request.timeout), new Response(404)));
  run(create(Lookup, { url: "http://crm.example.com", timeout: 2.5 }), [{ key: "k", value: "{}" }]);
  run(create(Lookup, { url: "http://crm.example.com" }), [{ key: "k", value: "{}" }]);
  assert.deepEqual(timeouts, [2500, null]);
});
