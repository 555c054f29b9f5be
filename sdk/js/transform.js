// Transforms: the base class and the per-batch path shared by the component and the native
// testing helpers (everything except the WebAssembly boundary).

import { recordErrorOf, witError } from "./errors.js";
import { Record } from "./record.js";
import { decodeInput, encodeOutput } from "./layout.js";

/**
 * A single-message transform. Subclass it and implement `transform(record)`, and
 * `create(config)` if it has settings. The host creates one instance per connector task and
 * keeps it while the task runs (or until a fault, after which it starts a fresh one).
 */
export class Transform {
  static kind = "transform";

  /** Called once, with the plugin configuration (an object). Throw ConfigError to refuse it. */
  create(_config) {}

  /**
   * Called for each record. Return null/undefined to drop it, a Record, or an array of
   * Records. Throw RecordError to fail this record (its outputs are discarded).
   */
  transform(_record) {
    throw new Error(`${this.constructor.name} does not implement transform(record)`);
  }
}

/** The Records a `transform` call returned. Anything else is a bug in the plugin: a fault. */
export function outputsOf(result, method = "transform") {
  if (result === null || result === undefined) return [];
  rejectPromise(result, method);
  const list = Array.isArray(result) ? result : [result];
  for (const r of list) {
    if (!(r instanceof Record)) throw new TypeError(`${method} returned ${describeValue(r)}; return null, a Record or an array of Records`);
  }
  return list;
}

/** Plugin methods are synchronous (HTTP calls block), so a Promise is always a mistake. */
export function rejectPromise(value, method) {
  if (value !== null && typeof value === "object" && typeof value.then === "function") {
    throw new TypeError(`${method} returned a Promise: plugin methods must be synchronous (turnpike http calls block; do not use async/await)`);
  }
}

/** A short description of an unexpected value, for fault messages. */
export function describeValue(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return `an object (${v.constructor?.name ?? "no prototype"})`;
  return `a ${typeof v}`;
}

/**
 * One `input-batch` through a transform: `transform` per record, a RecordError recorded
 * against its record. Returns the `output-batch`; any other exception propagates (a fault).
 */
export function transformBatch(plugin, batch) {
  const outputs = [];
  const errors = [];
  for (const record of decodeInput(batch)) {
    let produced;
    try {
      produced = outputsOf(plugin.transform(record));
    } catch (e) {
      const error = recordErrorOf(e);
      if (error === null) throw e;
      errors.push({ input: record.index, error: witError(error) });
      continue;
    }
    for (const out of produced) outputs.push([record.index, out]);
  }
  return encodeOutput(outputs, errors);
}
