#!/usr/bin/env bash
# A real MariaDB server on 127.0.0.1 for the tests, from the Debian package `mariadb-server`
# (installed with apt-get when mariadbd is missing; as root, or through sudo). A fresh data
# directory per start, no option files read (--no-defaults), InnoDB without flushing. Grants
# are real: a user `turnpike`, password `turnpike-test`, with every privilege on the database
# `turnpike_test` and on any database named `tp_…` (so tests create their own); root logs in
# without a password through the Unix socket, which only this script uses.
#
#   mariadb.sh start RUN_DIR    create the data directory, start mariadbd on a free loopback
#                               port, wait until it serves; prints the URL
#                               (mysql://turnpike@127.0.0.1:PORT/turnpike_test), nothing else
#   mariadb.sh stop RUN_DIR     stop the server started in RUN_DIR
#   mariadb.sh pause RUN_DIR    stop it (clients are disconnected), keeping port and data
#   mariadb.sh resume RUN_DIR   start it again on the same port and data; waits until it serves
#
# Run as root, the server runs as the `mysql` user when there is one. Its files live in
# RUN_DIR/db when that user can reach it, else in a directory under /tmp whose path is
# recorded in RUN_DIR/base (and which stop deletes).
set -euo pipefail
user="turnpike" password="turnpike-test" database="turnpike_test"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

fail() { echo "mariadb.sh: $*" >&2; exit 1; }

absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

is_root() { [ "$(id -u)" = 0 ]; }

# A server program by name, also from sbin directories a non-root PATH may lack.
find_bin() {
  local name="$1" d
  if command -v "$name" >/dev/null; then command -v "$name"; return 0; fi
  for d in /usr/sbin /usr/local/sbin /usr/bin; do
    if [ -x "$d/$name" ]; then echo "$d/$name"; return 0; fi
  done
  return 1
}

have_binaries() { find_bin mariadbd >/dev/null && find_bin mariadb-install-db >/dev/null && find_bin mariadb >/dev/null; }

as_admin() {
  if is_root; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else fail "MariaDB is not installed and installing it needs root: run \`apt-get install -y mariadb-server\` as root (or install sudo)"
  fi
}

install() {
  if have_binaries; then return 0; fi
  command -v apt-get >/dev/null \
    || fail "no mariadbd, mariadb-install-db and mariadb found, and no apt-get to install them: install the MariaDB server"
  echo "mariadb.sh: installing the Debian package mariadb-server" >&2
  as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server >&2 || {
    as_admin env DEBIAN_FRONTEND=noninteractive apt-get update >&2
    as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server >&2
  }
  have_binaries || fail "apt-get installed mariadb-server, but mariadbd, mariadb-install-db or mariadb is still missing"
}

# The user the server runs as: `mysql` when we are root and it exists, else root or ourselves.
server_user() {
  if is_root && id mysql >/dev/null 2>&1; then echo mysql; else id -un; fi
}

as_server_user() {
  local u
  u="$(server_user)"
  if is_root && [ "$u" != root ]; then (cd / && runuser -u "$u" -- "$@"); else "$@"; fi
}

# The directory for data, socket and log: RUN_DIR/db if the server's user can write it and
# its path is short enough for a Unix socket (107 bytes), else a fresh one under /tmp.
make_base() {
  local run_dir="$1" base="$1/db" u
  u="$(server_user)"
  mkdir -p "$base"
  if is_root; then chown "$u:" "$base"; fi
  if [ "${#base}" -gt 80 ] || ! as_server_user test -w "$base" -a -x "$base"; then
    rmdir "$base"
    base="$(mktemp -d /tmp/turnpike-mariadb.XXXXXX)"
    chmod 700 "$base"
    if is_root; then chown "$u:" "$base"; fi
  fi
  echo "$base"
}

# Options for both mariadb-install-db and mariadbd (the first must be --no-defaults).
server_options() {
  local base="$1"
  printf '%s\n' --no-defaults "--datadir=$base/data" --innodb-log-file-size=16M --innodb-buffer-pool-size=64M
}

alive() {
  local state
  state="$(ps -o stat= -p "$1" 2>/dev/null || true)"
  [ -n "$state" ] && [ "${state:0:1}" != Z ]
}

client() { "$(find_bin mariadb)" --no-defaults "$@"; }

# Starts mariadbd in BASE on PORT and waits until root answers on the socket.
launch() {
  local base="$1" port="$2" run_dir="$3" u
  u="$(server_user)"
  local -a options
  mapfile -t options < <(server_options "$base")
  if is_root; then options+=("--user=$u"); fi
  (cd / || exit 1; nohup "$(find_bin mariadbd)" "${options[@]}" --skip-networking=0 --bind-address=127.0.0.1 --port="$port" \
      --socket="$base/mysqld.sock" --pid-file="$base/mysqld.pid" --log-error="$base/mysqld.log" --skip-name-resolve \
      --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-binlog=0 --performance-schema=OFF \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --max-connections=300 \
      </dev/null >"$run_dir/mysqld.out" 2>&1 &
   echo $! > "$run_dir/mysqld.pid")
  local waited=0 pid
  pid="$(cat "$run_dir/mysqld.pid")"
  until client --socket="$base/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    if ! alive "$pid"; then
      echo "mariadb.sh: mariadbd exited during start-up; the end of its log:" >&2
      tail -n 40 "$base/mysqld.log" "$run_dir/mysqld.out" >&2 2>/dev/null || true; exit 1
    fi
    if [ "$waited" -ge 600 ]; then
      echo "mariadb.sh: mariadbd not answering after 60 s; the end of its log:" >&2
      tail -n 40 "$base/mysqld.log" >&2; halt "$run_dir"; exit 1
    fi
    sleep 0.1; waited=$((waited + 1))
  done
}

# Waits until `turnpike` logs in with its password over TCP: the path the tests take.
wait_tcp_login() {
  local port="$1" waited=0
  until client -h 127.0.0.1 -P "$port" --protocol=TCP -u"$user" -p"$password" -e 'SELECT 1' "$database" >/dev/null 2>&1; do
    if [ "$waited" -ge 300 ]; then fail "no password login for $user on 127.0.0.1:$port after 30 s"; fi
    sleep 0.1; waited=$((waited + 1))
  done
}

# Stops the server started in RUN_DIR if it runs (SIGTERM is a clean shutdown).
halt() {
  local run_dir="$1" pid
  [ -f "$run_dir/mysqld.pid" ] || return 0
  pid="$(cat "$run_dir/mysqld.pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do alive "$pid" || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$run_dir/mysqld.pid"
}

start() {
  local run_dir
  run_dir="$(absolute "$1")"
  install
  stop "$run_dir"
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  local base port u
  base="$(make_base "$run_dir")"; echo "$base" > "$run_dir/base"
  u="$(server_user)"
  local -a options
  mapfile -t options < <(server_options "$base")
  if is_root; then options+=("--user=$u"); fi
  (cd / && "$(find_bin mariadb-install-db)" "${options[@]}" --auth-root-authentication-method=normal \
      --skip-test-db --skip-name-resolve) >"$run_dir/install-db.out" 2>&1 \
    || { echo "mariadb.sh: mariadb-install-db failed:" >&2; cat "$run_dir/install-db.out" >&2; exit 1; }
  port="$(free_port)"; echo "$port" > "$run_dir/port"
  launch "$base" "$port" "$run_dir"
  # Quoted: the backticks and the escaped underscore are SQL (`tp\_%` = any database tp_…).
  client --socket="$base/mysqld.sock" -uroot >&2 <<'SQL'
CREATE DATABASE turnpike_test;
CREATE USER 'turnpike'@'%' IDENTIFIED BY 'turnpike-test';
CREATE USER 'turnpike'@'127.0.0.1' IDENTIFIED BY 'turnpike-test';
GRANT ALL PRIVILEGES ON turnpike_test.* TO 'turnpike'@'%', 'turnpike'@'127.0.0.1';
GRANT ALL PRIVILEGES ON `tp\_%`.* TO 'turnpike'@'%', 'turnpike'@'127.0.0.1';
SQL
  wait_tcp_login "$port"
  local url="mysql://$user@127.0.0.1:$port/$database"
  echo "$url" > "$run_dir/url"
  echo "$url"
}

stop() {
  local run_dir base
  run_dir="$(absolute "$1")"
  halt "$run_dir"
  [ -f "$run_dir/base" ] || return 0
  base="$(cat "$run_dir/base")"
  case "$base" in
    /tmp/turnpike-mariadb.*) cp "$base/mysqld.log" "$run_dir/" 2>/dev/null || true; rm -rf "$base" ;;
  esac
  rm -f "$run_dir/base" "$run_dir/paused"
}

pause() {
  local run_dir
  run_dir="$(absolute "$1")"
  [ -f "$run_dir/base" ] || fail "no server started in $run_dir"
  halt "$run_dir"
  touch "$run_dir/paused"
}

resume() {
  local run_dir
  run_dir="$(absolute "$1")"
  [ -f "$run_dir/base" ] || fail "no server started in $run_dir"
  [ -f "$run_dir/paused" ] || return 0
  launch "$(cat "$run_dir/base")" "$(cat "$run_dir/port")" "$run_dir"
  wait_tcp_login "$(cat "$run_dir/port")"
  rm -f "$run_dir/paused"
}

case "${1:-}" in
  start) start "${2:?run dir}" ;;
  stop) stop "${2:?run dir}" ;;
  pause) pause "${2:?run dir}" ;;
  resume) resume "${2:?run dir}" ;;
  *) echo "usage: mariadb.sh start RUN_DIR | stop RUN_DIR | pause RUN_DIR | resume RUN_DIR" >&2; exit 2 ;;
esac
