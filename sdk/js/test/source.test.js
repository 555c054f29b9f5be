// Sources natively: the source-batch layout of wit/source.wit, the poll helpers, errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, FATAL, Record, RecordError, RETRIABLE, Source, emit, emitUnpositioned, fail } from "../turnpike.js";
import { pollBatch } from "../source.js";
import { createSource, poll, text } from "../testing.js";

const A = 0xffffffff;
const NONE = -(2n ** 63n);
const bytes = (s) => new TextEncoder().encode(s);

/** Returns whatever the test puts in `items`. */
class Fixed extends Source {
  create(config, position) {
    this.items = config.items ?? [];
    this.position = position;
  }
  poll() {
    return this.items;
  }
}

test("a poll is laid out as wit/source.wit says: nine u32s per record, positions in data", () => {
  const source = createSource(Fixed);
  source.items = [
    emit(new Record("v0", { key: "k0", headers: [["h", "x"]], timestamp: 1_700_000_000_000 }), "p0"),
    emitUnpositioned(new Record(null, { topic: "side" })),
    fail("raw line", new Uint8Array([0xff, 0x00]), RecordError.invalid("bad")),
    emit(new Record("é", { topic: "side" }), bytes("p3")),
  ];
  const batch = pollBatch(source, 10);
  // Bytes in the order every writer uses: key, value, header keys and values, position last.
  assert.deepEqual([...batch.data], [...bytes("k0v0hxp0"), ...bytes("raw line"), 0xff, 0x00, ...bytes("é"), ...bytes("p3")]);
  assert.deepEqual(batch.topics, ["side"]);
  assert.deepEqual(
    [...batch.records],
    [
      [0, 2, 2, 2, 0, 1, A, 6, 2],
      [0, A, 0, A, 1, 0, 0, 0, A],
      [0, A, 8, 8, 1, 0, A, 16, 2],
      [0, A, 18, 2, 1, 0, 0, 20, 2],
    ].flat(),
  );
  assert.deepEqual([...batch.timestamps], [1_700_000_000_000n, NONE, NONE, NONE]);
  assert.deepEqual([...batch.headers], [4, 1, 5, 1]);
  assert.deepEqual(batch.errors, [{ input: 2, error: { kind: "invalid-record", message: "bad" } }]);
});

test("poll items read back with their positions and errors", () => {
  const source = createSource(Fixed);
  source.items = [emit(new Record("a", { key: "1" }), "1"), emitUnpositioned(new Record("b")), fail(new Record("?!"), "3", "unparseable")];
  const items = poll(source, 3);
  assert.deepEqual(
    items.map(({ record, position, error }) => [text(record.key), text(record.value), text(position), error && [error.kind, error.message]]),
    [
      ["1", "a", "1", null],
      [null, "b", null, null],
      [null, "?!", "3", ["invalid_record", "unparseable"]],
    ],
  );
});

test("create gets the stored position as bytes (text is accepted by the helper)", () => {
  assert.equal(createSource(Fixed).position, null);
  assert.deepEqual([...createSource(Fixed, {}, "42").position], [...bytes("42")]);
  assert.deepEqual([...createSource(Fixed, {}, new Uint8Array([1, 2])).position], [1, 2]);
});

test("a RecordError thrown by poll fails the poll with its kind", () => {
  class Down extends Source {
    poll() {
      throw RecordError.retriable("upstream is down");
    }
  }
  assert.throws(() => poll(createSource(Down)), (e) => e instanceof RecordError && e.kind === RETRIABLE);
  class Lazy extends Source {
    poll() {
      throw new ConfigError("cannot be reached", "url");
    }
  }
  assert.throws(() => poll(createSource(Lazy)), (e) => e instanceof RecordError && e.kind === FATAL && e.message === "url: cannot be reached");
});

test("anything else escaping poll is a fault and propagates", () => {
  class Buggy extends Source {
    poll() {
      return [].x.y;
    }
  }
  assert.throws(() => poll(createSource(Buggy)), TypeError);
  const source = createSource(Fixed);
  for (const wrong of [[new Record("bare")], ["text"], "not an array"]) {
    source.items = wrong;
    assert.throws(() => poll(source), TypeError);
  }
  assert.throws(() => emit(new Record("x"), 42), TypeError, "a position is bytes or text");
  assert.throws(() => emit(new Record("x")), TypeError);
  assert.throws(() => emit("not a record", "1"), TypeError);
  assert.throws(() => fail("raw", "1", new Error("not a RecordError")), TypeError);
});

test("nothing new is an empty poll; more than asked for is refused, as the host does", () => {
  const source = createSource(Fixed);
  assert.deepEqual(poll(source), []);
  source.items = null;
  assert.deepEqual(poll(source), []);
  source.items = [emit(new Record("a"), "1"), emit(new Record("b"), "2")];
  assert.throws(() => poll(source, 1), RangeError);
});
