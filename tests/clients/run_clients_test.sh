#!/usr/bin/env bash
# Compatibility test: drives the real Google Node.js clients (googleapis ml v1 and
# aiplatform v1, @google-cloud/aiplatform GAPIC over REST) against a fresh trainyardd.
#
# Usage: run_clients_test.sh PATH/TO/trainyardd
# Env:   TRAINYARD_ENGINE_SOCKET (default /run/podman/podman.sock)
#        TRAINYARD_CLIENTS_KEEP=1 keeps the temp dir (daemon log, data dir).
#        TRAINYARD_CLIENTS_STOP_GRACE (default 2): the daemon's --stop-grace, so that
#        cancelling a `sleep 1000` job (PID 1 ignores SIGTERM) takes ~2 s, not 10.
# Needs node (>= 18) and npm; installs node_modules with `npm ci` when missing.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PATH/TO/trainyardd" >&2
  exit 2
fi
DAEMON=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOCK=${TRAINYARD_ENGINE_SOCKET:-/run/podman/podman.sock}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "google_clients: node and npm are required (scripts/setup installs them)" >&2
  exit 1
fi
if [ ! -x "$DAEMON" ]; then
  echo "google_clients: $DAEMON is not executable" >&2
  exit 1
fi

# --- node_modules: install from the committed lock file when missing or stale.
stamp="$HERE/node_modules/.trainyard-lock.sha256"
want=$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "google_clients: npm ci in $HERE"
  start=$(date +%s)
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
  echo "google_clients: npm ci took $(( $(date +%s) - start ))s"
fi

# --- daemon on a free port with a throw-away data dir.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-clients.XXXXXX")
PID=""
cleanup() {
  local rc=$?
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -f "$TMP/daemon.log" ]; then
    echo "---- trainyardd log (last 60 lines) ----" >&2
    tail -n 60 "$TMP/daemon.log" >&2 || true
  fi
  if [ "${TRAINYARD_CLIENTS_KEEP:-0}" = "1" ]; then
    echo "google_clients: kept $TMP" >&2
  else
    rm -rf "$TMP" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$DAEMON" --listen 127.0.0.1:0 --port-file "$TMP/port" --data-dir "$TMP/data" \
  --engine-socket "$SOCK" --stop-grace "${TRAINYARD_CLIENTS_STOP_GRACE:-2}" \
  >"$TMP/daemon.log" 2>&1 &
PID=$!

PORT=""
for _ in $(seq 1 200); do
  if [ -s "$TMP/port" ]; then
    PORT=$(tr -d '[:space:]' < "$TMP/port")
    [ -n "$PORT" ] && break
  fi
  if ! kill -0 "$PID" 2>/dev/null; then
    echo "google_clients: trainyardd exited before writing its port file" >&2
    exit 1
  fi
  sleep 0.05
done
if [ -z "$PORT" ]; then
  echo "google_clients: no port file after 10s" >&2
  exit 1
fi
echo "google_clients: trainyardd pid $PID on 127.0.0.1:$PORT"

set +e
node "$HERE/clients_test.mjs" "http://127.0.0.1:$PORT"
status=$?
set -e
exit "$status"
