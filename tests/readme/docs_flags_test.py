#!/usr/bin/env python3
"""Every page of the manual against the binaries it describes: each `trainyard ...` and
`trainyardd ...` command line in a code block of README.md and docs/ (every page,
docs/contracts/ included) names only flags that command's `--help` lists. A flag renamed
or removed in the code, and still written in a page, fails here; the runnable examples of
the README, docs/api.md and docs/tuning.md are also run (tests/readme/readme_test.py).

A line that names several commands (`list|describe`, `...`) is notation and skipped.

Usage: docs_flags_test.py REPO_ROOT BIN_DIR
"""
import glob
import os
import re
import subprocess
import sys


def pages(root):
    return [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))


class Helps:
    def __init__(self, bindir):
        self.bindir, self.cache = bindir, {}

    def of(self, words):
        """(exit code, text) of `words --help`."""
        key = tuple(words)
        if key not in self.cache:
            run = subprocess.run([os.path.join(self.bindir, words[0]), *words[1:], "--help"],
                                 capture_output=True, text=True, timeout=60)
            self.cache[key] = (run.returncode, run.stdout + run.stderr)
        return self.cache[key]


def command_lines(path):
    """(line number, program, the rest) of each command line in a code block."""
    in_block = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.strip().startswith("```"):
            in_block = not in_block
            continue
        match = re.match(r"^\s*(?:sudo\s+)?(?:\S*/)?(trainyardd?)\s+(.*)$", line)
        if in_block and match:
            yield number, match.group(1), match.group(2).split(" #")[0]


def problems(root, bindir):
    helps, found, checked = Helps(bindir), [], 0
    for path in pages(root):
        for number, program, rest in command_lines(path):
            tokens = rest.split()
            if any("|" in t or t == "..." for t in tokens):
                continue  # Notation for several commands.
            words = [program]
            if program == "trainyard":
                for t in tokens:
                    if not re.match(r"^[a-z][a-z-]*$", t):
                        break
                    words.append(t)
                while len(words) > 1 and helps.of(words)[0] != 0:
                    words.pop()  # The rest are arguments.
            code, text = helps.of(words)
            if code != 0:
                found.append(f"{os.path.relpath(path, root)}:{number}: `{' '.join(words)} --help` failed")
                continue
            checked += 1
            for t in tokens:
                flag = re.match(r"^\[?(--[a-z][a-z0-9-]*)", t)
                if flag and flag.group(1) != "--help" and flag.group(1) not in text:
                    found.append(f"{os.path.relpath(path, root)}:{number}: "
                                 f"`{' '.join(words)}` has no {flag.group(1)}")
    return found, checked


def main():
    root, bindir = sys.argv[1], sys.argv[2]
    found, checked = problems(root, bindir)
    for p in found:
        print(p)
    print(f"docs_flags: {checked} command lines in {len(pages(root))} pages checked, "
          f"{len(found)} problems")
    sys.exit(1 if found or checked == 0 else 0)


if __name__ == "__main__":
    main()
