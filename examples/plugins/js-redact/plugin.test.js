import { test } from "node:test";
import assert from "node:assert/strict";
import { INVALID_RECORD } from "turnpike-sdk";
import { create, run, text } from "turnpike-sdk/testing";
import Redact from "./plugin.js";

test("redacts the field and fails what is not JSON", () => {
  const { outputs, errors } = run(create(Redact, { field: "email" }), [{ key: "c1", value: '{"email":"a@b.c","n":1}' }, { key: "c2", value: "nope" }]);
  assert.deepEqual(outputs.map(([i, r]) => [i, text(r.key), text(r.value)]), [[0, "c1", '{"email":"***","n":1}']]);
  assert.deepEqual(errors.map(([i, e]) => [i, e.kind]), [[1, INVALID_RECORD]]);
});
