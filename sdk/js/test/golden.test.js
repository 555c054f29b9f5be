// The golden batches of tests/fixtures/batch through the JS SDK's layout code: decode
// input.bin, run the golden rule (README.md there) through a Transform on the component's own
// per-batch path, and get output.bin byte for byte. The host, Rust SDK and Python tests hold their layout code
// to the same bytes, so a layout change in one language fails the others.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Record, Transform } from "../turnpike.js";
import { create } from "../testing.js";
import { decodeInput, encodeOutput } from "../layout.js";
import { transformBatch } from "../transform.js";

const text = (b) => new TextDecoder().decode(b);
const bytes = (s) => new TextEncoder().encode(s);

/** The five sections of a fixture file: data, topics, records (u32), wide (s64), headers (u32). */
function readBatchFile(name) {
  const raw = readFileSync(new URL(`../../../tests/fixtures/batch/${name}`, import.meta.url));
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let at = 0;
  const u32 = () => {
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const take = (n) => {
    if (at + n > raw.length) throw new Error(`${name} ends early`);
    const b = new Uint8Array(raw.subarray(at, at + n));
    at += n;
    return b;
  };
  const data = take(u32());
  const topics = Array.from({ length: u32() }, () => text(take(u32())));
  const records = Uint32Array.from({ length: u32() }, u32);
  const wide = BigInt64Array.from({ length: u32() }, () => {
    const v = view.getBigInt64(at, true);
    at += 8;
    return v;
  });
  const headers = Uint32Array.from({ length: u32() }, u32);
  assert.equal(at, raw.length, `${name}: bytes after the last section`);
  return { data, topics, records, wide, headers };
}

function inputBatch() {
  const { data, topics, records, wide, headers } = readBatchFile("input.bin");
  return { data, topics, records, positions: wide, headers };
}

/** The golden rule of tests/fixtures/batch/README.md. */
class Golden extends Transform {
  transform(record) {
    if (record.value !== null && text(record.value) === "drop") return null;
    // Forwarded as it came: its topic is then the connector's output topic, not the input's.
    const outputs = [record];
    if (record.header("audit") !== null) {
      outputs.push(new Record("audited", { key: record.key, headers: [["from", record.topic], ["note", ""]], topic: "audit" }));
    }
    return outputs;
  }
}

test("decoding reads the described records", () => {
  const got = decodeInput(inputBatch()).map((r) => [r.topic, r.partition, r.offset, r.timestamp, r.key && [...r.key], r.value && [...r.value], r.headers.map(([k, v]) => [k, [...v]])]);
  assert.deepEqual(got, [
    ["orders", 0, 41, 1_700_000_000_000, [...bytes("k0")], [...bytes('{"id":1}')], [["trace", [...bytes("abc")]], ["empty", []]]],
    ["orders", 0, 42, null, null, [...bytes("drop")], []],
    ["payments", 7, 5_000_000_000, 1_700_000_000_500, [...bytes("clé")], null, [["audit", [...bytes("yes")]], ["ünï", [0xff, 0x00, 0xfe]]]],
    ["orders", -1, 3, 1_700_000_001_000, [0x00, 0xff], [...bytes("Grüße 🚀")], [["audit", []]]],
  ]);
});

test("the golden rule encodes to the golden output", () => {
  const out = transformBatch(create(Golden), inputBatch());
  const golden = readBatchFile("output.bin");
  assert.deepEqual(out.topics, golden.topics);
  assert.deepEqual([...out.records], [...golden.records]);
  assert.deepEqual([...out.timestamps], [...golden.wide]);
  assert.deepEqual([...out.headers], [...golden.headers]);
  assert.deepEqual([...out.data], [...golden.data]);
  assert.deepEqual(out.errors, []);
});
