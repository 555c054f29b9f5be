#!/usr/bin/env bash
# Every benchmark once, in one go, on one machine, into one report:
#   host/bench/report.sh            # -> host/bench/reports/<UTC date>.txt, and the terminal
# The README's Performance section quotes one such report, whole: its figures then come from
# one run (one build, one machine, one day), so they can be compared with each other.
#
# It builds the benches with the bench profile (release), starts what they measure against
# (the project's test Kafka broker, moto for S3, PostgreSQL; see tests/run.sh, which installs
# them), runs each bench alone in turn (never two at once: they time the machine; the servers
# stay up, idle between benches, and each bench's section says the load average before it),
# and stops the servers. The machine's facts head the report. A bench that fails is reported as failed,
# and the others still run; the script then exits non-zero.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

reports="$root/host/bench/reports"
mkdir -p "$reports"
report="$reports/$(date -u +%F).txt"
export TURNPIKE_TOOLCHAINS="${TURNPIKE_TOOLCHAINS:-$root/.cache/toolchains}"

echo "==> building the benches (bench profile)" >&2
cargo bench -p turnpike-bench --no-run >&2

# Run folders of their own: starting a server wipes its folder, and one the tests or a
# manual run left going in the usual folders would go on eating the cores unseen.
kafka_run="$root/.cache/bench-kafka-run"
s3_run="$root/.cache/bench-moto-run"
pg_run="$root/.cache/bench-pg-run"
stop_servers() {
  tests/kafka/kafka.sh stop "$kafka_run"
  tests/s3/moto.sh stop "$s3_run"
  tests/sql/postgres.sh stop "$pg_run"
}
stop_servers >/dev/null 2>&1 || true
trap 'set +e; stop_servers' EXIT
echo "==> starting Kafka, moto and PostgreSQL" >&2
bootstrap="$(tests/kafka/kafka.sh start "$kafka_run")"
s3_endpoint="$(tests/s3/moto.sh start "$s3_run")"
postgres_url="$(tests/sql/postgres.sh start "$pg_run")"
export TURNPIKE_BENCH_BOOTSTRAP="$bootstrap" TURNPIKE_BENCH_BROKER_PID="$(cat "$kafka_run/broker.pid")" TURNPIKE_TEST_BOOTSTRAP="$bootstrap" \
  TURNPIKE_TEST_S3_ENDPOINT="$s3_endpoint" TURNPIKE_TEST_POSTGRES_URL="$postgres_url"

machine() {
  echo "date:     $(date -u '+%F %H:%M UTC')"
  echo "commit:   $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- . ':!host/bench/reports')" ] || echo ' (with changes not committed)')"
  echo "cpu:      $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "memory:   $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "system:   $(uname -sr)"
  echo "rustc:    $(rustc -V)"
  echo "build:    cargo bench (bench profile: release)"
  echo "servers:  Kafka $(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' tests/kafka/pom.xml) (KRaft, one node), moto, PostgreSQL: all on this machine"
}

# Waits (up to 3 minutes) for the one-minute load average to fall under 0.5: the build and
# the servers' start-up would otherwise still be running in the first bench's figures.
settle() {
  local waited=0
  while [ "$(awk '{ print ($1 < 0.5) }' /proc/loadavg)" != 1 ] && [ "$waited" -lt 180 ]; do
    sleep 5
    waited=$((waited + 5))
  done
}

# Each bench alone, in turn; a failure is reported and the others still run.
run_all() {
  local failed=0 start
  echo "# Turnpike benchmarks, one run"
  echo
  machine
  # Cheapest first, the broker's heaviest last: the density bench leaves a thousand topics.
  for bench in transforms smt languages hot_swap s3 sql tasks e2e density; do
    echo
    echo "## $bench"
    # What else keeps the machine busy: the servers idle between benches, nothing else.
    settle
    echo "(load average before it: $(cut -d' ' -f1-3 /proc/loadavg))"
    start=$(date +%s)
    # The bench's own lines (some on stderr), without cargo's build chatter (the languages
    # bench builds its examples).
    cargo bench -q -p turnpike-bench --bench "$bench" 2>&1 | grep -v -E '^ *(Compiling|Finished|Fresh|Blocking|Running) |^Component built successfully'
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
      echo "(took $(( $(date +%s) - start )) s)"
    else
      echo "FAILED after $(( $(date +%s) - start )) s"
      failed=1
    fi
  done
  return "$failed"
}

set +e
run_all | tee "$report"
status=${PIPESTATUS[0]}
echo "==> report: $report" >&2
exit "$status"
