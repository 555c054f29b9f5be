// Sinks: the base class and the per-call paths shared by the component and the native
// testing helpers.

import { RecordError, witError } from "./errors.js";
import { decodeInput } from "./layout.js";
import { describeValue, rejectPromise } from "./transform.js";

/**
 * A sink: writes records consumed from Kafka to the outside world.
 *
 * The host commits consumer offsets only after `flush` succeeds, so a sink that buffers must
 * make everything written so far durable in `flush`. Delivery is at least once: after a
 * crash, records written since the last flush are written again.
 */
export class Sink {
  static kind = "sink";

  /** Called once, with the plugin configuration (an object). Throw ConfigError to refuse it.
   * Do not reach the outside world here (the host may create a sink only to check it). */
  create(_config) {}

  /**
   * Writes (or buffers) a batch of Records. Return nothing, or the records rejected for good
   * as `[[record.index, RecordError], …]`: the host dead-letters them or stops, per the
   * connector's error policy. Throwing a RecordError fails the whole batch (RETRIABLE: the
   * host retries the same batch with backoff, so keep nothing of a batch you fail).
   */
  write(_records) {
    throw new Error(`${this.constructor.name} does not implement write(records)`);
  }

  /** Makes everything written so far durable. Throw RecordError.retriable when the
   * destination is down: the host retries and commits nothing meanwhile. */
  flush() {}

  /** Partitions newly assigned to this task, as `[topic, partition]` pairs. */
  assigned(_partitions) {}

  /** Partitions about to be taken away (after a final flush), as `[topic, partition]` pairs. */
  revoked(_partitions) {}
}

/** `write`'s answer as WIT `record-error`s. A malformed answer is a bug (a fault), not
 * something to guess about. */
function rejections(result, count) {
  if (result === null || result === undefined) return [];
  rejectPromise(result, "write");
  if (!Array.isArray(result)) throw new TypeError(`write returned ${describeValue(result)}; return nothing or an array of [index, RecordError]`);
  return result.map((item) => {
    if (!Array.isArray(item) || item.length !== 2 || !(item[1] instanceof RecordError)) {
      throw new TypeError(`write returned ${describeValue(item)} among its rejections; each is [record.index, RecordError]`);
    }
    const [index, error] = item;
    if (!Number.isInteger(index) || index < 0 || index >= count) throw new RangeError(`write rejected index ${index}; the batch has ${count} records`);
    return { input: index, error: witError(error) };
  });
}

/** One `input-batch` through a sink's `write`. Returns the WIT `record-error`s of rejected
 * records; whatever `write` throws propagates. */
export function writeBatch(sink, batch) {
  const records = decodeInput(batch);
  return rejections(sink.write(records), records.length);
}

/** `flush`, checked for a stray Promise; whatever it throws propagates. */
export function flushSink(sink) {
  rejectPromise(sink.flush(), "flush");
}

/** WIT `topic-partition`s (or pairs) as `[topic, partition]` pairs. */
export function pairs(partitions) {
  return partitions.map((p) => (Array.isArray(p) ? [p[0], p[1]] : [p.topic, p.partition]));
}
