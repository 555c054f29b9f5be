#!/usr/bin/env bash
# An S3-compatible server (moto, from PyPI) on 127.0.0.1 for the tests, installed into a
# venv in .cache/moto-venv (needs python3 with venv). The same venv holds pyarrow, which
# tests use to read back Parquet objects (tests/run.sh exports its python as
# TURNPIKE_TEST_PYTHON). moto keeps everything in memory and checks no signatures; it does
# enforce S3's 5 MiB minimum for every multipart part but the last.
#
#   moto.sh install          create the venv (once; cached)
#   moto.sh start RUN_DIR    start moto_server on a free loopback port and wait until it
#                            answers; prints the endpoint (http://127.0.0.1:PORT), nothing else
#   moto.sh stop RUN_DIR     stop the server started in RUN_DIR
#   moto.sh python           print the venv's python (installing it if needed)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.cache/moto-venv"
moto_version="5.2.5"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

install() {
  if [ -f "$venv/.complete" ]; then return 0; fi
  command -v python3 >/dev/null || { echo "moto.sh: python3 (with venv) is required for the test S3 server" >&2; exit 1; }
  echo "moto.sh: installing moto $moto_version and pyarrow from PyPI into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || {
    echo "moto.sh: python3 -m venv failed (on Debian or Ubuntu: apt install python3-venv)" >&2; exit 1;
  }
  # pyarrow only as a wheel: building it from source would take an hour.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary pyarrow \
      "moto[s3]==$moto_version" flask flask-cors pyarrow >&2
  "$venv/bin/python" -c 'import moto, pyarrow.parquet' >&2
  touch "$venv/.complete"
}

start() {
  local run_dir="$1"
  install
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  local port
  port="$(free_port)"
  nohup "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$run_dir/moto.log" 2>&1 &
  echo $! > "$run_dir/moto.pid"
  local waited=0
  until "$venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=1)' \
      "$port" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$run_dir/moto.pid")" 2>/dev/null; then
      echo "moto.sh: moto_server exited during start-up; the end of its log:" >&2; tail -n 40 "$run_dir/moto.log" >&2; exit 1
    fi
    if [ "$waited" -ge 300 ]; then
      echo "moto.sh: moto_server not answering on port $port after 30 s; the end of its log:" >&2
      tail -n 40 "$run_dir/moto.log" >&2; stop "$run_dir"; exit 1
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  echo "http://127.0.0.1:$port" > "$run_dir/endpoint"
  echo "http://127.0.0.1:$port"
}

stop() {
  local run_dir="$1" pid
  [ -f "$run_dir/moto.pid" ] || return 0
  pid="$(cat "$run_dir/moto.pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$run_dir/moto.pid"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:?run dir}" ;;
  stop) stop "${2:?run dir}" ;;
  python) install; echo "$venv/bin/python" ;;
  *) echo "usage: moto.sh install | start RUN_DIR | stop RUN_DIR | python" >&2; exit 2 ;;
esac
