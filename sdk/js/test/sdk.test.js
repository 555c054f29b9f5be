// The JavaScript SDK's logic, natively: node --test sdk/js/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, Record, RecordError, Transform, create, decode, encode, run } from "../turnpike.js";

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

test("the batch layout round-trips", () => {
  const out = encode([[0, new Record("v0", { headers: [["h", "x"]], timestamp: 5 })], [1, new Record("v1", { key: "k1", topic: "other" })]], []);
  assert.deepEqual([...out.records.slice(0, 8)], [0, 0, 0xffffffff, 0, 2, 0, 1, 0xffffffff]);
  assert.deepEqual(out.topics, ["other"]);
  const rows = [];
  for (let i = 0; i < 2; i++) {
    const r = out.records.slice(i * 8, i * 8 + 8);
    rows.push(r[1], r[2], r[3], r[4], r[5], r[6], 0, 3);
  }
  const back = decode({ data: out.data, topics: ["t"], records: new Uint32Array(rows), positions: new BigInt64Array([7n, 5n, 8n, -(2n ** 63n)]), headers: out.headers });
  assert.deepEqual(back.map((r) => [r.key && text(r.key), text(r.value), r.headers.map(([k, v]) => [k, text(v)]), r.timestamp, r.offset, r.partition]), [
    [null, "v0", [["h", "x"]], 5, 7, 3],
    ["k1", "v1", [], null, 8, 3],
  ]);
});
