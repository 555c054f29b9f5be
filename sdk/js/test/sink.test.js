// Sinks natively: write, rejections, flush, assignment, and what is a fault.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FATAL, INVALID_RECORD, RecordError, RETRIABLE, Sink } from "../turnpike.js";
import { assign, createSink, flush, revoke, text, write } from "../testing.js";

/** Keeps records until flushed; rejects values "bad"; flush fails while `down`. */
class Buffered extends Sink {
  create(config) {
    this.pending = [];
    this.durable = [];
    this.down = false;
    this.events = [];
    this.max = config.max ?? Infinity;
  }
  write(records) {
    if (records.length > this.max) throw RecordError.retriable("too many at once");
    const rejected = [];
    for (const r of records) {
      if (text(r.value) === "bad") rejected.push([r.index, RecordError.invalid(`record at offset ${r.offset} is bad`)]);
      else this.pending.push([r.topic, r.partition, r.offset, text(r.value)]);
    }
    return rejected;
  }
  flush() {
    if (this.down) throw RecordError.retriable("destination down");
    this.durable.push(...this.pending);
    this.pending = [];
  }
  assigned(partitions) {
    this.events.push(["assigned", partitions]);
  }
  revoked(partitions) {
    this.events.push(["revoked", partitions]);
  }
}

test("write returns the rejected records by index; flush makes the rest durable", () => {
  const sink = createSink(Buffered);
  const rejected = write(sink, [{ value: "a" }, { value: "bad" }, { value: "c", topic: "t", partition: 1, offset: 7 }]);
  assert.deepEqual(rejected.map(([i, e]) => [i, e.kind, e.message]), [[1, INVALID_RECORD, "record at offset 1 is bad"]]);
  assert.deepEqual(sink.durable, []);
  flush(sink);
  assert.deepEqual(sink.durable, [["test", 0, 0, "a"], ["t", 1, 7, "c"]]);
});

test("a failed flush throws its RecordError and keeps what was written", () => {
  const sink = createSink(Buffered);
  write(sink, [{ value: "a" }]);
  sink.down = true;
  assert.throws(() => flush(sink), (e) => e instanceof RecordError && e.kind === RETRIABLE);
  sink.down = false;
  flush(sink);
  assert.deepEqual(sink.durable.map((r) => r[3]), ["a"]);
});

test("a RecordError thrown by write fails the whole batch", () => {
  const sink = createSink(Buffered, { max: 1 });
  assert.throws(() => write(sink, [{ value: "a" }, { value: "b" }]), (e) => e instanceof RecordError && e.kind === RETRIABLE);
});

test("assigned and revoked get [topic, partition] pairs", () => {
  const sink = createSink(Buffered);
  assign(sink, [["orders", 0], { topic: "orders", partition: 1 }]);
  revoke(sink, [["orders", 0]]);
  assert.deepEqual(sink.events, [["assigned", [["orders", 0], ["orders", 1]]], ["revoked", [["orders", 0]]]]);
});

test("the default flush does nothing; a missing write is a fault", () => {
  class Plain extends Sink {
    write() {}
  }
  const sink = createSink(Plain);
  assert.deepEqual(write(sink, [{ value: "a" }]), []);
  flush(sink);
  class Nothing extends Sink {}
  assert.throws(() => write(createSink(Nothing), [{ value: "a" }]), /does not implement write/);
});

test("malformed rejections and other exceptions are faults", () => {
  class Wrong extends Sink {
    create(config) {
      this.answer = config.answer;
    }
    write() {
      if (this.answer === "throw") throw new RangeError("bug");
      return this.answer === "index" ? [[5, RecordError.invalid("x")]] : [[0, "not an error"]];
    }
  }
  assert.throws(() => write(createSink(Wrong, { answer: "index" }), [{ value: "a" }]), RangeError);
  assert.throws(() => write(createSink(Wrong, { answer: "shape" }), [{ value: "a" }]), TypeError);
  assert.throws(() => write(createSink(Wrong, { answer: "throw" }), [{ value: "a" }]), (e) => e instanceof RangeError && e.message === "bug");
  class Stop extends Sink {
    write() {}
    flush() {
      throw RecordError.fatal("credentials revoked");
    }
  }
  assert.throws(() => flush(createSink(Stop)), (e) => e.kind === FATAL);
});
