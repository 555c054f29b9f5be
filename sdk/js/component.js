// The component glue: wraps the author's class in the resource componentize-js exports for
// its world, and plugs the host's imports (log, wasi:http) into the SDK.
//
// The build's entry module (.turnpike/entry.js) is, for a source:
//
//   import Plugin from "../plugin.js";
//   import { log } from "turnpike:plugin/log@0.1.6";
//   import { handle } from "wasi:http/outgoing-handler@0.2.12";
//   import * as types from "wasi:http/types@0.2.12";
//   import { exportSource } from "turnpike-sdk";
//   export const source = exportSource(Plugin, { log, handle, types });
//
// How errors cross the boundary, in componentize-js 0.23's generated bindings: a thrown object
// with an own `payload` becomes the `err` of a `result`; a thrown `Error` is rethrown and the
// instance traps. So a RecordError is thrown as `{ payload }`, and anything else (a bug) is
// logged, then rethrown as a plain Error: the host sees a trap, discards the instance and
// starts a fresh one, as it does for a Rust panic. It never becomes a per-record error.

import { HttpError } from "./http.js";
import { setTransport } from "./http-transport.js";
import { describe, recordErrorOf, witConfigError, witError } from "./errors.js";
import { log, setLogSink } from "./log.js";
import { rejectPromise, transformBatch } from "./transform.js";
import { pollBatch } from "./source.js";
import { flushSink, pairs, writeBatch } from "./sink.js";
import { wasiTransport } from "./wasi-http.js";

/** Plugs the generated imports into the SDK. Without wasi:http, requests fail as refused. */
function install(imports = {}) {
  if (typeof imports.log === "function") setLogSink(imports.log);
  if (typeof imports.handle === "function" && imports.types) {
    setTransport(wasiTransport(imports));
  } else {
    setTransport(() => {
      throw new HttpError("outgoing HTTP is not linked into this component (build it against the {kind}-plugin-http world)", true);
    });
  }
}

/** The Error that makes the instance trap, after logging why (the trap itself says nothing). */
function fault(where, e) {
  const message = `${where} threw ${describe(e)}`;
  log("error", `plugin fault, the instance traps: ${message}`, e instanceof Error && e.stack ? { stack: e.stack } : {});
  return new Error(message);
}

/** Runs a method whose WIT result carries a `plugin-error`. */
function call(where, fn) {
  try {
    return fn();
  } catch (e) {
    const error = recordErrorOf(e);
    if (error !== null) throw { payload: witError(error) };
    throw fault(where, e);
  }
}

/** Runs a method with no result (`assigned`, `revoked`): any exception is a fault. */
function callVoid(where, fn) {
  try {
    fn();
  } catch (e) {
    throw fault(where, e);
  }
}

/** The configuration object from the host's JSON text (`{}` when none). */
function parseConfig(text) {
  const config = text ? JSON.parse(text) : {};
  return config ?? {};
}

/** A new instance of `Cls`, created as the host asks; any exception is a `config-error`. */
function instantiate(Cls, kind, text, ...rest) {
  try {
    if (Cls?.kind !== kind) throw new TypeError(`plugin.js's default export is not a ${kind} (a class extending ${kind[0].toUpperCase()}${kind.slice(1)})`);
    const plugin = new Cls();
    plugin.create(parseConfig(text), ...rest);
    return plugin;
  } catch (e) {
    throw { payload: witConfigError(e) };
  }
}

/** The exported `transform` interface for a Transform class. */
export function exportTransform(Cls, imports) {
  install(imports);
  class Transformer {
    constructor(plugin) {
      this.plugin = plugin;
    }
    static create(config) {
      return new Transformer(instantiate(Cls, "transform", config));
    }
    transform(batch) {
      return call("transform", () => transformBatch(this.plugin, batch));
    }
  }
  return { Transformer };
}

/** The exported `source` interface for a Source class. */
export function exportSource(Cls, imports) {
  install(imports);
  class Reader {
    constructor(plugin) {
      this.plugin = plugin;
    }
    static create(config, position) {
      const stored = position === undefined || position === null ? null : Uint8Array.from(position);
      return new Reader(instantiate(Cls, "source", config, stored));
    }
    poll(maxRecords) {
      return call("poll", () => pollBatch(this.plugin, maxRecords));
    }
  }
  return { Reader };
}

/** The exported `sink` interface for a Sink class. */
export function exportSink(Cls, imports) {
  install(imports);
  class Writer {
    constructor(plugin) {
      this.plugin = plugin;
    }
    static create(config) {
      return new Writer(instantiate(Cls, "sink", config));
    }
    write(batch) {
      return call("write", () => writeBatch(this.plugin, batch));
    }
    flush() {
      call("flush", () => flushSink(this.plugin));
    }
    assigned(partitions) {
      callVoid("assigned", () => rejectPromise(this.plugin.assigned(pairs(partitions)), "assigned"));
    }
    revoked(partitions) {
      callVoid("revoked", () => rejectPromise(this.plugin.revoked(pairs(partitions)), "revoked"));
    }
  }
  return { Writer };
}
