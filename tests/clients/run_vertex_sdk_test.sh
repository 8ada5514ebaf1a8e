#!/usr/bin/env bash
# Compatibility test: Google's Vertex AI Python SDK (google-cloud-aiplatform, unchanged,
# from $TRAINYARD_VENDOR_DIR/vertex-sdk) against a fresh trainyardd, as the guides use it.
#
# Usage: run_vertex_sdk_test.sh PATH/TO/trainyardd
# Env:   TY_VERTEX_SDK: where the SDK is unpacked (default: vertex-sdk beside the build's
#        bin/; scripts/test puts it there with the vendor folder's install.sh). Debian's
#        /usr/bin/python3 runs it: the SDK needs Debian's grpcio and protobuf.
#        The daemon's variables as in daemon_lib.sh.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PATH/TO/trainyardd" >&2
  exit 2
fi
DAEMON=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SDK=${TY_VERTEX_SDK:-$(dirname "$(dirname "$DAEMON")")/vertex-sdk}
if [ ! -d "$SDK/google/cloud/aiplatform" ]; then
  if [ "${TY_SKIP_VERTEX_SDK:-}" = 1 ]; then
    echo "vertex_sdk: skipped: no TRAINYARD_VENDOR_DIR was given to scripts/test"
    exit 77
  fi
  echo "vertex_sdk: the SDK is not at $SDK; run \$TRAINYARD_VENDOR_DIR/vertex-sdk/install.sh" \
       "$SDK (scripts/test does)" >&2
  exit 1
fi

NAME=vertex_sdk
# shellcheck source=daemon_lib.sh
source "$HERE/daemon_lib.sh"

set +e
PYTHONPATH="$SDK" STORAGE_EMULATOR_HOST="http://127.0.0.1:$PORT" TY_DATA_DIR="$TMP/data" \
  /usr/bin/python3 -W ignore "$HERE/vertex_sdk_test.py" "http://127.0.0.1:$PORT"
status=$?
set -e
exit "$status"
