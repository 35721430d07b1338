#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""hb_mapper on bad input: each case must fail with a non-zero exit code, an
ERROR line naming the problem, and no model file left in working_dir.

usage: errors.py --work DIR --bin BUILD_BIN_DIR
Run with Debian's /usr/bin/python3 (onnx, numpy).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GOOD_YAML = """model_parameters:
  onnx_model: '{model}'
  march: 'bernoulli2'
  output_model_file_prefix: 'm'
  working_dir: './out'
input_parameters:
  input_name: 'input'
  input_type_train: 'rgb'
  input_layout_train: 'NCHW'
  input_type_rt: 'nv12'
  input_shape: '1x3x32x32'
  norm_type: 'data_scale'
  scale_value: 0.0039215686
calibration_parameters:
{cal}
compiler_parameters:
  optimize_level: 'O3'
"""


def save(nodes, path, inits=(), opsets=(("", 11),)):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 7
    onnx.save(m, path)


def conv_model(path):
    w = numpy_helper.from_array(np.full((4, 3, 3, 3), 0.1, np.float32), "w")
    save([helper.make_node("Conv", ["input", "w"], ["y"], pads=[1] * 4)], path, [w])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    work = os.path.abspath(os.path.join(args.work, "errors"))
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    hb = os.path.join(os.path.abspath(args.bin), "hb_mapper")
    skip = "  calibration_type: 'skip'"

    conv_model(os.path.join(work, "conv.onnx"))
    with open(os.path.join(work, "conv.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(work, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    save([helper.make_node("FooBar", ["input"], ["y"], domain="acme")], os.path.join(work, "custom.onnx"),
         opsets=(("", 11), ("acme", 1)))
    save([helper.make_node("Loop", ["", "", "input"], ["y"], body=helper.make_graph([], "b", [], []))],
         os.path.join(work, "loop.onnx"))
    os.makedirs(os.path.join(work, "cal_short"))
    with open(os.path.join(work, "cal_short", "a.bin"), "wb") as f:
        f.write(bytes(100))

    cases = [
        ("missing model file", GOOD_YAML.format(model="absent.onnx", cal=skip), r"absent\.onnx"),
        ("truncated model", GOOD_YAML.format(model="truncated.onnx", cal=skip), r"not a valid ONNX model"),
        ("unknown custom operator", GOOD_YAML.format(model="custom.onnx", cal=skip), r"acme::FooBar"),
        ("unsupported graph attribute", GOOD_YAML.format(model="loop.onnx", cal=skip), r"Loop"),
        ("yaml syntax error", "model_parameters:\n  onnx_model: [unclosed\n", r"yaml"),
        ("missing required key", GOOD_YAML.format(model="conv.onnx", cal=skip).replace("  input_layout_train: 'NCHW'\n", ""),
         r"input_layout_train"),
        ("bad enum value", GOOD_YAML.format(model="conv.onnx", cal=skip).replace("'bernoulli2'", "'pentium'"),
         r"march"),
        ("input shape mismatch", GOOD_YAML.format(model="conv.onnx", cal=skip).replace("1x3x32x32", "1x3x32"),
         r"input_shape"),
        ("calibration file of the wrong size",
         GOOD_YAML.format(model="conv.onnx", cal="  cal_data_dir: './cal_short'\n  calibration_type: 'max'"),
         r"a\.bin.*100 bytes"),
        ("accuracy budget out of range", GOOD_YAML.format(model="conv.onnx", cal=skip + "\n  min_output_cosine: 1.5"),
         r"min_output_cosine: 1\.5"),
        # The accuracy gate: bernoulli2 has no int16 to promote values to, so
        # a budget int8 cannot meet fails the conversion (docs/converter.md).
        ("accuracy budget not met", GOOD_YAML.format(model="conv.onnx", cal=skip + "\n  min_output_cosine: 1"),
         r"accuracy budget not met: mean output cosine 0\.\d+ .*march bernoulli2 has no int16"),
    ]
    failures = 0
    for name, yaml, pattern in cases:
        out = os.path.join(work, "out")
        if os.path.isdir(out):
            shutil.rmtree(out)
        with open(os.path.join(work, "c.yaml"), "w") as f:
            f.write(yaml)
        r = subprocess.run([hb, "makertbin", "--config", "c.yaml", "--model-type", "onnx"], cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        errors = [l for l in r.stdout.splitlines() if " ERROR " in l]
        left = sorted(os.listdir(out)) if os.path.isdir(out) else []
        ok = r.returncode != 0 and any(re.search(pattern, l) for l in errors) and not left
        print("%-36s exit %d  %s" % (name, r.returncode, errors[0].split(" ERROR ", 1)[1] if errors else "(no ERROR)"))
        if not ok:
            failures += 1
            print("  FAIL: want a non-zero exit, an ERROR matching /%s/ and an empty working_dir (left: %s)\n%s"
                  % (pattern, left, r.stdout))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
