// Sources: the base class, the items a poll returns, and the per-poll path shared by the
// component and the native testing helpers.

import { RecordError, witError } from "./errors.js";
import { Record, toBytes } from "./record.js";
import { encodeSource } from "./layout.js";
import { describeValue, rejectPromise } from "./transform.js";

/**
 * A source: reads from the outside world; the host produces what `poll` returns into Kafka.
 *
 * Every record carries the source's position after it: bytes or text you define (a cursor,
 * a line number, an ETag). The host stores a position durably only once the record and every
 * record before it are acknowledged by Kafka, and hands the last stored one back to `create`
 * after a restart: resume right after it. Delivery is therefore at least once.
 */
export class Source {
  static kind = "source";

  /**
   * Called once, with the plugin configuration (an object) and the last stored position
   * (a Uint8Array), or null on a first run. Throw ConfigError to refuse the configuration.
   * Do not reach the outside world here (the host may create a source only to check its
   * configuration); start in the first `poll`.
   */
  create(_config, _position) {}

  /**
   * Called repeatedly. Return at most `maxRecords` items made with `emit`, `emitUnpositioned`
   * or `fail` (an empty array or nothing means "nothing new yet": the host polls again after
   * the connector's poll interval). Throw RecordError to fail the whole poll (RETRIABLE: the
   * host retries with backoff).
   */
  poll(_maxRecords) {
    throw new Error(`${this.constructor.name} does not implement poll(maxRecords)`);
  }
}

// Marks items made by the helpers below, so a stray value in the list is caught as a bug.
const ITEM = Symbol("turnpike-sdk.polled");

/** A position as bytes: text is UTF-8. */
function positionBytes(position, helper) {
  if (typeof position === "string" || ArrayBuffer.isView(position)) return toBytes(position);
  throw new TypeError(`${helper}: a position is a Uint8Array or a string, not ${describeValue(position)}${helper === "emit" ? " (emitUnpositioned for none)" : ""}`);
}

function checkRecord(record, helper) {
  if (!(record instanceof Record)) throw new TypeError(`${helper}: the record must be a Record, not ${describeValue(record)}`);
}

/** A record; `position` (Uint8Array or string) is where the source stands after it. */
export function emit(record, position) {
  checkRecord(record, "emit");
  return { [ITEM]: true, record, position: positionBytes(position, "emit"), error: null };
}

/** A record that does not move the position (a later record of the poll will). */
export function emitUnpositioned(record) {
  checkRecord(record, "emitUnpositioned");
  return { [ITEM]: true, record, position: null, error: null };
}

/**
 * Something read that is not a good record (a line that does not parse). `raw` is what was
 * read (a Record, or bytes/text taken as its value): the host dead-letters it unchanged (or
 * stops, per the connector's error policy) instead of producing it. The position still moves
 * past it. `error` is a RecordError, or text for RecordError.invalid.
 */
export function fail(raw, position, error) {
  const record = raw instanceof Record ? raw : new Record(raw);
  if (typeof error === "string") error = RecordError.invalid(error);
  if (!(error instanceof RecordError)) throw new TypeError(`fail: the error must be a RecordError or a string, not ${describeValue(error)}`);
  return { [ITEM]: true, record, position: positionBytes(position, "fail"), error };
}

/**
 * One poll through a source. Returns the `source-batch`; a RecordError thrown by `poll`
 * propagates for the caller to report as the poll's error, and so does any other exception
 * (a fault).
 */
export function pollBatch(source, maxRecords) {
  const result = source.poll(maxRecords);
  if (result === null || result === undefined) return encodeSource([], []);
  rejectPromise(result, "poll");
  if (!Array.isArray(result)) throw new TypeError(`poll returned ${describeValue(result)}; return an array of emit(…), emitUnpositioned(…) or fail(…) items`);
  const errors = [];
  result.forEach((item, i) => {
    if (item === null || typeof item !== "object" || item[ITEM] !== true) {
      throw new TypeError(`poll returned ${describeValue(item)} at [${i}]; make each item with emit(…), emitUnpositioned(…) or fail(…)`);
    }
    if (item.error) errors.push({ input: i, error: witError(item.error) });
  });
  return encodeSource(result, errors);
}
