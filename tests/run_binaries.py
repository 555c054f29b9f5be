#!/usr/bin/env python3
"""Runs the workspace's test binaries (listed by `cargo test --no-run --message-format=json`),
each from its package directory as `cargo test` would, with one difference: the plugin-
authoring suite (CPU-bound: it builds components in three languages, and the longest) runs
beside the admin API suite and the integration suite (mostly waiting on Kafka, S3, the
databases and host processes), which saves their time. The unit-test binaries run before it,
unloaded (some time things), and the throughput binary runs last and alone, since it
measures.

Usage: run_binaries.py CARGO_JSON_FILE. Exits non-zero if any binary fails."""

import json
import os
import subprocess
import sys

BESIDE = "authoring"  # runs beside WITH_BESIDE
WITH_BESIDE = ("api", "integration")
ALONE = "throughput"


def binaries(path):
    found = []
    with open(path) as lines:
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
                cwd = os.path.dirname(message["manifest_path"])
                found.append((message["target"]["name"], message["executable"], cwd, package_env(message["package_id"], cwd)))
    return found


def package_env(package_id, manifest_dir):
    """The variables `cargo test` sets for a test binary that tests read at run time
    (`${env:CARGO_PKG_NAME}` in the reference tests, for one). A package id is
    `path+file:///dir#name@version`, or `…/name#version` when the directory is the name."""
    fragment = package_id.rsplit("#", 1)[-1]
    name, _, version = fragment.rpartition("@")
    if not name:
        name = os.path.basename(manifest_dir)
    env = dict(os.environ, CARGO_MANIFEST_DIR=manifest_dir, CARGO_PKG_NAME=name, CARGO_PKG_VERSION=version)
    env.setdefault("CARGO", "cargo")
    return env


def run(name, executable, cwd, env, **kwargs):
    print(f"     Running {name} ({os.path.relpath(executable)})", flush=True)
    return subprocess.Popen([executable], cwd=cwd, env=env, **kwargs)


def main():
    found = binaries(sys.argv[1])
    named = {entry[0]: entry for entry in found}
    failed = []
    for entry in found:
        if entry[0] not in (BESIDE, ALONE, *WITH_BESIDE) and run(*entry).wait() != 0:
            failed.append(entry[0])
    beside = None
    if BESIDE in named:
        log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"turnpike-{BESIDE}-{os.getpid()}.log"), "w+")
        beside = (run(*named[BESIDE], stdout=log, stderr=subprocess.STDOUT), log)
    try:
        for entry in found:
            if entry[0] in WITH_BESIDE and run(*entry).wait() != 0:
                failed.append(entry[0])
    except BaseException:
        if beside:
            beside[0].kill()
        raise
    if beside:
        process, log = beside
        code = process.wait()
        log.seek(0)
        print(f"---- {BESIDE} (ran beside {', '.join(WITH_BESIDE)}) ----", flush=True)
        sys.stdout.write(log.read())
        if code != 0:
            failed.append(BESIDE)
    if ALONE in named and run(*named[ALONE]).wait() != 0:
        failed.append(ALONE)
    if failed:
        print(f"FAILED test binaries: {', '.join(failed)}", flush=True)
        return 1
    print(f"all {len(found)} test binaries passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
