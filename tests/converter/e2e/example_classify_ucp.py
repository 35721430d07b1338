#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""examples/classify_ucp (a UCP-generation application: .hbm, hbDNNInferV2 +
hbUCPSubmitTask, NV12 as Y and UV inputs) built against the installed
package like a user's project, on the PP-OCR text-direction classifier
compiled by hb_compile for nash-e with NV12 input from the e2e case
ppocr_cls_nv12's yaml (march changed). Its scores on the rendered text
lines must match ONNX Runtime float on the same lines within the e2e case's
bounds (e2e.CASES["ppocr_cls_nv12"].min_cos / min_agree).

usage: example_classify_ucp.py --build BUILD_DIR --src SOURCE_DIR --work E2E_WORK_DIR
"""
import os
import re
import sys

import numpy as np

from e2e import CASES
from example_classify import arguments, build_example, install, run

N_LINES = 100


def main():
    args = arguments()
    case = os.path.join(args.work, "ppocr_cls_nv12")
    work, prefix = install(args, "example_classify_ucp")

    # The case's yaml for hb_compile: nash-e, our working_dir and prefix.
    with open(os.path.join(case, "config.yaml")) as f:
        yaml = f.read()
    yaml = re.sub(r"march: '[^']*'", "march: 'nash-e'", yaml)
    yaml = re.sub(r"output_model_file_prefix: '[^']*'", "output_model_file_prefix: 'ppocr_cls_ucp'", yaml)
    yaml = re.sub(r"working_dir: '[^']*'", "working_dir: '%s'" % os.path.join(work, "model_output"), yaml)
    with open(os.path.join(work, "config.yaml"), "w") as f:
        f.write(yaml)
    run([os.path.join(prefix, "bin", "hb_compile"), "--config", "config.yaml"], cwd=work)
    hbm = os.path.join(work, "model_output", "ppocr_cls_ucp.hbm")

    exe = build_example(args, work, prefix, "classify_ucp")
    pngs = [os.path.join(case, "test_render", "%05d.png" % i) for i in range(N_LINES)]
    out = run([exe, hbm] + pngs + ["--top", "2"])
    got = {}
    for line in out.splitlines():
        img, _, cls, score = line.split()[:4]
        got.setdefault(img, [0.0, 0.0])[int(cls)] = float(score)
    cos, agree = [], 0
    for i, png in enumerate(pngs):
        ref = np.fromfile(os.path.join(case, "ort", "%d_softmax_0.tmp_0.bin" % i), dtype=np.float32).astype(np.float64)
        if png not in got:
            print("no scores for %s" % png)
            return 1
        g = np.array(got[png], np.float64)
        cos.append(float(g @ ref / (np.linalg.norm(g) * np.linalg.norm(ref))))
        agree += int(np.argmax(g) == np.argmax(ref))
    mean_cos, rate = float(np.mean(cos)), agree / float(N_LINES)
    print("classify_ucp on %s vs ONNX Runtime float, %d lines: mean cosine %.5f (min %.5f), top-1 agreement %.3f"
          % (os.path.basename(hbm), N_LINES, mean_cos, min(cos), rate))
    bounds = CASES["ppocr_cls_nv12"]
    return 0 if mean_cos >= bounds.min_cos and rate >= bounds.min_agree else 1


if __name__ == "__main__":
    sys.exit(main())
