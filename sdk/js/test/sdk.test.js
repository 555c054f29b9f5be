// The JavaScript SDK's logic, natively: node --test sdk/js/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, Record, RecordError, Transform, create, run } from "../turnpike.js";

class Mask extends Transform {
  create(config) {
    if (!config.field) throw new ConfigError("say which field to mask", "field");
    this.field = config.field;
  }
  process(record) {
    const data = record.json();
    if (data.drop) return null;
    if (data.retry) throw new RecordError("busy", "retriable");
    data[this.field] = "***";
    return data.audit ? [record.withValue(data), new Record("audit", { topic: "audit" })] : record.withValue(data);
  }
}

const text = (b) => new TextDecoder().decode(b);

test("outputs, drops and errors", () => {
  const plugin = create(Mask, { field: "email" });
  const inputs = ['{"email":"a@b"}', '{"drop":true}', "not json", '{"retry":1}', '{"audit":1,"email":"x"}'].map((v) => new Record(v, { key: "k" }));
  const { outputs, errors } = run(plugin, inputs);
  assert.deepEqual(outputs.map(([i, r]) => [i, text(r.value)]), [[0, '{"email":"***"}'], [4, '{"audit":1,"email":"***"}'], [4, "audit"]]);
  assert.deepEqual(errors.map(([i, kind]) => [i, kind]), [[2, "invalid"], [3, "retriable"]]);
  assert.match(errors[0][2], /not JSON/);
});

test("config errors name the key", () => {
  assert.throws(() => create(Mask, {}), (e) => e instanceof ConfigError && e.key === "field");
});
