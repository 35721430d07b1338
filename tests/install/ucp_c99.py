#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A C99 and a C++ application of the UCP generation against the installed
package: tests/install/consumer/ucp_classify.c, written against the
specification's headers, compiled unchanged as C (-std=c99) and as C++
(-x c++ -std=c++17), both -pedantic -Wall -Wextra -Werror with pkg-config
openbpu-ucp. Each runs the .hbm files the installed hb_compile makes (march
nash-e) of the e2e cases' yamls and calibration data:

* resnet18_featuremap: torchvision resnet18, featuremap input;
* resnet18_nv12: torchvision resnet18, NV12 input (Y and UV planes);
* ppocr_cls_nv12: the PP-OCR text-direction classifier, NV12 input.

Outputs on the case's test inputs (its rt.txt: float32 values or NV12
frames) must match ONNX Runtime float on the same inputs (the case's ort/)
within the e2e case's bounds (mean cosine >= min_cos; top-1 agreement >=
min_agree where the case sets one). The two builds' outputs must be equal.

usage: ucp_c99.py --build BUILD_DIR --src SOURCE_DIR --work E2E_WORK_DIR
"""
import glob
import os
import re
import sys

import numpy as np

# The install steps of the example tests and the e2e cases' bounds (one home).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converter", "e2e"))
from example_classify import arguments, install, run  # noqa: E402
import e2e  # noqa: E402

# (the classifier: all 200 lines of its e2e case, the sample its agreement bound is set for)
N_INPUTS = {"resnet18_featuremap": 4, "resnet18_nv12": 4, "ppocr_cls_nv12": 200}


def compile_hbm(args, work, prefix, case):
    with open(os.path.join(args.work, case, "config.yaml")) as f:
        yaml = re.sub(r"march: '[^']*'", "march: 'nash-e'", f.read())
    out = os.path.join(work, case)
    yaml = re.sub(r"working_dir: '[^']*'", "working_dir: '%s'" % out, yaml)
    yaml = re.sub(r"output_model_file_prefix: '[^']*'", "output_model_file_prefix: '%s'" % case, yaml)
    cfg = os.path.join(work, case + ".yaml")
    with open(cfg, "w") as f:
        f.write(yaml)
    run([os.path.join(prefix, "bin", "hb_compile"), "--config", cfg], cwd=work)
    return os.path.join(out, case + ".hbm")


def check_case(args, work, exes, hbm, case, env):
    c = e2e.CASES[case]
    inputs = [l.split()[0] for l in open(os.path.join(args.work, case, "rt.txt"))][:N_INPUTS[case]]
    outs = {}
    for lang, exe in exes.items():
        d = os.path.join(work, "out_%s_%s" % (case, lang))
        os.makedirs(d)
        print(run([exe, hbm, d] + inputs, env=env).strip())
        outs[lang] = [np.fromfile(sorted(glob.glob(os.path.join(d, "%d_*.f32" % i)))[0], np.float32)
                      for i in range(len(inputs))]
    ok = all(np.array_equal(a, b) for a, b in zip(outs["c99"], outs["c++"]))
    cos, agree = [], 0
    for i, got in enumerate(outs["c99"]):
        ref = np.fromfile(sorted(glob.glob(os.path.join(args.work, case, "ort", "%d_*.bin" % i)))[0], np.float32)
        if got.size != ref.size:
            print("%s input %d: %d output values, ONNX Runtime %d" % (case, i, got.size, ref.size))
            return False
        cos.append(e2e.cosine(got.astype(np.float64), ref.astype(np.float64)))
        agree += int(np.argmax(got) == np.argmax(ref))
    rate = agree / float(len(inputs))
    print("%s (nash-e, %s input) in C99 and C++ (%s) vs ONNX Runtime float, %d inputs: mean cosine %.5f "
          "(min %.5f, bound %.3f), top-1 agreement %.3f (bound %s)"
          % (case, "featuremap" if c.rt == "featuremap" else "NV12", "equal" if ok else "DIFFERENT", len(inputs),
             np.mean(cos), min(cos), c.min_cos, rate, c.min_agree))
    return ok and np.mean(cos) >= c.min_cos and (c.min_agree is None or rate >= c.min_agree)


def main():
    args = arguments()
    work, prefix = install(args, "install_ucp_c99")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "openbpu-ucp"], env=env).split()
    src = os.path.join(args.src, "tests", "install", "consumer", "ucp_classify.c")
    strict = ["-pedantic", "-Wall", "-Wextra", "-Werror"]
    exes = {"c99": os.path.join(work, "ucp_classify_c"), "c++": os.path.join(work, "ucp_classify_cxx")}
    run([os.environ.get("CC", "cc"), "-std=c99", "-Wstrict-prototypes"] + strict + ["-o", exes["c99"], src] + flags)
    run([os.environ.get("CXX", "c++"), "-x", "c++", "-std=c++17"] + strict + ["-o", exes["c++"], src, "-x", "none"] +
        flags)
    run_env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib", "hobot"))
    ok = True
    for case in N_INPUTS:
        ok = check_case(args, work, exes, compile_hbm(args, work, prefix, case), case, run_env) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
