// The record every plugin kind sees: a transform's input and outputs, a source's outputs, a
// sink's input.

import { RecordError } from "./errors.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Where a record handed to a plugin was read from. An output whose `topic` is still this one
 * was forwarded unchanged (`return record`), which means "the connector's output topic", as
 * Rust's `Output::forward`; sending it back to the topic it came from would loop.
 */
export const READ_FROM = Symbol("turnpike-sdk.readFrom");

/**
 * Bytes from bytes, text, or a JSON-able value (compact JSON); null stays null.
 * Typed arrays crossing the component boundary may come from another realm, so no
 * `instanceof Uint8Array`.
 */
export function toBytes(value) {
  if (value === null || value === undefined) return null;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return encoder.encode(value);
  return encoder.encode(JSON.stringify(value));
}

/** UTF-8 text of bytes (undecodable bytes replaced), or null. */
export function textOf(bytes) {
  return bytes === null || bytes === undefined ? null : decoder.decode(bytes);
}

/**
 * A Kafka record: `key`, `value` (Uint8Array or null), `headers` (`[name, Uint8Array]`
 * pairs), `timestamp` (ms since the epoch, or null), and where it was read: `topic`,
 * `partition`, `offset`, and `index` (its place in the batch, which a sink names to reject
 * it). An output's `topic` is where it goes (null: the connector's output topic).
 */
export class Record {
  constructor(value = null, { key = null, headers = [], timestamp = null, topic = null, partition = -1, offset = -1 } = {}) {
    this.key = toBytes(key);
    this.value = toBytes(value);
    const pairs = Array.isArray(headers) ? headers : Object.entries(headers ?? {});
    this.headers = pairs.map(([k, v]) => [String(k), toBytes(v) ?? new Uint8Array()]);
    this.timestamp = timestamp ?? null;
    this.topic = topic ?? null;
    this.partition = partition;
    this.offset = offset;
    this.index = -1;
  }

  /** The value as text (a RecordError for a null value: there is nothing to read). */
  text() {
    if (this.value === null) throw RecordError.invalid("the value is null");
    return decoder.decode(this.value);
  }

  /** The value parsed as JSON (a RecordError if it is not JSON). */
  json() {
    const text = this.text();
    try {
      return JSON.parse(text);
    } catch (e) {
      throw RecordError.invalid(`the value is not JSON: ${e.message}`);
    }
  }

  /** The key as text, or null for a null key. */
  keyText() {
    return textOf(this.key);
  }

  /** The first header called `name` (bytes), or null. */
  header(name) {
    const found = this.headers.find(([k]) => k === name);
    return found ? found[1] : null;
  }

  /** A copy with another value (bytes, text or a JSON-able value): same key, headers and
   * timestamp, sent to the connector's output topic. */
  withValue(value) {
    return new Record(value, { key: this.key, headers: this.headers, timestamp: this.timestamp });
  }
}

/** A Record from a Record or a plain `{key, value, headers, timestamp, topic, partition,
 * offset}` object (the shape of a records.jsonl line), for the testing helpers. */
export function asRecord(r) {
  if (r instanceof Record) return r;
  if (r !== null && typeof r === "object" && !ArrayBuffer.isView(r)) return new Record(r.value ?? null, r);
  return new Record(r);
}
