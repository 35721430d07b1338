# SPDX-License-Identifier: Apache-2.0
"""The accuracy debugger's figures (matplotlib, Agg backend: no display
needed) and text tables, written into save_dir."""
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def file_name(name):
    """A node name as a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def save(fig, save_dir, name):
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, name)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def write_table(save_dir, name, header, rows):
    """A text table (columns aligned) in save_dir; returns its path."""
    os.makedirs(save_dir, exist_ok=True)
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "-" * len(lines[0]))
    path = os.path.join(save_dir, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _finite(v):
    return [x if math.isfinite(x) else np.nan for x in v]


def curves(title, metric, labels, series, save_dir, name, baseline=None, markers=None):
    """Lines over the node axis: series = {curve label: [value per label]}."""
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels) + 3), 4.5))
    x = np.arange(len(labels))
    for i, (label, values) in enumerate(series.items()):
        style = (markers or {}).get(label, "-o")
        ax.plot(x, _finite(values), style, markersize=4, label=label)
    if baseline is not None:
        ax.axhline(baseline, color="tab:blue", linestyle="--", linewidth=1, label="baseline")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save(fig, save_dir, name)


def _marks(ax, data, threshold):
    """Blue triangle: the largest absolute value; red dashed: the calibration threshold."""
    m = float(np.max(np.abs(data))) if data.size else 0.0
    ax.plot([m], [0], marker="^", color="blue", markersize=9, linestyle="none", label="max |x| = %.4g" % m)
    if threshold is not None:
        ax.axvline(threshold, color="red", linestyle="--", label="threshold %.4g" % threshold)
        ax.axvline(-threshold, color="red", linestyle="--")


def histograms(title, panels, save_dir, name, threshold=None):
    """One histogram per panel: panels = [(label, data), ...]; overlays when
    the first label ends with ':overlay'."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    axes = np.atleast_1d(axes)
    for ax, (label, data) in zip(axes, panels):
        items = data if isinstance(data, list) else [(label, data)]
        for lab, d in items:
            d = np.asarray(d, np.float64).ravel()
            ax.hist(d, bins=128, alpha=0.6, label=lab, log=True)
        _marks(ax, np.concatenate([np.asarray(d, np.float64).ravel() for _, d in items]), threshold)
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    return save(fig, save_dir, name)


def boxplot(title, data, axis, save_dir, name):
    """One box per channel of `data` along `axis`: red line = median, blue
    dashed = mean, whiskers at 1.5 IQR, outliers as points."""
    moved = np.moveaxis(np.asarray(data, np.float64), axis, 0)
    per_channel = [c.ravel() for c in moved]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.25 * len(per_channel) + 2), 4.5))
    ax.boxplot(per_channel, showmeans=True, meanline=True, flierprops={"markersize": 2},
               medianprops={"color": "red"}, meanprops={"color": "blue", "linestyle": "--"})
    ax.set_xlabel("channel (axis %d, %d channels)" % (axis, len(per_channel)))
    ax.set_ylabel("value")
    ax.set_title(title)
    step = max(1, len(per_channel) // 32)
    ax.set_xticks(range(1, len(per_channel) + 1, step))
    ax.set_xticklabels(range(0, len(per_channel), step), fontsize=7)
    return save(fig, save_dir, name), per_channel
