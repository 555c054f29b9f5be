// Write Turnpike transforms in JavaScript.
//
// A plugin is a class with `create(config)`, called once with the connector's plugin
// configuration (an object), and `process(record)`, called for each record:
//
//   import { Transform } from "./.turnpike/js/turnpike.js";
//   export default class Upper extends Transform {
//     create(config) { this.field = config.field ?? "name"; }
//     process(record) {
//       const data = record.json();
//       data[this.field] = String(data[this.field] ?? "").toUpperCase();
//       return record.withValue(data);
//     }
//   }
//
// `process` returns null/undefined to drop the record, one record, or an array of records.
// Throw `RecordError` to fail one record (the connector's error policy decides what happens:
// dead-letter, skip or stop); any other exception does the same with its message. Throw
// `ConfigError` from `create` to refuse a configuration, naming the key.
//
// `turnpike plugin build` turns the module into a WebAssembly component with
// componentize-js; `run` below runs the same class natively (node --test), and
// `turnpike plugin test` runs the built component through the real host runtime.

const ABSENT = 0xffffffff;
const NO_TIMESTAMP = -(2n ** 63n);
const STRIDE = 8;
const HEADER_STRIDE = 4;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** This record cannot be processed. `kind`: "invalid" (default), "retriable" or "fatal". */
export class RecordError extends Error {
  constructor(message, kind = "invalid") {
    super(message);
    if (!["invalid", "retriable", "fatal"].includes(kind)) {
      throw new Error(`kind must be "invalid", "retriable" or "fatal", not ${JSON.stringify(kind)}`);
    }
    this.kind = kind;
  }
}

/** The configuration is refused; `key` names the offending key (dotted path). */
export class ConfigError extends Error {
  constructor(message, key = null) {
    super(message);
    this.key = key;
  }
}

/** Bytes from bytes, text, or a JSON-able value. */
function toBytes(value) {
  if (value === null || value === undefined) return null;
  // Typed arrays from the component boundary may come from another realm: no `instanceof`.
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer || Array.isArray(value)) return new Uint8Array(value);
  if (typeof value === "string") return encoder.encode(value);
  return encoder.encode(JSON.stringify(value));
}

/** A Kafka record: `key`, `value` (Uint8Array or null), `headers` ([name, Uint8Array] pairs),
 * `timestamp` (ms, or null), and where it was read: `topic`, `partition`, `offset`. An output's
 * `topic` is where it goes (null: the connector's output topic). */
export class Record {
  constructor(value = null, { key = null, headers = [], timestamp = null, topic = null, partition = -1, offset = -1 } = {}) {
    this.key = toBytes(key);
    this.value = toBytes(value);
    this.headers = headers.map(([k, v]) => [k, toBytes(v)]);
    this.timestamp = timestamp;
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }

  /** The value as text. */
  text() {
    if (this.value === null) throw new RecordError("the value is null");
    return decoder.decode(this.value);
  }

  /** The value parsed as JSON (a RecordError if it is not JSON). */
  json() {
    try {
      return JSON.parse(this.text());
    } catch (e) {
      if (e instanceof RecordError) throw e;
      throw new RecordError(`the value is not JSON: ${e.message}`);
    }
  }

  /** The first header called `name`, or null. */
  header(name) {
    const found = this.headers.find(([k]) => k === name);
    return found ? found[1] : null;
  }

  /** A copy with another value (bytes, text or a JSON-able value), same key and headers. */
  withValue(value) {
    return new Record(value, { key: this.key, headers: this.headers, timestamp: this.timestamp });
  }
}

/** Subclass it and implement `process` (and `create` if the plugin has settings). */
export class Transform {
  create(_config) {}
  process(_record) {
    throw new Error("implement process(record)");
  }
}

function outputsOf(result) {
  if (result === null || result === undefined) return [];
  const list = Array.isArray(result) ? result : [result];
  for (const r of list) {
    if (!(r instanceof Record)) throw new RecordError(`process returned ${typeof r}, not a Record`);
  }
  return list;
}

/** Runs `process` over records: `{ outputs: [[index, Record]], errors: [[index, kind, message]] }`. */
export function run(plugin, records) {
  const outputs = [];
  const errors = [];
  records.forEach((record, i) => {
    try {
      for (const out of outputsOf(plugin.process(record))) outputs.push([i, out]);
    } catch (e) {
      errors.push([i, e instanceof RecordError ? e.kind : "invalid", e instanceof RecordError ? e.message : `${e.name}: ${e.message}`]);
    }
  });
  return { outputs, errors };
}

/** An instance of `Cls` created with `config`, as the host would. */
export function create(Cls, config = {}) {
  const plugin = new Cls();
  plugin.create(config);
  return plugin;
}

/** The records of an input batch (wit/types.wit layout). */
export function decode(batch) {
  const { topics, records, positions, headers } = batch;
  const data = toBytes(batch.data);
  const span = (o, l) => (l === ABSENT ? null : data.slice(o, o + l));
  const out = [];
  for (let i = 0; i < records.length / STRIDE; i++) {
    const [ko, kl, vo, vl, first, count, topic, partition] = records.slice(i * STRIDE, i * STRIDE + STRIDE);
    const hs = [];
    for (let j = first; j < first + count; j++) {
      const [a, b, c, d] = headers.slice(j * HEADER_STRIDE, j * HEADER_STRIDE + HEADER_STRIDE);
      hs.push([decoder.decode(data.slice(a, a + b)), data.slice(c, c + d)]);
    }
    const ts = BigInt(positions[i * 2 + 1]);
    out.push(
      new Record(span(vo, vl), {
        key: span(ko, kl),
        headers: hs,
        timestamp: ts === NO_TIMESTAMP ? null : Number(ts),
        topic: topics[topic],
        partition: partition | 0,
        offset: Number(positions[i * 2]),
      }),
    );
  }
  return out;
}

/** The columns of an output batch. */
export function encode(outputs, errors) {
  const chunks = [];
  let size = 0;
  const append = (b) => {
    if (b === null) return [0, ABSENT];
    chunks.push(b);
    size += b.length;
    return [size - b.length, b.length];
  };
  const topics = [];
  const records = [];
  const timestamps = [];
  const headers = [];
  for (const [input, r] of outputs) {
    const [ko, kl] = append(r.key);
    const [vo, vl] = append(r.value);
    const first = headers.length / HEADER_STRIDE;
    for (const [k, v] of r.headers) headers.push(...append(encoder.encode(k)), ...append(v ?? new Uint8Array()));
    let topic = ABSENT;
    if (r.topic !== null && r.topic !== undefined) {
      if (!topics.includes(r.topic)) topics.push(r.topic);
      topic = topics.indexOf(r.topic);
    }
    records.push(input, ko, kl, vo, vl, first, headers.length / HEADER_STRIDE - first, topic);
    timestamps.push(r.timestamp === null || r.timestamp === undefined ? NO_TIMESTAMP : BigInt(r.timestamp));
  }
  const data = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.length;
  }
  const kinds = { invalid: "invalid-record", retriable: "retriable", fatal: "fatal" };
  return {
    data,
    topics,
    records: new Uint32Array(records),
    timestamps: new BigInt64Array(timestamps),
    headers: new Uint32Array(headers),
    errors: errors.map(([input, kind, message]) => ({ input, error: { kind: kinds[kind], message } })),
  };
}

/** The exported `transform` interface for componentize-js, wrapping the author's class. */
export function exportTransform(Cls) {
  class Transformer {
    constructor(inner) {
      this.inner = inner;
    }
    static create(config) {
      try {
        return new Transformer(create(Cls, config ? JSON.parse(config) : {}));
      } catch (e) {
        // componentize-js maps a thrown { payload } to the `err` case of the result.
        throw { payload: { key: e instanceof ConfigError ? e.key ?? undefined : undefined, message: e instanceof ConfigError ? e.message : `${e.name}: ${e.message}` } };
      }
    }
    transform(batch) {
      const { outputs, errors } = run(this.inner, decode(batch));
      return encode(outputs, errors);
    }
  }
  return { Transformer };
}
