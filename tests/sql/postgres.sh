#!/usr/bin/env bash
# A real PostgreSQL server on 127.0.0.1 for the tests, from the Debian package `postgresql`
# (installed with apt-get when initdb and pg_ctl are missing; as root, or through sudo).
# A fresh cluster per start, with fsync off: a superuser `turnpike`, password `turnpike-test`,
# checked with scram-sha-256 on TCP (so a wrong password really fails; the Unix socket, used
# by nothing but this script, trusts), and a database `turnpike_test`.
#
#   postgres.sh start RUN_DIR    create the cluster, start it on a free loopback port, wait
#                                until it serves; prints the URL
#                                (postgresql://turnpike@127.0.0.1:PORT/turnpike_test), nothing else
#   postgres.sh stop RUN_DIR     stop the server started in RUN_DIR
#   postgres.sh pause RUN_DIR    stop it (clients are disconnected), keeping port and data
#   postgres.sh resume RUN_DIR   start it again on the same port and data; waits until it serves
#
# Run as root, the server runs as the `postgres` user (initdb refuses root). Its files live in
# RUN_DIR/pg when that user can reach it, else in a directory under /tmp whose path is
# recorded in RUN_DIR/base (and which stop deletes).
set -euo pipefail
role="turnpike" password="turnpike-test" database="turnpike_test"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

fail() { echo "postgres.sh: $*" >&2; exit 1; }

absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

is_root() { [ "$(id -u)" = 0 ]; }

# The newest installed server's bin directory (Debian keeps them in /usr/lib/postgresql/N/bin).
pg_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/psql" ]; then echo "$d"; return 0; fi
  done
  return 1
}

as_admin() {
  if is_root; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else fail "PostgreSQL is not installed and installing it needs root: run \`apt-get install -y postgresql\` as root (or install sudo)"
  fi
}

install() {
  if pg_bin >/dev/null; then return 0; fi
  command -v apt-get >/dev/null \
    || fail "no PostgreSQL server found in /usr/lib/postgresql/*/bin and no apt-get to install one: install PostgreSQL (initdb, pg_ctl, psql)"
  echo "postgres.sh: installing the Debian package postgresql" >&2
  as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2 || {
    as_admin env DEBIAN_FRONTEND=noninteractive apt-get update >&2
    as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
  }
  pg_bin >/dev/null || fail "apt-get installed postgresql, but no initdb/pg_ctl/psql in /usr/lib/postgresql/*/bin"
}

# Runs a command as the user the server runs as: `postgres` when we are root, else ourselves.
as_owner() {
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# The directory for data, socket and log: RUN_DIR/pg if the server's user can write it and
# its path is short enough for a Unix socket (107 bytes), else a fresh one under /tmp.
make_base() {
  local run_dir="$1" base="$1/pg"
  if is_root; then id postgres >/dev/null 2>&1 || fail "running as root needs the \`postgres\` user (the postgresql package creates it)"; fi
  mkdir -p "$base"
  if is_root; then chown postgres:postgres "$base"; fi
  if [ "${#base}" -gt 80 ] || ! as_owner test -w "$base" -a -x "$base"; then
    rmdir "$base"
    base="$(mktemp -d /tmp/turnpike-pg.XXXXXX)"
    chmod 700 "$base"
    if is_root; then chown postgres:postgres "$base"; fi
  fi
  echo "$base"
}

# Starts the cluster in BASE on PORT and waits until it accepts a password login over TCP.
launch() {
  local base="$1" port="$2" bin
  bin="$(pg_bin)"
  as_owner "$bin/pg_ctl" -D "$base/data" -l "$base/postgres.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $base -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start >&2 || { echo "postgres.sh: the server did not start; the end of its log:" >&2; tail -n 40 "$base/postgres.log" >&2; exit 1; }
  # pg_ctl -w waits for the postmaster; this checks the path the tests take (TCP + SCRAM).
  local waited=0
  until PGPASSWORD="$password" PGCONNECT_TIMEOUT=2 "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U "$role" -d postgres \
      -c 'SELECT 1' >/dev/null 2>&1; do
    if [ "$waited" -ge 300 ]; then
      echo "postgres.sh: no password login on 127.0.0.1:$port after 30 s; the end of the log:" >&2
      tail -n 40 "$base/postgres.log" >&2; exit 1
    fi
    sleep 0.1; waited=$((waited + 1))
  done
}

# Stops the server in BASE if it runs (fast: clients are disconnected, nothing is lost).
halt() {
  local base="$1" bin pid
  [ -f "$base/data/postmaster.pid" ] || return 0
  bin="$(pg_bin)"
  if ! as_owner "$bin/pg_ctl" -D "$base/data" -m fast -w -t 30 stop >&2; then
    pid="$(head -n 1 "$base/data/postmaster.pid" 2>/dev/null || true)"
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -f "$base/data/postmaster.pid"
  fi
}

start() {
  local run_dir
  run_dir="$(absolute "$1")"
  install
  stop "$run_dir"
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  local base port bin
  base="$(make_base "$run_dir")"; echo "$base" > "$run_dir/base"
  bin="$(pg_bin)"
  printf '%s\n' "$password" > "$base/pwfile"
  if is_root; then chown postgres:postgres "$base/pwfile"; fi
  as_owner "$bin/initdb" -D "$base/data" -U "$role" --pwfile="$base/pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$run_dir/initdb.out" 2>&1 \
    || { echo "postgres.sh: initdb failed:" >&2; cat "$run_dir/initdb.out" >&2; exit 1; }
  rm -f "$base/pwfile"
  port="$(free_port)"; echo "$port" > "$run_dir/port"
  launch "$base" "$port"
  PGPASSWORD="$password" "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$role" -d postgres \
      -c "CREATE DATABASE $database" >&2
  local url="postgresql://$role@127.0.0.1:$port/$database"
  echo "$url" > "$run_dir/url"
  echo "$url"
}

stop() {
  local run_dir base
  run_dir="$(absolute "$1")"
  [ -f "$run_dir/base" ] || return 0
  base="$(cat "$run_dir/base")"
  halt "$base"
  case "$base" in
    /tmp/turnpike-pg.*) cp "$base/postgres.log" "$run_dir/" 2>/dev/null || true; rm -rf "$base" ;;
  esac
  rm -f "$run_dir/base" "$run_dir/paused"
}

pause() {
  local run_dir
  run_dir="$(absolute "$1")"
  [ -f "$run_dir/base" ] || fail "no server started in $run_dir"
  halt "$(cat "$run_dir/base")"
  touch "$run_dir/paused"
}

resume() {
  local run_dir
  run_dir="$(absolute "$1")"
  [ -f "$run_dir/base" ] || fail "no server started in $run_dir"
  [ -f "$run_dir/paused" ] || return 0
  launch "$(cat "$run_dir/base")" "$(cat "$run_dir/port")"
  rm -f "$run_dir/paused"
}

case "${1:-}" in
  start) start "${2:?run dir}" ;;
  stop) stop "${2:?run dir}" ;;
  pause) pause "${2:?run dir}" ;;
  resume) resume "${2:?run dir}" ;;
  *) echo "usage: postgres.sh start RUN_DIR | stop RUN_DIR | pause RUN_DIR | resume RUN_DIR" >&2; exit 2 ;;
esac
