"""Trains a digit classifier and writes it where AI Platform and Vertex say to.

`--job-dir gs://B/dir` (ml v1, added by the service) or AIP_MODEL_DIR (Vertex, from
baseOutputDirectory); buckets are mounted at /gcs/B. Offline: the digits data set ships
with scikit-learn.
"""
import argparse
import os
import pickle

from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split


def local_path(uri):
    return "/gcs/" + uri[len("gs://"):] if uri.startswith("gs://") else uri


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--job-dir", default="")
    p.add_argument("--max-iter", type=int, default=20)
    args = p.parse_args()
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x / 16.0, y, random_state=0)
    model = SGDClassifier(max_iter=args.max_iter, tol=None, random_state=0).fit(x_train, y_train)
    print(f"accuracy={model.score(x_test, y_test):.3f}", flush=True)
    out = args.job_dir or os.environ.get("AIP_MODEL_DIR", "")
    if out:
        path = os.path.join(local_path(out), "model")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "model.pkl"), "wb") as f:
            pickle.dump(model, f)
        print(f"model written to {out}/model/model.pkl", flush=True)


if __name__ == "__main__":
    main()
