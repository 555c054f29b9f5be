// Write Turnpike plugins in JavaScript: transforms, sources and sinks.
//
//   import { Transform } from "turnpike-sdk";
//   export default class Upper extends Transform {
//     create(config) { this.field = config.field ?? "name"; }
//     transform(record) {
//       const data = record.json();
//       data[this.field] = String(data[this.field] ?? "").toUpperCase();
//       return record.withValue(data);
//     }
//   }
//
// This is the package's entry module: everything a plugin uses. The native testing helpers are
// in "turnpike-sdk/testing"; README.md describes both. `turnpike plugin build` bundles the
// plugin with this module and turns it into a WebAssembly component with componentize-js.

export { INVALID_RECORD, RETRIABLE, FATAL, RecordError, ConfigError } from "./errors.js";
export { Record } from "./record.js";
export { Transform } from "./transform.js";
export { Source, emit, emitUnpositioned, fail } from "./source.js";
export { Sink } from "./sink.js";
export * as http from "./http.js";
export { HttpError, Response } from "./http.js";
export * as log from "./log.js";
export { exportTransform, exportSource, exportSink } from "./component.js";
