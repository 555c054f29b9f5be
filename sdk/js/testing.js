// Run a plugin class natively, in `node --test`, through the same per-call code the component
// runs (everything except the WebAssembly boundary), as the Rust SDK's `testing` module:
//
//   import { Record } from "turnpike-sdk";
//   import { create, run } from "turnpike-sdk/testing";
//   const { outputs, errors } = run(create(Upper, { field: "name" }), [{ key: "k", value: '{"name":"ada"}' }]);
//
// Records go through the batch layout both ways, so what a test sees is what the host would
// get. A RecordError that fails a whole batch, poll, write or flush is thrown; any other
// exception propagates unchanged (in the component it is a fault: the instance traps).

import { ConfigError, fromWitError, recordErrorOf } from "./errors.js";
import { setResponder } from "./http-transport.js";
import { Record, asRecord, textOf } from "./record.js";
import { decodeOutput, decodeSource, encodeInput } from "./layout.js";
import { transformBatch } from "./transform.js";
import { pollBatch } from "./source.js";
import { flushSink, pairs, writeBatch } from "./sink.js";

/** A new instance of `Cls` made from `config` as the host makes it; a ConfigError if `create`
 * refuses it, or fails in any other way (as the component reports it). */
function instantiate(Cls, kind, config, ...rest) {
  if (Cls?.kind !== kind) throw new TypeError(`${Cls?.name ?? Cls} is not a ${kind} class`);
  const plugin = new Cls();
  try {
    // Through JSON text, as the host passes it: a config the host could not send fails here.
    const parsed = JSON.parse(typeof config === "string" ? config : JSON.stringify(config ?? {})) ?? {};
    plugin.create(parsed, ...rest);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`${e?.name ?? "Error"}: ${e?.message ?? e}`);
  }
  return plugin;
}

/** Rethrows a thrown RecordError (or a ConfigError, as fatal) as a RecordError; anything else
 * unchanged. */
function rethrow(e) {
  throw recordErrorOf(e) ?? e;
}

/** Records as the host sends them. Where a record does not say, its topic is `test`, its
 * partition 0 and its offset its index in the batch. */
function inputBatch(records) {
  return encodeInput(
    records.map((r, i) => {
      const record = asRecord(r);
      const copy = new Record(record.value, { ...record, topic: record.topic ?? "test", partition: record.partition === -1 ? 0 : record.partition, offset: record.offset === -1 ? i : record.offset });
      return copy;
    }),
  );
}

/** A transform made from `config` (an object or JSON text). */
export function create(Cls, config = {}) {
  return instantiate(Cls, "transform", config);
}

/**
 * Runs `records` (Records, or `{key, value, headers, timestamp, topic, partition, offset}`
 * objects) through `transform` as one batch. Returns `{ outputs, errors }`: outputs as
 * `[inputIndex, Record]`, failed inputs as `[inputIndex, RecordError]`.
 */
export function run(transform, records) {
  let batch;
  try {
    batch = transformBatch(transform, inputBatch(records));
  } catch (e) {
    rethrow(e);
  }
  return { outputs: decodeOutput(batch), errors: batch.errors.map((e) => [e.input, fromWitError(e.error)]) };
}

/** A source made from `config` and the last stored `position` (Uint8Array, text, or null). */
export function createSource(Cls, config = {}, position = null) {
  const stored = position === null || position === undefined ? null : typeof position === "string" ? new TextEncoder().encode(position) : Uint8Array.from(position);
  return instantiate(Cls, "source", config, stored);
}

/**
 * Polls `source` once for up to `maxRecords`, as the host does. Returns items `{record,
 * position, error}`: position a Uint8Array or null, error a RecordError for an item made
 * with `fail`, else null. Throws the RecordError that failed the poll.
 */
export function poll(source, maxRecords = 100) {
  let batch;
  try {
    batch = pollBatch(source, maxRecords);
  } catch (e) {
    rethrow(e);
  }
  const items = decodeSource(batch);
  // The host refuses a poll that returns more than it asked for; so do the tests.
  if (items.length > maxRecords) throw new RangeError(`poll returned ${items.length} records; the host asked for at most ${maxRecords}`);
  const failed = new Map(batch.errors.map((e) => [e.input, fromWitError(e.error)]));
  return items.map(({ record, position }, i) => ({ record, position, error: failed.get(i) ?? null }));
}

/** A sink made from `config`. */
export function createSink(Cls, config = {}) {
  return instantiate(Cls, "sink", config);
}

/** Writes `records` to `sink` as one batch. Returns the rejected records as
 * `[index, RecordError]`; throws the RecordError that failed the batch. */
export function write(sink, records) {
  try {
    return writeBatch(sink, inputBatch(records)).map((e) => [e.input, fromWitError(e.error)]);
  } catch (e) {
    rethrow(e);
  }
}

/** Flushes `sink` as the host does before it commits; throws the RecordError it failed with. */
export function flush(sink) {
  try {
    flushSink(sink);
  } catch (e) {
    rethrow(e);
  }
}

/** Tells `sink` that `partitions` (`[topic, partition]` pairs) are assigned. */
export function assign(sink, partitions) {
  sink.assigned(pairs(partitions));
}

/** Tells `sink` that `partitions` are taken away, as the host does after a final flush. */
export function revoke(sink, partitions) {
  sink.revoked(pairs(partitions));
}

/**
 * Makes `responder(request) -> Response` answer every `http` request (a plain
 * `{status, headers, body}` will do; it may throw HttpError, with `refused` true for what
 * the host does to a host not granted).
 */
export function respondHttp(responder) {
  setResponder(responder);
}

/** Removes the responder: requests fail as refused again, as on a connector without an
 * HTTP grant. */
export function clearHttp() {
  setResponder(null);
}

/** UTF-8 text of bytes (a position, a value), or null: for short assertions. */
export const text = textOf;
