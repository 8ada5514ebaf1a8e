#!/usr/bin/env python3
"""Tunes a scikit-learn digit classifier: reports test accuracy for hyperparameter tuning.

Three hyperparameters arrive on the command line as the tuning service passes them
(`--alpha=0.0003 --max-iter=12 --loss=modified_huber`):
- alpha     L2 regularisation of the SGD classifier (DOUBLE, log scale),
- max-iter  SGD passes per epoch (INTEGER),
- loss      the loss the SGD classifier minimises (CATEGORICAL).
After every epoch it reports `accuracy` in the file format of Google's cloudml-hypertune
library (one JSON object per line, the whole file rewritten on each report, values as
strings) at $CLOUD_ML_HP_METRIC_FILE (default /tmp/hypertune/output.metrics): what
`hypertune.HyperTune().report_hyperparameter_tuning_metric(...)` writes, without
needing PyPI. Runs unchanged on Trainyard, Vertex AI and AI Platform Training.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

METRIC_FILE = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
MAX_LINES = 100  # cloudml-hypertune keeps its last 100 reports.


class Reporter:
    """The cloudml-hypertune file format (spec: runtime-contract §8)."""

    def __init__(self, path):
        self.path = path
        self.lines = []
        os.makedirs(os.path.dirname(path), exist_ok=True)

    def report(self, tag, value, step):
        line = {tag: str(value), "global_step": str(int(step)), "checkpoint_path": "",
                "timestamp": time.time(), "trial": os.environ.get("CLOUD_ML_TRIAL_ID", "0")}
        self.lines = (self.lines + [json.dumps(line, sort_keys=True)])[-MAX_LINES:]
        with open(self.path, "w") as f:
            f.write("\n".join(self.lines) + "\n")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--alpha", type=float, default=1e-4)
    p.add_argument("--max-iter", "--max_iter", dest="max_iter", type=int, default=10)
    p.add_argument("--loss", default="log_loss",
                   choices=["hinge", "log_loss", "modified_huber", "perceptron"])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--metric", default=os.environ.get("CLOUD_ML_HP_METRIC_TAG", "accuracy"))
    args, unknown = p.parse_known_args(argv)
    if unknown:
        print(f"ignoring unknown arguments: {' '.join(unknown)}", flush=True)
    return args


def main(argv):
    args = parse_args(argv)
    trial = os.environ.get("CLOUD_ML_TRIAL_ID", "0")
    print(f"trial {trial}: alpha={args.alpha:g} max_iter={args.max_iter} loss={args.loss}",
          flush=True)
    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=0.3, random_state=args.seed,
        stratify=digits.target)
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    clf = SGDClassifier(loss=args.loss, alpha=args.alpha, max_iter=args.max_iter, tol=None,
                        random_state=args.seed, warm_start=True)
    reporter = Reporter(METRIC_FILE)
    for epoch in range(1, args.epochs + 1):
        clf.fit(x_train, y_train)
        accuracy = float(np.mean(clf.predict(x_test) == y_test))
        print(f"epoch {epoch}: {args.metric}={accuracy:.4f}", flush=True)
        reporter.report(args.metric, accuracy, epoch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
