import { test } from "node:test";
import assert from "node:assert/strict";
import { Record, create, run } from "./.turnpike/js/turnpike.js";
import Redact from "./plugin.js";

test("redacts the field and fails what is not JSON", () => {
  const { outputs, errors } = run(create(Redact, { field: "email" }), [new Record('{"email":"a@b.c","n":1}'), new Record("nope")]);
  assert.deepEqual(outputs.map(([, r]) => new TextDecoder().decode(r.value)), ['{"email":"***","n":1}']);
  assert.deepEqual(errors.map(([i]) => i), [1]);
});
