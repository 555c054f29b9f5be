#!/usr/bin/env node
// Prints the kind of a JavaScript plugin project (`transform`, `source` or `sink`), so the
// build can write the entry module and pick the world before bundling:
//
//   node detect-kind.mjs PROJECT_DIR
//
// Exit 0 with the kind on stdout; exit 1 with one line on stderr saying what to fix.
//
// It imports PROJECT_DIR/plugin.js natively, with "turnpike-sdk" resolved to the SDK next to
// this file (as the build's esbuild alias does), so it works before `npm install` and always
// agrees with the SDK the component is built with. Other imports resolve as node resolves them.

import { existsSync } from "node:fs";
import { register } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const KINDS = { transform: "transform", source: "poll", sink: "write" };

/** Resolves "turnpike-sdk" (and its subpaths) to this SDK; runs in node's hooks thread. */
const HOOKS = `
export async function resolve(specifier, context, next) {
  const sdk = ${JSON.stringify(new URL("./", import.meta.url).href)};
  if (specifier === "turnpike-sdk") return { url: sdk + "turnpike.js", shortCircuit: true };
  if (specifier === "turnpike-sdk/testing") return { url: sdk + "testing.js", shortCircuit: true };
  return next(specifier, context);
}`;

function fail(message) {
  process.stderr.write(`${message.replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(1);
}

async function detect(project) {
  const file = resolve(project, "plugin.js");
  if (!existsSync(file)) fail(`no plugin.js in ${resolve(project)}: the plugin's module must be plugin.js, its class the default export`);
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
  // stdout carries the answer only: anything plugin.js prints at load goes to stderr.
  console.log = console.info = console.error;
  let module;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (e) {
    fail(`plugin.js failed to load: ${e?.name ?? "Error"}: ${e?.message ?? e}`);
  }
  const Cls = module.default;
  const extendsOne = 'export default class YourPlugin extends Transform (or Source, or Sink), imported from "turnpike-sdk"';
  if (typeof Cls !== "function") fail(`plugin.js has no default export class: write ${extendsOne}`);
  const kind = Cls.kind;
  if (!Object.hasOwn(KINDS, kind)) fail(`plugin.js's default export ${Cls.name || "(anonymous)"} does not extend Transform, Source or Sink: write ${extendsOne}`);
  const method = KINDS[kind];
  // The base classes' methods only throw "does not implement": catch that at build time.
  if (!hasOwnMethod(Cls, method)) fail(`${Cls.name || "plugin.js's default export"} extends ${kind[0].toUpperCase()}${kind.slice(1)} but does not implement ${method}(…)`);
  return kind;
}

/** Whether a class between `Cls` and the SDK's base class defines `method`. */
function hasOwnMethod(Cls, method) {
  for (let c = Cls; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    // The SDK's base classes are the ones that declare `kind` themselves.
    if (Object.hasOwn(c, "kind")) return false;
    if (Object.hasOwn(c.prototype, method)) return true;
  }
  return false;
}

if (process.argv.length !== 3) fail("usage: node detect-kind.mjs PROJECT_DIR");
process.stdout.write(`${await detect(process.argv[2])}\n`);
process.exit(0);
