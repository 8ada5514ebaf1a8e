#!/usr/bin/env python3
"""Runs the README's shell examples against a real daemon, as a newcomer would.

Every ```sh block under the sections about the CLI (README.md), the REST API and gcloud
(docs/api.md) and hyperparameter tuning (docs/tuning.md) is split into commands and run
in that order from the repository's
root (a view of it), against a trainyardd of its own (port 0, a temporary data directory, the real
engine) with `trainyard` on PATH and, for gcloud, an isolated CLOUDSDK_CONFIG. A
command passes when it exits 0 (curl: when its answer holds no "error"). What the
README writes as notation is read as a reader would:
  - `[--flag=...]` is optional: left out;
  - `ID` is the id of the custom job the block created last;
  - a line holding `...` or `a|b` names several commands: skipped;
  - `API=http://127.0.0.1:8080` and `export PATH=...` are this test's own settings.
A cancel of a job that already ended is allowed to answer that it did (the README
lists cancel after commands that wait for the job). gcloud's blocks run only where
gcloud is installed; `gcloud ai custom-jobs stream-logs` follows a running job until
Ctrl-C (the README says so), so it runs once its job ended.

Usage: readme_test.py REPO_ROOT BIN_DIR
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SECTIONS = ("The CLI", "The REST API", "Google's own gcloud", "Hyperparameter tuning")
# Where those sections are, in the order a reader meets them.
DOCS = ("README.md", "docs/api.md", "docs/tuning.md")
COMMAND_TIMEOUT_S = 600


def sh_blocks(readme):
    """(section, [lines]) for every ```sh block, in order."""
    section, block, out = "", None, []
    for line in open(readme, encoding="utf-8"):
        line = line.rstrip("\n")
        if block is None:
            if line.startswith("## "):
                section = line[3:].strip()
            elif line.strip() == "```sh":
                block = []
        elif line.strip() == "```":
            out.append((section, block))
            block = None
        else:
            block.append(line)
    return out


def complete(text):
    try:
        shlex.split(text, comments=True)
        return not text.rstrip().endswith("\\")
    except ValueError:  # An open quote: the command goes on.
        return False


def commands(lines):
    """Logical commands: continuation lines joined, multi-line quotes kept whole."""
    out, pending = [], ""
    for line in lines:
        pending = pending + "\n" + line if pending else line
        if complete(pending):
            if pending.strip() and not pending.strip().startswith("#"):
                out.append(pending)
            pending = ""
    return out


def without_notation(cmd):
    cmd = re.sub(r"\s\[--[^\]]*\]", "", cmd)  # Optional flags.
    return cmd


def is_notation_only(cmd):
    words = shlex.split(cmd, comments=True)
    return "..." in cmd or any(re.fullmatch(r"[\w-]+(\|[\w-]+)+", w) for w in words)


class Daemon:
    def __init__(self, bin_dir, work):
        self.port_file = os.path.join(work, "port")
        args = [os.path.join(bin_dir, "trainyardd"), "--listen", "127.0.0.1:0",
                "--port-file", self.port_file, "--data-dir", os.path.join(work, "data")]
        if os.environ.get("TRAINYARD_ENGINE_SOCKET"):
            args += ["--engine-socket", os.environ["TRAINYARD_ENGINE_SOCKET"]]
        self.log = open(os.path.join(work, "trainyardd.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if os.path.exists(self.port_file) and open(self.port_file).read().strip():
                break
            time.sleep(0.05)
        self.url = "http://127.0.0.1:" + open(self.port_file).read().strip()

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def wait_ended(self, name, timeout_s=300):
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            state = self.get("/v1/" + name).get("state", "")
            if state in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"):
                return state
            time.sleep(0.5)
        return "still running"

    def post(self, path):
        req = urllib.request.Request(self.url + path, data=b"", method="POST")
        try:
            urllib.request.urlopen(req, timeout=10).read()
        except urllib.error.HTTPError:
            pass  # Ended meanwhile.

    def end_every_job(self, project="local"):
        """Cancels what the examples left running, so no container outlives the test."""
        names = []
        for path in ("/v1/projects/%s/locations/local/customJobs" % project,
                     "/v1/projects/%s/locations/local/hyperparameterTuningJobs" % project,
                     "/v1/projects/%s/locations/us-central1/customJobs" % project,
                     "/v1/projects/%s/locations/us-central1/hyperparameterTuningJobs" % project):
            for key, jobs in self.get(path).items():
                if isinstance(jobs, list):
                    names += [j["name"] for j in jobs if not j.get("endTime")]
        for job in self.get("/v1/projects/%s/jobs" % project).get("jobs", []):
            if job.get("state") not in ("SUCCEEDED", "FAILED", "CANCELLED"):
                names.append("projects/%s/jobs/%s" % (project, job["jobId"]))
        for name in names:
            self.post("/v1/" + name + ":cancel")
        deadline = time.time() + 120
        for name in names:
            while time.time() < deadline:
                job = self.get("/v1/" + name)
                if job.get("endTime"):
                    break
                time.sleep(0.5)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Runner:
    def __init__(self, repo, bin_dir, daemon, work):
        self.repo, self.daemon, self.work = repo, daemon, work
        # Commands run in a view of the repository (links to its folders) that also
        # holds the ./dataset gcloud's storage example copies: the source tree is
        # never written.
        self.cwd = os.path.join(work, "checkout")
        os.makedirs(os.path.join(self.cwd, "dataset"))
        for entry in os.listdir(repo):
            if entry not in (".git", "dataset"):
                os.symlink(os.path.join(repo, entry), os.path.join(self.cwd, entry))
        with open(os.path.join(self.cwd, "dataset", "part-0.csv"), "w") as f:
            f.write("x,y\n1,2\n")
        self.env = dict(os.environ)
        self.env["PATH"] = bin_dir + os.pathsep + self.env.get("PATH", "")
        self.env["TRAINYARD_API"] = daemon.url
        self.env["API"] = daemon.url
        self.env["CLOUDSDK_CONFIG"] = os.path.join(work, "gcloud")
        self.env["CLOUDSDK_CORE_DISABLE_PROMPTS"] = "1"
        self.job_name = ""  # projects/.../customJobs/N of the last custom job created.
        self.failures = []

    def run(self, section, cmd):
        cmd = without_notation(cmd)
        if is_notation_only(cmd):
            print("  skip (notation):", cmd.splitlines()[0])
            return
        first = shlex.split(cmd, comments=True)[0]
        if first.startswith("API=") or cmd.startswith("export PATH="):
            return
        if re.search(r"\bID\b", cmd):
            if not self.job_name:
                self.failures.append(f"{cmd}: no custom job was created before it")
                return
            job_id = self.job_name.rsplit("/", 1)[1]
            if first == "gcloud" and "stream-logs" in cmd:
                self.daemon.wait_ended(self.job_name)
            cmd = re.sub(r"\bID\b", job_id, cmd)
        print(f"  $ {cmd}", flush=True)
        started = time.time()
        try:
            p = subprocess.run(["bash", "-c", cmd], cwd=self.cwd, env=self.env,
                               capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = 124, str(e.stdout or ""), str(e.stderr or "")
        print(f"    exit {rc} after {time.time() - started:.1f} s", flush=True)
        if re.search(r"\screate\s|-X POST \S*/customJobs\s", cmd):
            self.remember_job(out + err)
        if self.passed(first, cmd, rc, out, err):
            return
        self.failures.append(f"[{section}] {cmd}\n    exit {rc}\n    stdout: {out[-1500:]}\n"
                             f"    stderr: {err[-1500:]}")

    def remember_job(self, text):
        """After a create: the new custom job's name, which `ID` stands for."""
        m = re.findall(r"(projects/[^/\s\]]+/locations/[^/\s\]]+/customJobs/\d+)", text)
        if m:
            self.job_name = m[0]

    def passed(self, first, cmd, rc, out, err):
        ended_already = re.search(r"(already|is) (finished|ended|in a terminal state)|"
                                  r"FAILED_PRECONDITION", out + err, re.I)
        if rc != 0:
            return " cancel " in cmd and bool(ended_already)
        if first == "curl" and '"error"' in out:
            return (":cancel" in cmd or "DELETE" in cmd) and bool(ended_already)
        return True


def main():
    repo, bin_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="ty-readme-")
    daemon = Daemon(bin_dir, work)
    runner = Runner(repo, bin_dir, daemon, work)
    have_gcloud = shutil.which("gcloud") is not None
    try:
        blocks = [b for doc in DOCS for b in sh_blocks(os.path.join(repo, doc))]
        for section, lines in blocks:
            if section not in SECTIONS:
                continue
            if section == "Google's own gcloud" and not have_gcloud:
                print("gcloud is not installed: its README block is not run")
                continue
            print(f"[{section}]", flush=True)
            for cmd in commands(lines):
                runner.run(section, cmd)
    finally:
        try:
            daemon.end_every_job()
        finally:
            daemon.stop()
            shutil.rmtree(work, ignore_errors=True)
    if runner.failures:
        print("\nREADME commands that did not work as written:")
        for f in runner.failures:
            print(" -", f)
        return 1
    print("every README example ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
