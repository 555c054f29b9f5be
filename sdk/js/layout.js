// The batch layout of wit/types.wit and wit/source.wit: one byte buffer plus columns of
// numbers. Written once here, read and written the same way by the component and by the
// native testing helpers, so a test exercises the exact bytes the host will see.
//
// Every writer appends a record's bytes in the same order as the host and the other SDKs:
// key, value, then each header's key and value, and for a source record its position last.

import { READ_FROM, Record, toBytes } from "./record.js";

/** The length of a null span. */
export const ABSENT = 0xffffffff;
/** The timestamp meaning "none". */
export const NO_TIMESTAMP = -(2n ** 63n);
const INPUT_STRIDE = 8;
const OUTPUT_STRIDE = 8;
const SOURCE_STRIDE = 9;
const HEADER_STRIDE = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Appends bytes to one growing buffer and numbers topics by first use. */
class Writer {
  constructor() {
    this.chunks = [];
    this.size = 0;
    this.topics = [];
    this.headers = [];
  }

  /** The span of `value` once appended (bytes, text or a JSON-able value, as a Record takes
   * them: a plugin may have assigned `record.value` directly); null is `(0, ABSENT)`. */
  append(value) {
    const bytes = toBytes(value);
    if (bytes === null || bytes === undefined) return [0, ABSENT];
    this.chunks.push(bytes);
    this.size += bytes.length;
    return [this.size - bytes.length, bytes.length];
  }

  /** `[first-header, header-count]` after appending `pairs`. */
  appendHeaders(pairs) {
    const first = this.headers.length / HEADER_STRIDE;
    for (const [k, v] of pairs) this.headers.push(...this.append(encoder.encode(k)), ...this.append(toBytes(v) ?? new Uint8Array()));
    return [first, this.headers.length / HEADER_STRIDE - first];
  }

  /** The index of `topic`, or ABSENT for none. */
  topic(topic) {
    if (topic === null || topic === undefined) return ABSENT;
    let i = this.topics.indexOf(topic);
    if (i < 0) i = this.topics.push(topic) - 1;
    return i;
  }

  data() {
    const data = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      data.set(c, at);
      at += c.length;
    }
    return data;
  }
}

/** Reads spans and headers of a batch. */
function reader(batch) {
  const data = toBytes(batch.data);
  const span = (offset, length) => (length === ABSENT ? null : data.slice(offset, offset + length));
  const headers = (first, count) => {
    const out = [];
    for (let j = first; j < first + count; j++) {
      const [ko, kl, vo, vl] = batch.headers.slice(j * HEADER_STRIDE, j * HEADER_STRIDE + HEADER_STRIDE);
      out.push([decoder.decode(data.subarray(ko, ko + kl)), data.slice(vo, vo + vl)]);
    }
    return out;
  };
  return { span, headers };
}

const timestampOf = (wide) => (BigInt(wide) === NO_TIMESTAMP ? null : Number(wide));
const wideOf = (timestamp) => (timestamp === null || timestamp === undefined ? NO_TIMESTAMP : BigInt(timestamp));

/** The records of an `input-batch`, each with its `index`. */
export function decodeInput(batch) {
  const { span, headers } = reader(batch);
  const out = [];
  for (let i = 0; i < batch.records.length / INPUT_STRIDE; i++) {
    const [ko, kl, vo, vl, first, count, topic, partition] = batch.records.slice(i * INPUT_STRIDE, i * INPUT_STRIDE + INPUT_STRIDE);
    const record = new Record(span(vo, vl), {
      key: span(ko, kl),
      headers: headers(first, count),
      timestamp: timestampOf(batch.positions[i * 2 + 1]),
      topic: batch.topics[topic],
      partition: partition | 0,
      offset: Number(batch.positions[i * 2]),
    });
    record.index = i;
    record[READ_FROM] = record.topic;
    out.push(record);
  }
  return out;
}

/** An `input-batch` of records, as the host builds one (the testing helpers use it). */
export function encodeInput(records) {
  const w = new Writer();
  const columns = [];
  const positions = [];
  for (const r of records) {
    const [ko, kl] = w.append(r.key);
    const [vo, vl] = w.append(r.value);
    const [first, count] = w.appendHeaders(r.headers);
    columns.push(ko, kl, vo, vl, first, count, w.topic(r.topic), r.partition >>> 0);
    positions.push(BigInt(r.offset), wideOf(r.timestamp));
  }
  return { data: w.data(), topics: w.topics, records: new Uint32Array(columns), positions: new BigInt64Array(positions), headers: new Uint32Array(w.headers) };
}

/** The topic an output goes to: null (the connector's) for a record forwarded unchanged. */
function destination(r) {
  return r.topic !== null && r.topic !== undefined && r.topic !== r[READ_FROM] ? r.topic : null;
}

/** An `output-batch` from `[inputIndex, Record]` pairs (grouped by input, in input order) and
 * the failed inputs' WIT `record-error`s. */
export function encodeOutput(outputs, errors) {
  const w = new Writer();
  const columns = [];
  const timestamps = [];
  for (const [input, r] of outputs) {
    const [ko, kl] = w.append(r.key);
    const [vo, vl] = w.append(r.value);
    const [first, count] = w.appendHeaders(r.headers);
    columns.push(input, ko, kl, vo, vl, first, count, w.topic(destination(r)));
    timestamps.push(wideOf(r.timestamp));
  }
  return { data: w.data(), topics: w.topics, records: new Uint32Array(columns), timestamps: new BigInt64Array(timestamps), headers: new Uint32Array(w.headers), errors };
}

/** `[inputIndex, Record]` pairs of an `output-batch` (the testing helpers read it back). */
export function decodeOutput(batch) {
  const { span, headers } = reader(batch);
  const out = [];
  for (let i = 0; i < batch.records.length / OUTPUT_STRIDE; i++) {
    const [input, ko, kl, vo, vl, first, count, topic] = batch.records.slice(i * OUTPUT_STRIDE, i * OUTPUT_STRIDE + OUTPUT_STRIDE);
    const timestamp = timestampOf(batch.timestamps[i]);
    out.push([input, new Record(span(vo, vl), { key: span(ko, kl), headers: headers(first, count), timestamp, topic: topic === ABSENT ? null : batch.topics[topic] })]);
  }
  return out;
}

/** A `source-batch` from `{record, position}` items (position: bytes or null) and the failed
 * items' WIT `record-error`s. */
export function encodeSource(items, errors) {
  const w = new Writer();
  const columns = [];
  const timestamps = [];
  for (const { record: r, position } of items) {
    const [ko, kl] = w.append(r.key);
    const [vo, vl] = w.append(r.value);
    const [first, count] = w.appendHeaders(r.headers);
    const topic = w.topic(r.topic);
    const [po, pl] = w.append(position);
    columns.push(ko, kl, vo, vl, first, count, topic, po, pl);
    timestamps.push(wideOf(r.timestamp));
  }
  return { data: w.data(), topics: w.topics, records: new Uint32Array(columns), timestamps: new BigInt64Array(timestamps), headers: new Uint32Array(w.headers), errors };
}

/** `{record, position}` items of a `source-batch` (the testing helpers read it back). */
export function decodeSource(batch) {
  const { span, headers } = reader(batch);
  const out = [];
  for (let i = 0; i < batch.records.length / SOURCE_STRIDE; i++) {
    const [ko, kl, vo, vl, first, count, topic, po, pl] = batch.records.slice(i * SOURCE_STRIDE, i * SOURCE_STRIDE + SOURCE_STRIDE);
    const timestamp = timestampOf(batch.timestamps[i]);
    const record = new Record(span(vo, vl), { key: span(ko, kl), headers: headers(first, count), timestamp, topic: topic === ABSENT ? null : batch.topics[topic] });
    out.push({ record, position: span(po, pl) });
  }
  return out;
}
