"""What the Python benchmarks share: JSON over HTTP and a daemon of their own."""
import json
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def http(method, url, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"{}")


def start_daemon(tmp, build_dir, extra_args=()):
    port_file = os.path.join(tmp, "port")
    log = open(os.path.join(tmp, "daemon.log"), "w")
    proc = subprocess.Popen([os.path.join(build_dir, "bin", "trainyardd"), "--listen", "127.0.0.1:0",
                             "--port-file", port_file, "--data-dir", os.path.join(tmp, "data"),
                             *extra_args],
                            stdout=log, stderr=log)
    for _ in range(400):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return proc, "http://127.0.0.1:%s" % f.read().strip()
        time.sleep(0.025)
    proc.kill()
    sys.exit("trainyardd did not start; see %s" % log.name)
