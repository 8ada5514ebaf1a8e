"""A custom-container trainer: scikit-learn digits, one replica training, the others
saying which task they are (TF_CONFIG / CLUSTER_SPEC, as Vertex and AI Platform set them).

The model goes to AIP_MODEL_DIR (Vertex) or --job-dir (AI Platform); gs://B/p is /gcs/B/p.
"""
import argparse
import json
import os
import pickle

from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split


def local_path(uri):
    return "/gcs/" + uri[len("gs://"):] if uri.startswith("gs://") else uri


def task_of(env):
    spec = json.loads(env.get("TF_CONFIG") or env.get("CLUSTER_SPEC") or "{}")
    task = spec.get("task") or {}
    return task.get("type", "chief"), int(task.get("index", 0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--job-dir", default="")
    args, _ = parser.parse_known_args()
    kind, index = task_of(os.environ)
    # TF_CONFIG's chief / AI Platform's master / CLUSTER_SPEC's first pool.
    if kind not in ("chief", "master", "workerpool0"):
        print(f"{kind} {index} ready; the chief trains", flush=True)
        return
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x / 16.0, y, random_state=0)
    model = SGDClassifier(alpha=args.alpha, random_state=0).fit(x_train, y_train)
    print(f"accuracy={model.score(x_test, y_test):.3f} alpha={args.alpha}", flush=True)
    out = os.environ.get("AIP_MODEL_DIR") or args.job_dir
    if out:
        os.makedirs(local_path(out), exist_ok=True)
        with open(os.path.join(local_path(out), "model.pkl"), "wb") as f:
            pickle.dump(model, f)
        print(f"model written to {out}", flush=True)


if __name__ == "__main__":
    main()
