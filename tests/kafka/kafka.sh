#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft, combined broker + controller) on 127.0.0.1 for the
# integration tests, assembled from Maven Central jars (needs Java 17+ and Maven).
#
#   kafka.sh fetch            resolve the jars into .cache/kafka/libs (once; cached)
#   kafka.sh start RUN_DIR    format a fresh log dir under RUN_DIR, start the broker on free
#                             ports, wait until it serves; prints the bootstrap address
#   kafka.sh stop RUN_DIR     stop the broker started in RUN_DIR
#   kafka.sh resume RUN_DIR   start the broker of RUN_DIR again (after stop or a kill), on the
#                             same ports and log dir: what it held is still there
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
libs="$root/.cache/kafka/libs"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

fetch() {
  if [ -f "$libs/.complete" ]; then return 0; fi
  command -v java >/dev/null || { echo "kafka.sh: java (17+) is required for the test broker" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "kafka.sh: maven is required to fetch the test broker" >&2; exit 1; }
  echo "kafka.sh: resolving Apache Kafka jars from Maven Central into $libs" >&2
  rm -rf "$libs"; mkdir -p "$libs"
  mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$libs" >&2
  ls "$libs"/kafka_2.13-*.jar >/dev/null
  touch "$libs/.complete"
}

start() {
  local run_dir="$1"
  fetch
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  local port ctl_port
  port="$(free_port)"; ctl_port="$(free_port)"
  while [ "$ctl_port" = "$port" ]; do ctl_port="$(free_port)"; done
  cat > "$run_dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$ctl_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$ctl_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$ctl_port
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$run_dir/kraft-combined-logs
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# KIP-848 groups (the protocol hosts choose when kafka: sets nothing classic) fail over after
# 6 s, as the tests' classic groups do with session.timeout.ms 6000; the broker defaults are
# 45 s sessions and 5 s heartbeats.
group.consumer.session.timeout.ms=6000
group.consumer.min.session.timeout.ms=6000
group.consumer.heartbeat.interval.ms=2000
group.consumer.min.heartbeat.interval.ms=1000
auto.create.topics.enable=true
PROPS
  local cp="$libs/*" log4j="-Dlog4j2.configurationFile=$here/log4j2.properties"
  local cluster_id
  cluster_id="$(java -Xmx256m "$log4j" -cp "$cp" kafka.tools.StorageTool random-uuid)"
  java -Xmx256m "$log4j" -cp "$cp" kafka.tools.StorageTool format --standalone \
      -t "$cluster_id" -c "$run_dir/server.properties" >"$run_dir/format.out" 2>&1
  launch "$run_dir"
  echo "127.0.0.1:$port" > "$run_dir/bootstrap"
  echo "127.0.0.1:$port"
}

# Starts the broker configured in RUN_DIR and waits until it serves.
launch() {
  local run_dir="$1"
  local cp="$libs/*" log4j="-Dlog4j2.configurationFile=$here/log4j2.properties"
  nohup java -Xmx768m -Xms256m -XX:+UseG1GC "$log4j" -Dkafka.logs.dir="$run_dir/logs" \
      -cp "$cp" kafka.Kafka "$run_dir/server.properties" >"$run_dir/broker.out" 2>&1 &
  echo $! > "$run_dir/broker.pid"
  local waited=0
  until grep -q 'Kafka Server started' "$run_dir/broker.out" 2>/dev/null; do
    if ! kill -0 "$(cat "$run_dir/broker.pid")" 2>/dev/null; then
      echo "kafka.sh: broker exited during start-up; its output:" >&2; cat "$run_dir/broker.out" >&2; exit 1
    fi
    if [ "$waited" -ge 1200 ]; then echo "kafka.sh: broker not ready after 120 s" >&2; exit 1; fi
    sleep 0.1; waited=$((waited + 1))
  done
}

resume() {
  local run_dir="$1"
  [ -f "$run_dir/server.properties" ] || { echo "kafka.sh: no broker was started in $run_dir" >&2; exit 1; }
  fetch
  launch "$run_dir"
  cat "$run_dir/bootstrap"
}

stop() {
  local run_dir="$1" pid
  [ -f "$run_dir/broker.pid" ] || return 0
  pid="$(cat "$run_dir/broker.pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$run_dir/broker.pid"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start "${2:?run dir}" ;;
  stop) stop "${2:?run dir}" ;;
  resume) resume "${2:?run dir}" ;;
  *) echo "usage: kafka.sh fetch | start RUN_DIR | stop RUN_DIR | resume RUN_DIR" >&2; exit 2 ;;
esac
