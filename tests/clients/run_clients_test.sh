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

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "google_clients: node and npm are required (scripts/setup installs them)" >&2
  exit 1
fi
if [ ! -x "$DAEMON" ]; then
  echo "google_clients: $DAEMON is not executable" >&2
  exit 1
fi

# --- node_modules: install from the committed lock file when missing or stale.
source "$HERE/npm_ci_once.sh"
npm_ci_once "$HERE" google_clients

NAME=google_clients
# shellcheck source=daemon_lib.sh
source "$HERE/daemon_lib.sh"

set +e
node "$HERE/clients_test.mjs" "http://127.0.0.1:$PORT"
status=$?
set -e
exit "$status"
