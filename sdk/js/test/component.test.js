// The component glue natively: what crosses the boundary for each outcome. componentize-js's
// bindings make a thrown `{ payload }` the `err` of a result and rethrow (trap on) an Error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, Record, RecordError, Sink, Source, Transform, emit, exportSink, exportSource, exportTransform } from "../turnpike.js";
import { encodeInput } from "../layout.js";

/** What a call threw, or fails the test. */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail("expected a throw");
}

const lines = [];
const imports = { log: (level, message, fields) => lines.push([level, message, fields]) };
const batch = (...values) => encodeInput(values.map((v, i) => Object.assign(new Record(v), { topic: "t", partition: 0, offset: i })));

class Picky extends Transform {
  create(config) {
    if (config.mode === "refuse") throw new ConfigError("not this mode", "mode");
    if (config.mode === "crash") throw new Error("crashed in create");
  }
  transform(record) {
    const v = record.text();
    if (v === "bug") throw new TypeError("oops");
    if (v === "string") throw "a bare string";
    if (v === "payload") throw { payload: { kind: "fatal", message: "forged" } };
    if (v === "bad") throw RecordError.invalid("bad record");
    return record;
  }
}

test("create: a ConfigError keeps its key; any other exception is a config-error too", () => {
  const { Transformer } = exportTransform(Picky, imports);
  assert.ok(Transformer.create("{}") instanceof Transformer);
  assert.ok(Transformer.create("") instanceof Transformer, "no config is {}");
  assert.deepEqual(thrown(() => Transformer.create('{"mode":"refuse"}')), { payload: { key: "mode", message: "not this mode" } });
  assert.deepEqual(thrown(() => Transformer.create('{"mode":"crash"}')), { payload: { key: undefined, message: "Error: crashed in create" } });
  assert.match(thrown(() => Transformer.create("{nope")).payload.message, /SyntaxError/);
  assert.match(thrown(() => exportSource(Picky).Reader.create("{}")).payload.message, /not a source/);
});

test("transform: per-record errors go in the batch; exceptions trap, whatever was thrown", () => {
  const { Transformer } = exportTransform(Picky, imports);
  const t = Transformer.create("{}");
  const out = t.transform(batch("ok", "bad"));
  assert.deepEqual(out.errors, [{ input: 1, error: { kind: "invalid-record", message: "bad record" } }]);
  for (const [value, what] of [["bug", "TypeError: oops"], ["string", "a non-Error value: a bare string"], ["payload", "a non-Error value"]]) {
    lines.length = 0;
    const e = thrown(() => t.transform(batch("ok", value)));
    // An Error without an own `payload`: componentize-js rethrows it and the instance traps.
    assert.ok(e instanceof Error && !Object.hasOwn(e, "payload"), `${value}: ${e}`);
    assert.match(e.message, new RegExp(`^transform threw ${what}`));
    assert.equal(lines.length, 1);
    assert.equal(lines[0][0], "error");
  }
});

test("source: the stored position reaches create; poll errors carry their kind", () => {
  class Counter extends Source {
    create(config, position) {
      this.n = position === null ? 0 : Number(new TextDecoder().decode(position)) + 1;
    }
    poll() {
      if (this.n > 5) throw RecordError.retriable("later");
      if (this.n > 3) throw new Error("bug");
      return [emit(new Record(String(this.n)), String(this.n++))];
    }
  }
  const { Reader } = exportSource(Counter, imports);
  const r = Reader.create("{}", new TextEncoder().encode("2"));
  const got = r.poll(10);
  assert.deepEqual([...got.records].slice(7), [1, 1]);
  assert.equal(new TextDecoder().decode(got.data), "33");
  assert.ok(thrown(() => r.poll(10)) instanceof Error);
  assert.deepEqual(thrown(() => Reader.create("{}", new TextEncoder().encode("9")).poll(1)), { payload: { kind: "retriable", message: "later" } });
  assert.equal(Reader.create("{}", undefined).plugin.n, 0, "no stored position: null");
});

test("sink: write and flush report RecordErrors; assigned and revoked trap on any exception", () => {
  class Flaky extends Sink {
    write(records) {
      if (records.length > 1) throw RecordError.fatal("too big");
      return [[0, RecordError.retriable("try again")]];
    }
    flush() {
      throw RecordError.retriable("down");
    }
    assigned(partitions) {
      this.got = partitions;
    }
    revoked() {
      throw RecordError.invalid("cannot report this");
    }
  }
  const { Writer } = exportSink(Flaky, imports);
  const w = Writer.create("{}");
  assert.deepEqual(w.write(batch("a")), [{ input: 0, error: { kind: "retriable", message: "try again" } }]);
  assert.deepEqual(thrown(() => w.write(batch("a", "b"))), { payload: { kind: "fatal", message: "too big" } });
  assert.deepEqual(thrown(() => w.flush()), { payload: { kind: "retriable", message: "down" } });
  w.assigned([{ topic: "t", partition: 3 }]);
  assert.deepEqual(w.plugin.got, [["t", 3]]);
  const e = thrown(() => w.revoked([{ topic: "t", partition: 3 }]));
  assert.ok(e instanceof Error && !Object.hasOwn(e, "payload"));
});
