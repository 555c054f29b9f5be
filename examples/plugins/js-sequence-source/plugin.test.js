import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError } from "turnpike-sdk";
import { createSource, poll, text } from "turnpike-sdk/testing";
import Sequence from "./plugin.js";

const numbers = (items) => items.map(({ record }) => record.json().n);

test("counts from 0, keyed and positioned by the number", () => {
  const items = poll(createSource(Sequence, { name: "demo" }), 3);
  assert.deepEqual(
    items.map(({ record, position, error }) => [text(record.key), record.json(), text(position), error]),
    [
      ["0", { n: 0, source: "demo" }, "0", null],
      ["1", { n: 1, source: "demo" }, "1", null],
      ["2", { n: 2, source: "demo" }, "2", null],
    ],
  );
});

test("polls continue where the last one stopped, per_poll at a time", () => {
  const source = createSource(Sequence, { name: "demo", per_poll: 2 });
  assert.deepEqual(numbers(poll(source, 10)), [0, 1]);
  assert.deepEqual(numbers(poll(source, 1)), [2]);
});

test("resumes right after the stored position", () => {
  assert.deepEqual(numbers(poll(createSource(Sequence, { name: "demo" }, "41"), 2)), [42, 43]);
});

test("stops after limit records", () => {
  const source = createSource(Sequence, { name: "demo", limit: 3 });
  assert.deepEqual(numbers(poll(source, 2)), [0, 1]);
  assert.deepEqual(numbers(poll(source, 2)), [2]);
  assert.deepEqual(poll(source, 2), []);
  assert.deepEqual(poll(createSource(Sequence, { name: "demo", limit: 3 }, "2"), 5), []);
  assert.deepEqual(poll(createSource(Sequence, { name: "demo", limit: 0 }), 5), []);
});

test("bad configuration names the key", () => {
  const refused = (config, key) => assert.throws(() => createSource(Sequence, config), (e) => e instanceof ConfigError && e.key === key);
  refused({}, "name");
  refused({ name: 7 }, "name");
  refused({ name: "demo", limit: -1 }, "limit");
  refused({ name: "demo", per_poll: 0 }, "per_poll");
  refused({ name: "demo", perPoll: 5 }, "perPoll");
  refused({ name: "demo", per_poll: 2.5 }, "per_poll");
  assert.throws(() => createSource(Sequence, { name: "demo" }, "not a number"), ConfigError);
});
