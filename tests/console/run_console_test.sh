#!/usr/bin/env bash
# The console in a real browser: Debian's chromium driven by playwright-core (npm)
# against a trainyardd of its own running real jobs (tests/console/console_test.mjs).
# Screenshots of each page go to SHOTS (default build/console-screenshots).
# Usage: run_console_test.sh PATH/TO/trainyardd [SHOTS]
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PATH/TO/trainyardd [SHOTS]" >&2
  exit 2
fi
DAEMON=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHOTS=${2:-$(dirname "$(dirname "$DAEMON")")/console-screenshots}
CHROMIUM=${TRAINYARD_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "console: $CHROMIUM is missing (scripts/setup installs Debian's chromium)" >&2
  exit 1
fi
source "$HERE/../clients/npm_ci_once.sh"
npm_ci_once "$HERE" console

NAME=console
source "$HERE/../clients/daemon_lib.sh"
mkdir -p "$SHOTS"
CHROMIUM="$CHROMIUM" SHOTS="$SHOTS" DAEMON="$DAEMON" WORK="$TMP" \
  node "$HERE/console_test.mjs" "http://127.0.0.1:$PORT"
