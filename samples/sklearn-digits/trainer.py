#!/usr/bin/env python3
"""Trains a digit classifier with scikit-learn and saves it where Vertex/AI Platform expect.

Runs unchanged on Trainyard, Vertex AI custom training and AI Platform Training:
- Vertex passes the output location in AIP_MODEL_DIR (from baseOutputDirectory);
- AI Platform Training (ml v1) passes `--job-dir gs://...` on the command line.
Buckets are mounted at /gcs/BUCKET inside the container, so gs://B/p is written as
/gcs/B/p. Uses the digits data set shipped with Debian's python3-sklearn (offline).
"""
import argparse
import json
import os
import pickle
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def log(msg):
    print(msg, flush=True)


def local_path(uri):
    """gs://BUCKET/path -> /gcs/BUCKET/path (the FUSE mount); local paths unchanged."""
    if uri.startswith("gs://"):
        return "/gcs/" + uri[len("gs://"):]
    return uri


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--job-dir", default="", help="ml v1 output dir (gs:// or local)")
    p.add_argument("--model-dir", default="", help="overrides AIP_MODEL_DIR / --job-dir")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--max-iter", type=int, default=20, help="SGD passes per epoch")
    p.add_argument("--alpha", type=float, default=1e-4, help="L2 regularisation")
    p.add_argument("--C", type=float, default=None, help="inverse regularisation (sets alpha)")
    p.add_argument("--test-size", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=42)
    # Services append arguments of their own (hyperparameters, --job-dir): tolerate extras.
    args, unknown = p.parse_known_args(argv)
    if unknown:
        log(f"ignoring unknown arguments: {' '.join(unknown)}")
    return args


def main(argv):
    args = parse_args(argv)
    out_uri = args.model_dir or os.environ.get("AIP_MODEL_DIR", "") or args.job_dir
    if not out_uri:
        out_uri = "/tmp/model"
        log("no AIP_MODEL_DIR or --job-dir given; writing to /tmp/model")
    out_dir = local_path(out_uri)
    log(f"trainer: CLUSTER_SPEC={os.environ.get('CLUSTER_SPEC', '(unset)')[:200]}")
    log(f"trainer: loading digits, output {out_uri} -> {out_dir}")

    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=args.test_size, random_state=args.seed,
        stratify=digits.target)
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    log(f"trainer: {len(x_train)} training and {len(x_test)} test samples")

    alpha = args.alpha if args.C is None else 1.0 / (args.C * len(x_train))
    clf = SGDClassifier(loss="log_loss", alpha=alpha, max_iter=args.max_iter, tol=None,
                        random_state=args.seed, warm_start=True)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        clf.fit(x_train, y_train)
        accuracy = float(np.mean(clf.predict(x_test) == y_test))
        log(f"epoch {epoch}/{args.epochs}: accuracy={accuracy:.4f} "
            f"({time.time() - start:.2f}s)")

    os.makedirs(out_dir, exist_ok=True)
    model_path = os.path.join(out_dir, "model.pkl")
    with open(model_path, "wb") as f:
        pickle.dump({"scaler": scaler, "classifier": clf}, f)
    metrics = {"accuracy": accuracy, "epochs": args.epochs, "alpha": alpha,
               "train_samples": len(x_train), "test_samples": len(x_test)}
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    log(f"accuracy={accuracy:.3f}")
    log(f"model written to {model_path}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # noqa: BLE001 - report and fail the replica
        print(f"trainer failed: {e!r}", file=sys.stderr, flush=True)
        sys.exit(1)
