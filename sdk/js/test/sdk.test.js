// The JavaScript SDK's transform path and error vocabulary, natively: node --test sdk/js/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, FATAL, INVALID_RECORD, RETRIABLE, Record, RecordError, Transform } from "../turnpike.js";
import { create, run, text } from "../testing.js";

class Mask extends Transform {
  create(config) {
    if (!config.field) throw new ConfigError("say which field to mask", "field");
    this.field = config.field;
  }
  transform(record) {
    const data = record.json();
    if (data.drop) return null;
    if (data.retry) throw RecordError.retriable("busy");
    if (data.half) {
      // Outputs of a record that then fails are discarded with it.
      return [record.withValue("partial"), { not: "a record" }];
    }
    data[this.field] = "***";
    return data.audit ? [record.withValue(data), new Record("audit", { topic: "audit" })] : record.withValue(data);
  }
}

test("outputs, drops and per-record errors", () => {
  const plugin = create(Mask, { field: "email" });
  const inputs = ['{"email":"a@b"}', '{"drop":true}', "not json", '{"retry":1}', '{"audit":1,"email":"x"}'].map((value) => ({ key: "k", value }));
  const { outputs, errors } = run(plugin, inputs);
  assert.deepEqual(outputs.map(([i, r]) => [i, text(r.value), r.topic]), [[0, '{"email":"***"}', null], [4, '{"audit":1,"email":"***"}', null], [4, "audit", "audit"]]);
  assert.deepEqual(errors.map(([i, e]) => [i, e.kind]), [[2, INVALID_RECORD], [3, RETRIABLE]]);
  assert.ok(errors.every(([, e]) => e instanceof RecordError));
  assert.match(errors[0][1].message, /not JSON/);
});

test("error kinds are spelled once, and checked", () => {
  assert.deepEqual([INVALID_RECORD, RETRIABLE, FATAL], ["invalid_record", "retriable", "fatal"]);
  assert.equal(new RecordError("x").kind, INVALID_RECORD);
  assert.equal(RecordError.invalid("x").kind, INVALID_RECORD);
  assert.equal(RecordError.fatal("x").kind, FATAL);
  assert.throws(() => new RecordError("x", "invalid"), TypeError);
  assert.equal(new ConfigError("bad").key, null);
});

test("config errors name the key; any other failure in create is a ConfigError", () => {
  assert.throws(() => create(Mask, {}), (e) => e instanceof ConfigError && e.key === "field");
  class Broken extends Transform {
    create() {
      null.x;
    }
  }
  assert.throws(() => create(Broken), (e) => e instanceof ConfigError && e.key === null && /TypeError/.test(e.message));
});

test("an exception that is not a RecordError propagates: a fault, not a failed record", () => {
  class Buggy extends Transform {
    transform(record) {
      if (text(record.value) === "boom") throw new TypeError("a bug");
      return record;
    }
  }
  assert.throws(() => run(create(Buggy), [{ value: "fine" }, { value: "boom" }]), (e) => e instanceof TypeError && e.message === "a bug");
  // Returning something that is not a Record is a bug too.
  assert.throws(() => run(create(Mask, { field: "f" }), [{ value: '{"half":1}' }]), TypeError);
  class Async extends Transform {
    async transform(record) {
      return record;
    }
  }
  assert.throws(() => run(create(Async), [{ value: "x" }]), /must be synchronous/);
});

test("a ConfigError thrown after create is fatal", () => {
  class Late extends Transform {
    transform() {
      throw new ConfigError("no longer valid", "mode");
    }
  }
  const { errors } = run(create(Late), [{ value: "x" }]);
  assert.deepEqual(errors.map(([i, e]) => [i, e.kind, e.message]), [[0, FATAL, "mode: no longer valid"]]);
});

test("a record forwarded unchanged goes to the connector's topic; a routed one where it says", () => {
  class Route extends Transform {
    transform(record) {
      if (text(record.value) === "same") return record;
      record.topic = "elsewhere";
      return record;
    }
  }
  const { outputs } = run(create(Route), [{ value: "same", topic: "in", key: "k", headers: { h: "v" }, timestamp: 5 }, { value: "moved", topic: "in" }]);
  assert.deepEqual(outputs.map(([i, r]) => [i, r.topic, text(r.key), r.headers.map(([k, v]) => [k, text(v)]), r.timestamp]), [
    [0, null, "k", [["h", "v"]], 5],
    [1, "elsewhere", null, [], null],
  ]);
});

test("records carry where they were read and their index", () => {
  const seen = [];
  class Look extends Transform {
    transform(record) {
      seen.push([record.topic, record.partition, record.offset, record.index, record.timestamp, record.keyText()]);
    }
  }
  run(create(Look), [{ value: "a" }, { value: "b", topic: "t", partition: 2, offset: 9, timestamp: 1_700_000_000_000, key: "k" }]);
  assert.deepEqual(seen, [["test", 0, 0, 0, null, null], ["t", 2, 9, 1, 1_700_000_000_000, "k"]]);
});

test("RecordError is recognised across two copies of the SDK", async () => {
  const copy = await import(`../errors.js?copy=${Date.now()}`);
  assert.ok(copy.RecordError.retriable("x") instanceof RecordError);
  assert.ok(new RecordError("x") instanceof copy.RecordError);
  class Mine extends RecordError {}
  assert.ok(!(new RecordError("x") instanceof Mine));
});

test("a value assigned as text or JSON is written as its bytes, not garbage", () => {
  class Assigning extends Transform {
    transform(record) {
      record.value = record.key[0] === 0x74 ? '{"a":1}' : { b: 2 };
      return record;
    }
  }
  const { outputs } = run(create(Assigning), [{ key: "t", value: "x" }, { key: "j", value: "y" }]);
  assert.deepEqual(outputs.map(([, r]) => text(r.value)), ['{"a":1}', '{"b":2}']);
});
