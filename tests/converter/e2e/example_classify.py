#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""examples/classify built against the installed package like a user's
project, run on PNG text lines with the PP-OCR classifier converted by the
e2e tests (ppocr_cls_int16: BGR NHWC input; ppocr_cls_nv12: NV12 input, the
example converts like e2e.py): its scores must equal those openbpu_run_bin
got for the same pixels.

usage: example_classify.py --build BUILD_DIR --src SOURCE_DIR --work E2E_WORK_DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit("command failed (%d): %s" % (r.returncode, " ".join(cmd)))
    return r.stdout


def arguments():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    return ap.parse_args()


def install(args, name):
    """A fresh <work>/<name> with the build installed into its prefix/."""
    work = os.path.join(args.work, name)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", args.build, "--prefix", prefix])
    return work, prefix


def build_example(args, work, prefix, example):
    """examples/<example> configured against the prefix and built; its executable."""
    run(["cmake", "-S", os.path.join(args.src, "examples", example), "-B", os.path.join(work, "build"),
         "-DCMAKE_PREFIX_PATH=" + prefix])
    run(["cmake", "--build", os.path.join(work, "build")])
    return os.path.join(work, "build", example)


def main():
    args = arguments()
    work, prefix = install(args, "example_classify")
    exe = build_example(args, work, prefix, "classify")

    bad = 0
    for name in ("ppocr_cls_int16", "ppocr_cls_nv12"):
        case = os.path.join(args.work, name)
        n = 20
        pngs = [os.path.join(case, "test_render", "%05d.png" % i) for i in range(n)]
        out = run([exe, os.path.join(case, "model_output", name + ".bin")] + pngs + ["--top", "2"],
                  env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib")))
        got = {}
        for line in out.splitlines():
            img, rank, cls, score = line.split()[:4]
            got.setdefault(img, [0.0, 0.0])[int(cls)] = float(score)
        wrong = 0
        for i, png in enumerate(pngs):
            want = np.fromfile(os.path.join(case, "bin", "%d_softmax_0.tmp_0.bin" % i), dtype=np.float32)
            if png not in got or np.abs(np.array(got[png]) - want).max() > 2e-6:
                wrong += 1
                print("%s line %d: classify %s, openbpu_run_bin %s" % (name, i, got.get(png), want))
        print("%s: classify matches openbpu_run_bin on %d/%d lines" % (name, n - wrong, n))
        bad += wrong
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
