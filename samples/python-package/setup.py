"""The trainer package, laid out as the AI Platform / Vertex guides lay it out.

`gcloud ai-platform jobs submit training --package-path trainer` finds this file beside
the package and builds the sdist with it; Trainyard installs the sdist with pip (offline:
every requirement must be in the runtime image, and scikit-learn is) and runs
`python3 -m trainer.task`.
"""
from setuptools import find_packages, setup

setup(
    name="trainer",
    version="0.1",
    packages=find_packages(),
    install_requires=["scikit-learn"],
    description="Digits classifier trained as a Python package on a prebuilt runtime.",
)
