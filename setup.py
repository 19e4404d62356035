"""Package map: ledgerlm.synth -> synth/, ledgerlm.train -> train/, ledgerlm.evaluate -> evaluate/.

The import name `evaluate` belongs to Hugging Face; this project is only ever `ledgerlm.evaluate`.
Every sub-folder (code or data) is listed so that wheels and editable installs see the same tree.
"""
import os

from setuptools import setup

ROOTS = {"ledgerlm": "ledgerlm", "ledgerlm.synth": "synth", "ledgerlm.train": "train", "ledgerlm.evaluate": "evaluate"}
DATA_GLOBS = ["*.yaml", "*.yml", "*.json", "*.gz", "*.csv", "*.txt", "*.md", "*.jinja", "*.parquet", "*.html", "*.tex"]

packages, package_dir = [], {}
for pkg, folder in ROOTS.items():
    package_dir[pkg] = folder
    for dirpath, dirnames, _ in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        rel = os.path.relpath(dirpath, folder)
        packages.append(pkg if rel == "." else pkg + "." + rel.replace(os.sep, "."))

setup(packages=packages, package_dir=package_dir, package_data={p: DATA_GLOBS for p in packages})
