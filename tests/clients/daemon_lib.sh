# Sourced by the client tests: starts trainyardd (DAEMON) on a free port with a
# throw-away data dir and sets PORT, PID and TMP; stops it and removes TMP on exit,
# printing the daemon's log when the test failed. NAME names the test in messages.
# Env: TRAINYARD_ENGINE_SOCKET (default /run/podman/podman.sock); TRAINYARD_CLIENTS_KEEP=1
# keeps TMP; TRAINYARD_CLIENTS_STOP_GRACE (default 2) is the daemon's --stop-grace, so
# that cancelling a `sleep 1000` job (PID 1 ignores SIGTERM) takes ~2 s, not 10.
SOCK=${TRAINYARD_ENGINE_SOCKET:-/run/podman/podman.sock}
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
    echo "$NAME: kept $TMP" >&2
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
    echo "$NAME: trainyardd exited before writing its port file" >&2
    exit 1
  fi
  sleep 0.05
done
if [ -z "$PORT" ]; then
  echo "$NAME: no port file after 10s" >&2
  exit 1
fi
echo "$NAME: trainyardd pid $PID on 127.0.0.1:$PORT"

