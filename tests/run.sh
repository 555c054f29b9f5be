#!/usr/bin/env bash
# The whole test suite, from a fresh clone, in one command:
#   ./tests/run.sh
# It installs what it needs (the wasm32-wasip2 target through rustup; Apache Kafka's jars from
# Maven Central into .cache/; moto, the S3-compatible test server, and pyarrow from PyPI into
# .cache/moto-venv; componentize-py from PyPI, componentize-js and esbuild from npm into
# .cache/toolchains, by the `turnpike plugin build` code itself; the Debian packages postgresql
# and mariadb-server with apt-get when their servers are missing; schemathesis, the API
# fuzzer, from PyPI into .cache/fuzz-venv), starts a real single-node
# Kafka (KRaft), moto, PostgreSQL and MariaDB on free loopback ports, runs every test, and
# stops them all.
# Needs: the Rust toolchain, Java 17+, Maven, python3 (with venv), Node.js with npm, Go (to
# build promlint), and for the databases and the browser Debian or Ubuntu with apt-get (run as
# root, or with sudo) unless installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

echo "==> disk"
# A clean run fills about 12 GiB: target/ (~9), .cache/ (~1.5) and the tests' scratch. Short
# of that, the build, the brokers and the hosts' state writes fail late, with errors that do
# not say "disk full" (27 tests failed so on a machine whose disk earlier runs had filled).
free_gib() { df -Pk "$1" | awk 'NR == 2 { print int($4 / 1048576) }'; }
echo "$(free_gib "$root") GiB free for the checkout, $(free_gib "${TMPDIR:-/tmp}") GiB for scratch"
if [ "$(free_gib "$root")" -lt 12 ]; then
  echo "WARNING: under 12 GiB free where the checkout is; expect failures that are really a full disk" >&2
fi

# Every scratch folder the tests make (hosts' state, copied binaries, database clusters,
# browser profiles, the shared compiled-code cache) goes under one folder for this run, deleted
# when the run ends: on a machine that runs the suite again and again, nothing piles up.
# Folders of runs killed before their clean-up are removed after a day.
find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'turnpike-suite-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
scratch="$(mktemp -d "${TMPDIR:-/tmp}/turnpike-suite-XXXXXX")"
# Open to all like /tmp itself: the database servers run as their own users and write
# their temporary files here (MariaDB refused to start in a folder only root could write).
chmod 1777 "$scratch"
export TMPDIR="$scratch"
# Until the servers' trap below replaces it.
trap 'rm -rf "$scratch"' EXIT

host_triple="$(rustc -vV | sed -n 's/^host: //p')"
# A clean build gains nothing from incremental data but time and gigabytes of disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Plugin toolchains for Python and JavaScript live in the checkout, not the user's cache.
export TURNPIKE_TOOLCHAINS="$root/.cache/toolchains"

echo "==> wasm target"
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi

echo "==> build, in the background while the servers and tools below are set up"
# Every target of the workspace at once, so dependencies are built once with the same
# features the test run below unifies (building only `-p turnpike` first compiled some 55
# crates, wasmtime and the AWS SDK among them, a second time). The set-up below mostly waits
# on downloads and servers starting, so it costs the build little; on a fresh machine it took
# minutes before the build could begin.
cargo build --workspace --all-targets &
build_pid=$!

echo "==> real Apache Kafka (KRaft) on loopback"
run_dir="$root/.cache/kafka-run"
s3_run_dir="$root/.cache/moto-run"
pg_run_dir="$root/.cache/pg-run"
mysql_run_dir="$root/.cache/mariadb-run"
tests/kafka/kafka.sh stop "$run_dir" || true
tests/s3/moto.sh stop "$s3_run_dir" || true
tests/sql/postgres.sh stop "$pg_run_dir" || true
tests/sql/mariadb.sh stop "$mysql_run_dir" || true
authoring_pid=""
# `set +e` first: one failing step must not skip the others (nor turn a green run red).
trap 'set +e; kill "$build_pid" ${authoring_pid:+"$authoring_pid"} 2>/dev/null; tests/kafka/kafka.sh stop "$run_dir"; tests/s3/moto.sh stop "$s3_run_dir"; tests/sql/postgres.sh stop "$pg_run_dir"; tests/sql/mariadb.sh stop "$mysql_run_dir"; rm -rf "$scratch"' EXIT
bootstrap="$(tests/kafka/kafka.sh start "$run_dir")"
echo "broker at $bootstrap"

echo "==> S3-compatible server (moto) on loopback"
s3_endpoint="$(tests/s3/moto.sh start "$s3_run_dir")"
echo "S3 at $s3_endpoint"
# Tests that read objects back (Parquet with pyarrow) use moto's venv.
s3_python="$(tests/s3/moto.sh python)"

echo "==> PostgreSQL and MariaDB on loopback"
postgres_url="$(tests/sql/postgres.sh start "$pg_run_dir")"
echo "PostgreSQL at $postgres_url"
mysql_url="$(tests/sql/mariadb.sh start "$mysql_run_dir")"
echo "MariaDB at $mysql_url"

echo "==> Chromium and chromedriver (the console's browser tests) from Debian"
chromedriver="$(tests/browser/chromium.sh install)"
echo "chromedriver at $chromedriver"

echo "==> schemathesis (the API fuzzer) from PyPI"
fuzz_venv="$root/.cache/fuzz-venv"
if ! "$fuzz_venv/bin/schemathesis" --version 2>/dev/null | grep -q "4.32.5"; then
  python3 -m venv "$fuzz_venv"
  "$fuzz_venv/bin/pip" install --quiet "schemathesis==4.32.5"
fi

echo "==> promlint (the rules of promtool check metrics) from the Go module proxy"
promlint="$root/.cache/promlint"
(cd tests/metrics/promlint && go build -o "$promlint" .)

echo "==> waiting for the build"
wait "$build_pid"

export TURNPIKE_TEST_BOOTSTRAP="$bootstrap" TURNPIKE_TEST_S3_ENDPOINT="$s3_endpoint" TURNPIKE_TEST_PYTHON="$s3_python" \
  TURNPIKE_TEST_POSTGRES_URL="$postgres_url" TURNPIKE_TEST_MYSQL_URL="$mysql_url" \
  TURNPIKE_TEST_SCHEMATHESIS="$fuzz_venv/bin/schemathesis" TURNPIKE_TEST_CHROMEDRIVER="$chromedriver" \
  TURNPIKE_TEST_PROMLINT="$promlint"
binaries="$root/.cache/test-binaries.json"
cargo test --workspace --no-run --message-format=json >"$binaries"
# Every test binary, as `cargo test --workspace` would run them, in this order: the unit
# binaries first, on an unloaded machine (some time things); then the plugin-authoring suite
# (CPU-bound, and the longest: it builds components in three languages) in the background,
# beside everything else up to the throughput measurement, which runs last and alone.
# A failure stops nothing after the authoring suite has started: every result is reported.
failed=0
echo "==> host, runtime, SDK and plugins' unit tests against real components"
python3 tests/run_binaries.py "$binaries" --units || failed=1

echo "==> the Python and JavaScript SDKs, natively, and every example's own tests"
# Before the authoring suite starts: it builds these examples, npm installs included.
python3 -m unittest discover -s sdk/python/tests || failed=1
node --test sdk/js/test/ || failed=1
for example in examples/plugins/python-*/; do
  (cd "$example" && python3 -m unittest) || failed=1
done
for example in examples/plugins/js-*/; do
  (cd "$example" && npm install --no-audit --no-fund --loglevel=error && npm test) || failed=1
done
# The Python SDK is an installable package: pip builds and installs it, and it imports from
# anywhere (the JavaScript one is installed by each example's `npm install` above).
sdk_venv="$root/.cache/sdk-venv"
python3 -m venv "$sdk_venv"
"$sdk_venv/bin/pip" install --quiet --disable-pip-version-check "$root/sdk/python"
(cd / && "$sdk_venv/bin/python" -c "import turnpike, turnpike.testing, turnpike.http; print('turnpike-sdk installed:', turnpike.__file__)") || failed=1

echo "==> the plugin-authoring suite, in the background from here on"
authoring_log="$root/.cache/authoring.log"
python3 tests/run_binaries.py "$binaries" authoring >"$authoring_log" 2>&1 &
authoring_pid=$!

echo "==> plugin logic, natively (plugins/ and examples/plugins are wasm workspaces of their own)"
(cd plugins && cargo test --target "$host_triple" --target-dir "$root/target/plugins") || failed=1
(cd examples/plugins && cargo test --target "$host_triple") || failed=1

echo "==> admin API and integration tests against Kafka, S3, SQL and a browser; doc tests"
python3 tests/run_binaries.py "$binaries" api integration || failed=1
cargo test --workspace --doc || failed=1

echo "==> waiting for the plugin-authoring suite"
authoring_failed=0
wait "$authoring_pid" || authoring_failed=1
authoring_pid=""
echo "---- authoring (ran beside the tests above) ----"
cat "$authoring_log"
[ "$authoring_failed" = 0 ] || failed=1

echo "==> throughput under faults and hot swaps, alone"
python3 tests/run_binaries.py "$binaries" throughput || failed=1

if [ "$failed" != 0 ]; then
  echo "FAILED: see the failures above"
fi
exit "$failed"
