// detect-kind.mjs, as the build runs it: node detect-kind.mjs PROJECT_DIR.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../detect-kind.mjs", import.meta.url));

/** Runs detection on a project whose plugin.js is `source` (none if null). */
function detect(source) {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-detect-"));
  try {
    if (source !== null) writeFileSync(join(dir, "plugin.js"), source);
    const { status, stdout, stderr } = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
    return { status, stdout, stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("prints the kind of the default export, with turnpike-sdk resolved without npm install", () => {
  const cases = {
    transform: 'import { Transform } from "turnpike-sdk"; export default class T extends Transform { transform(r) { return r; } }',
    source: 'import { Source } from "turnpike-sdk"; console.log("noise"); export default class S extends Source { poll() { return []; } }',
    sink: 'import { Sink } from "turnpike-sdk"; class Base extends Sink { write() {} } export default class K extends Base {}',
  };
  for (const [kind, source] of Object.entries(cases)) {
    assert.deepEqual(detect(source), { status: 0, stdout: `${kind}\n`, stderr: kind === "source" ? "noise\n" : "" });
  }
});

test("says what to fix, on one line, and exits 1", () => {
  const cases = [
    [null, /^no plugin\.js in /],
    ["export const x = 1;", /no default export class/],
    ["export default class X {}", /does not extend Transform, Source or Sink/],
    ['import { Sink } from "turnpike-sdk"; export default class K extends Sink {}', /does not implement write/],
    ['import { Nope } from "./missing.js"; export default 1;', /plugin\.js failed to load/],
    ["export default class {", /plugin\.js failed to load: SyntaxError/],
  ];
  for (const [source, message] of cases) {
    const { status, stdout, stderr } = detect(source);
    assert.equal(status, 1, stderr);
    assert.equal(stdout, "");
    assert.match(stderr, message);
    assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
  }
});
