# SPDX-License-Identifier: Apache-2.0
"""Error metrics of the accuracy debugger: how far `test` is from the float
reference `ref` (both any shape, compared flattened, in float64).

  cosine-similarity  ref.test / (|ref| |test|)        1 = identical (0/0 counts as 1)
  mse                mean((ref - test)^2)             0 = identical
  mre                sum|ref - test| / sum|ref|       relative L1 error, 0 = identical
  sqnr               10 log10(sum ref^2 / sum (ref - test)^2) in dB; inf = identical
  chebyshev          max|ref - test|                  0 = identical
"""
import math

import numpy as np

METRICS = ("cosine-similarity", "mse", "mre", "sqnr", "chebyshev")
# Metrics where a larger value means a smaller error.
HIGHER_IS_BETTER = {"cosine-similarity", "sqnr"}


def check_metric(name):
    if name not in METRICS:
        raise ValueError("unknown metric '%s': use one of %s" % (name, ", ".join(METRICS)))
    return name


def compute(metric, ref, test):
    a = np.asarray(ref, np.float64).ravel()
    b = np.asarray(test, np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError("cannot compare %d values with %d" % (a.size, b.size))
    d = a - b
    if metric == "cosine-similarity":
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        if na == 0 and nb == 0:
            return 1.0
        if na == 0 or nb == 0:
            return 0.0
        return float(a @ b / (na * nb))
    if metric == "mse":
        return float(np.mean(d * d)) if d.size else 0.0
    if metric == "mre":
        den = float(np.sum(np.abs(a)))
        num = float(np.sum(np.abs(d)))
        return 0.0 if num == 0 else (math.inf if den == 0 else num / den)
    if metric == "sqnr":
        noise = float(np.sum(d * d))
        return math.inf if noise == 0 else 10.0 * math.log10(max(float(np.sum(a * a)), 1e-300) / noise)
    if metric == "chebyshev":
        return float(np.max(np.abs(d))) if d.size else 0.0
    raise ValueError(check_metric(metric))


def worst_first_key(metric):
    """Sort key putting the largest error first."""
    if metric in HIGHER_IS_BETTER:
        return lambda v: v
    return lambda v: -v
