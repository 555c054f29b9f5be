#!/usr/bin/env python3
"""Runs the workspace's test binaries (listed by `cargo test --no-run --message-format=json`),
each from its package directory as `cargo test` would. tests/run.sh decides what runs when and
beside what; this only selects:

  run_binaries.py CARGO_JSON_FILE --units   every binary but the suites named in SUITES
  run_binaries.py CARGO_JSON_FILE NAME...   those suites, one after the other

Exits non-zero if any binary fails (after running the others), or if a named suite is not in
the list. A SIGTERM or SIGINT (tests/run.sh stopping early, Ctrl-C) kills the running binary
and everything it started."""

import json
import os
import signal
import subprocess
import sys

# The suites tests/run.sh schedules itself (run beside another, or alone); the rest are units.
SUITES = ("authoring", "api", "integration", "throughput")

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
    # A session of its own, so that stopping it stops what it started (hosts, cargo, npm).
    return subprocess.Popen([executable], cwd=cwd, env=env, start_new_session=True, **kwargs)


def main():
    if len(sys.argv) < 3:
        print(__doc__, flush=True)
        return 2
    found = binaries(sys.argv[1])
    wanted = sys.argv[2:]
    if wanted == ["--units"]:
        selected = [entry for entry in found if entry[0] not in SUITES]
    else:
        named = {entry[0]: entry for entry in found}
        missing = [name for name in wanted if name not in named]
        if missing:
            print(f"no test binary named {', '.join(missing)}", flush=True)
            return 1
        selected = [named[name] for name in wanted]
    running = None

    def stop(signum, _frame):
        if running:
            try:
                os.killpg(running.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failed = []
    for entry in selected:
        running = run(*entry)
        if running.wait() != 0:
            failed.append(entry[0])
    if failed:
        print(f"FAILED test binaries: {', '.join(failed)}", flush=True)
        return 1
    print(f"{len(selected)} test binaries passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
