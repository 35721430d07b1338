#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A C99 application of the UCP generation against the installed package:
tests/install/consumer/ucp_featuremap.c compiled as C (-std=c99 -pedantic
-Wall -Wextra -Werror, pkg-config openbpu-ucp) runs the .hbm that the
installed hb_compile makes of torchvision resnet18 (the e2e case
resnet18_featuremap's yaml and calibration data, march nash-e, featuremap
input). Its outputs on the case's test inputs must match ONNX Runtime float
on the same inputs within the e2e case's bound (mean cosine >= 0.99; the
top-1 agreement is printed: the e2e case sets no bound for it).

usage: ucp_c99.py --build BUILD_DIR --src SOURCE_DIR --work E2E_WORK_DIR
"""
import os
import re
import sys

import numpy as np

# The install steps of the example tests (one home).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converter", "e2e"))
from example_classify import arguments, install, run  # noqa: E402

N_INPUTS = 4


def main():
    args = arguments()
    case = os.path.join(args.work, "resnet18_featuremap")
    work, prefix = install(args, "install_ucp_c99")

    with open(os.path.join(case, "config.yaml")) as f:
        yaml = re.sub(r"march: '[^']*'", "march: 'nash-e'", f.read())
    yaml = re.sub(r"working_dir: '[^']*'", "working_dir: '%s'" % os.path.join(work, "model_output"), yaml)
    with open(os.path.join(work, "config.yaml"), "w") as f:
        f.write(yaml)
    run([os.path.join(prefix, "bin", "hb_compile"), "--config", "config.yaml"], cwd=work)
    hbm = os.path.join(work, "model_output", "resnet18_featuremap.hbm")

    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "openbpu-ucp"], env=env).split()
    exe = os.path.join(work, "ucp_featuremap")
    run([os.environ.get("CC", "cc"), "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Wstrict-prototypes", "-Werror",
         "-o", exe, os.path.join(args.src, "tests", "install", "consumer", "ucp_featuremap.c")] + flags)

    inputs = [l.split()[0] for l in open(os.path.join(case, "float.txt"))][:N_INPUTS]
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir)
    print(run([exe, hbm, out_dir] + inputs, env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib", "hobot")))
          .strip())
    cos, agree = [], 0
    for i in range(N_INPUTS):
        got = np.fromfile(os.path.join(out_dir, "%d_logits.f32" % i), np.float32).astype(np.float64)
        ref = np.fromfile(os.path.join(case, "ort", "%d_logits.bin" % i), np.float32).astype(np.float64)
        if got.size != ref.size:
            print("input %d: %d output values, ONNX Runtime %d" % (i, got.size, ref.size))
            return 1
        cos.append(float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref))))
        agree += int(np.argmax(got) == np.argmax(ref))
    print("C99 ucp_featuremap on hb_compile's resnet18 (nash-e) vs ONNX Runtime float, %d inputs: mean cosine %.5f "
          "(min %.5f), top-1 agreement %d/%d" % (N_INPUTS, np.mean(cos), min(cos), agree, N_INPUTS))
    return 0 if np.mean(cos) >= 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
