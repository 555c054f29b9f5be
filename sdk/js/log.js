// Structured logging into the host's log (the `log` import every world has). The host adds
// the connector and plugin names and rate-limits each instance. Natively (in tests), lines go
// to stderr. The component glue plugs in the host's `log` function, so this module imports
// nothing component-only.

const LEVELS = ["trace", "debug", "info", "warn", "error"];

// Shared by every copy of the SDK in one process, as http.js's transport.
const state = (globalThis[Symbol.for("turnpike-sdk.log")] ??= { sink: null });

/** Plugs in the host's `log(level, message, fields)` (the component glue does). */
export function setLogSink(sink) {
  state.sink = sink;
}

/** Logs `message` at `level` (trace, debug, info, warn, error) with `fields` (an object or
 * `[key, value]` pairs; values become text). Never throws. */
export function log(level, message, fields = {}) {
  if (!LEVELS.includes(level)) level = "info";
  const pairs = (Array.isArray(fields) ? fields : Object.entries(fields ?? {})).map(([k, v]) => [String(k), String(v)]);
  try {
    if (state.sink) state.sink(level, String(message), pairs);
    else console.error(`[${level}] ${message}${pairs.length ? " " + pairs.map(([k, v]) => `${k}=${v}`).join(" ") : ""}`);
  } catch {
    // A line the host cannot take is dropped, as the contract says.
  }
}

/** Logs at trace level. */
export const trace = (message, fields) => log("trace", message, fields);
/** Logs at debug level. */
export const debug = (message, fields) => log("debug", message, fields);
/** Logs at info level. */
export const info = (message, fields) => log("info", message, fields);
/** Logs at warn level. */
export const warn = (message, fields) => log("warn", message, fields);
/** Logs at error level. */
export const error = (message, fields) => log("error", message, fields);
