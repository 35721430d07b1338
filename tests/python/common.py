# SPDX-License-Identifier: Apache-2.0
"""Shared by the Python tests: where the models of make_models.py are and
where the build's tools live. Environment (set by tests/python/CMakeLists.txt):
OPENBPU_PY_MODELS (make_models.py's output), OPENBPU_BIN (build/bin)."""
import os

import numpy as np

MODELS = os.environ.get("OPENBPU_PY_MODELS", "")
BIN = os.environ.get("OPENBPU_BIN", "")


def out_dir(name):
    return os.path.join(MODELS, name, "model_output")


def model_file(name, kind=None):
    return os.path.join(out_dir(name), name + ("_%s_model.onnx" % kind if kind else ".bin"))


def hbm_file(name):
    """The .hbm hb_compile made (make_models.py: names ending in _hbm)."""
    return os.path.join(out_dir(name), name + ".hbm")


def calibration_samples(name, input_name):
    d = os.path.join(out_dir(name), "calibration_data", input_name)
    return [np.load(os.path.join(d, f)) for f in sorted(os.listdir(d), key=lambda f: int(f.split(".")[0]))]


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
