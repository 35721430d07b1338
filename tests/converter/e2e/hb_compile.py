#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""hb_compile, the front end of the converter pipeline for .hbm models:
--config and --fast-perf on a small featuremap CNN (nash-e, .npy calibration
data). The .hbm runs through the UCP runtime (hrt_model_exec_ucp) and is
compared with the float model (torch, within int8 bounds) and with the .bin
hb_mapper makes from the same yaml run through libdnn 1.x (same pipeline:
identical outputs). Bad input: a 1.x march, hb_mapper-only use of the
options, a quant_config type without a counterpart (float16) -- an error
naming the problem and no model file. Seed 004's configuration template
with only paths changed compiles and runs (yuv444 input, kl calibration);
quant_config's levels choose the convolutions' input types (node over op
type over model).

usage: hb_compile.py --work DIR --bin BUILD_BIN_DIR
Run with Debian's /usr/bin/python3 (onnx, numpy, torch).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

FAILS = []

YAML = """model_parameters:
  onnx_model: '{model}'
  march: '{march}'
  output_model_file_prefix: 'm'
  working_dir: './out'
input_parameters:
  input_name: 'input'
  input_type_train: 'featuremap'
  input_layout_train: 'NCHW'
  input_type_rt: 'featuremap'
  input_layout_rt: 'NCHW'
  input_shape: '1x3x16x16'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: './cal'
  calibration_type: 'max'
{extra}compiler_parameters:
  optimize_level: 'O2'
"""


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what, file=sys.stderr)


def make_model(path, rng):
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    w2 = rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3
    nodes = [helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])],
                          [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.save(m, path)
    x = torch.from_numpy
    return lambda inp: torch.nn.functional.conv2d(
        torch.relu(torch.nn.functional.conv2d(x(inp), x(w1), x(b1), padding=1)), x(w2)).numpy()


def run(cmd, cwd, ok=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    check((p.returncode == 0) == ok, "exit %d (%s expected): %s\n%s%s" % (
        p.returncode, "success" if ok else "an error", " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout + p.stderr


def infer(tool, model, inp, cwd, dump):
    os.makedirs(os.path.join(cwd, dump), exist_ok=True)
    run([tool, "infer", "--model_file=" + model, "--input_file=" + inp, "--enable_dump", "--dump_path=" + dump], cwd)
    path = os.path.join(cwd, dump, "model_infer_output_0_y.bin")
    return np.fromfile(path, np.float32) if os.path.exists(path) else None


def accuracy(got, ref, what):
    if got is None or got.size != ref.size:
        check(False, what + ": no output of %d values" % ref.size)
        return
    ref = ref.reshape(-1)
    cos = float(np.dot(got, ref) / (np.linalg.norm(got) * np.linalg.norm(ref)))
    err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    print("%s: cosine %.5f, max error %.4f of the output range" % (what, cos, err))
    check(cos > 0.999 and err < 0.05, what + ": cosine %.5f, max error %.4f" % (cos, err))


def seed_template(bin_dir, work, hb_compile, template):
    """Seed 004's configuration template with only paths changed
    (tests/converter/configs/j6_doc_template.yaml): a bgr-trained model whose
    input 'data' is yuv444 at run time, node 'OP_name' the output node (and
    removed: a tail Reshape), kl calibration. The .hbm runs on
    hrt_model_exec_ucp and follows the float model."""
    d = os.path.join(work, "seed004")
    os.makedirs(os.path.join(d, "calibration_data"))
    rng = np.random.default_rng(4)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((10, 8, 1, 1)).astype(np.float32) * 0.3
    nodes = [helper.make_node("Conv", ["data", "w1"], ["c1"], name="conv1", pads=[1] * 4, strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2"),
             helper.make_node("GlobalAveragePool", ["c2"], ["pooled"], name="gap"),
             helper.make_node("Reshape", ["pooled", "shape"], ["prob"], name="OP_name")]
    g = helper.make_graph(nodes, "seed004", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
                           numpy_helper.from_array(np.array([1, 10], np.int64), "shape")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k in range(3):
        rng.integers(0, 256, (1, 3, 224, 224), dtype=np.uint8).tofile(os.path.join(d, "calibration_data", "%d.bin" % k))
    with open(template) as f:
        yaml = f.read()
    with open(os.path.join(d, "c.yaml"), "w") as f:
        f.write(yaml.replace("onnx_model: 'model.onnx'", "onnx_model: '%s'" % os.path.join(d, "model.onnx")))
    log = run([hb_compile, "--config", "c.yaml"], d)
    hbm = os.path.join(d, "model_output_dir", "mobilenetv1.hbm")
    check(os.path.exists(hbm), "seed 004 template: no model_output_dir/mobilenetv1.hbm")
    check("Node 'OP_name' is removed" in log, "seed 004 template: remove_node_name OP_name not applied")
    # A BGR image, its yuv444 (BT.601 full range, the 'regular' range) as the
    # run-time input (NHWC), the float model on the BGR image.
    bgr = rng.integers(0, 256, (224, 224, 3)).astype(np.float64)
    b, gr, r = bgr[..., 0], bgr[..., 1], bgr[..., 2]
    y = 0.299 * r + 0.587 * gr + 0.114 * b
    yuv = np.stack([y, 0.564 * (b - y) + 128, 0.713 * (r - y) + 128], -1)
    np.clip(np.round(yuv), 0, 255).astype(np.uint8)[None].tofile(os.path.join(d, "input.bin"))
    mean = np.array([103.94, 116.78, 123.68]).reshape(1, 3, 1, 1)
    x = ((bgr.transpose(2, 0, 1)[None] - mean) * 0.017).astype(np.float32)
    t = torch.from_numpy
    c1 = torch.relu(torch.nn.functional.conv2d(t(x), t(w1), padding=1, stride=2))
    ref = torch.nn.functional.conv2d(c1, t(w2)).mean(dim=(2, 3)).numpy()
    os.makedirs(os.path.join(d, "dump"))
    run([os.path.join(bin_dir, "hrt_model_exec_ucp"), "infer", "--model_file=" + hbm, "--input_file=input.bin",
         "--enable_dump", "--dump_path=dump"], d)
    dumps = [f for f in os.listdir(os.path.join(d, "dump")) if f.startswith("model_infer_output_0_")]
    got = np.fromfile(os.path.join(d, "dump", dumps[0]), np.float32) if dumps else None
    accuracy(got, ref, "seed 004 template (yuv444 input, kl), nash-e, UCP runtime")


def quant_config_effects(work, hb_compile):
    """quant_config levels on a conv -> InstanceNormalization (CPU) -> conv
    model: the type of each BPU subgraph's input Quantize shows the type
    chosen for the conv reading it (node over op type over model)."""
    d = os.path.join(work, "quant_config")
    os.makedirs(os.path.join(d, "cal"))
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, "w1"),
             numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2, "w2"),
             numpy_helper.from_array(np.linspace(0.5, 1.5, 8).astype(np.float32), "s"),
             numpy_helper.from_array(np.zeros(8, np.float32), "b")]
    nodes = [helper.make_node("Conv", ["input", "w1"], ["c1"], name="conv1", pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("InstanceNormalization", ["r1", "s", "b"], ["inorm"], name="inorm"),
             helper.make_node("Conv", ["inorm", "w2"], ["y"], name="conv2", pads=[1] * 4)]
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    model = os.path.join(d, "m.onnx")
    onnx.save(m, model)
    for k in range(4):
        np.save(os.path.join(d, "cal", "%d.npy" % k), rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
    int8, int16 = TensorProto.INT8, TensorProto.INT16
    cases = [("node", {"node_config": {"conv2": {"type": "int16"}}}, (int8, int16)),
             ("op_then_node", {"op_config": {"Conv": {"type": "int16"}}, "node_config": {"conv2": {"type": "int8"}}},
              (int16, int8)),
             ("model", {"model_config": {"all_node_type": "int16"}}, (int16, int16)),
             ("model_then_op", {"model_config": {"all_node_type": "int16"}, "op_config": {"Conv": {"type": "int8"}}},
              (int8, int8))]
    for name, qc, want in cases:
        c = os.path.join(d, name)
        os.makedirs(c)
        with open(os.path.join(c, "q.json"), "w") as f:
            json.dump(qc, f)
        with open(os.path.join(c, "c.yaml"), "w") as f:
            f.write(YAML.format(model=model, march="nash-e", extra="  quant_config: 'q.json'\n")
                    .replace("'./cal'", "'%s'" % os.path.join(d, "cal")))
        run([hb_compile, "--config", "c.yaml"], c)
        q = onnx.load(os.path.join(c, "out", "m_quantized_model.onnx"))
        types = {v.name: v.type.tensor_type.elem_type for v in list(q.graph.value_info) + list(q.graph.output)}
        got = []
        for src in ("input", "inorm"):
            outs = [n.output[0] for n in q.graph.node if n.op_type == "Quantize" and n.input[0] == src]
            got.append(types.get(outs[0]) if outs else None)
        check(tuple(got) == want, "quant_config %s: the convs read %s, expected %s" % (name, got, want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    work = os.path.abspath(os.path.join(args.work, "hb_compile"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "cal"))
    hb_compile, hb_mapper = os.path.join(args.bin, "hb_compile"), os.path.join(args.bin, "hb_mapper")
    rng = np.random.default_rng(7)
    model = os.path.join(work, "m.onnx")
    reference = make_model(model, rng)
    for k in range(4):
        np.save(os.path.join(work, "cal", "%d.npy" % k), rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
    x = rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    x.tofile(os.path.join(work, "input.bin"))
    ref = reference(x)

    # --config: the .hbm, hb_compile.log, the intermediate models.
    with open(os.path.join(work, "c.yaml"), "w") as f:
        f.write(YAML.format(model=model, march="nash-e", extra=""))
    log = run([hb_compile, "--config", "c.yaml"], work)
    hbm = os.path.join(work, "out", "m.hbm")
    check(os.path.exists(hbm), "no out/m.hbm")
    check(not os.path.exists(os.path.join(work, "out", "m.bin")), "hb_compile wrote a .bin")
    for suffix in ("_original_float_model.onnx", "_optimized_float_model.onnx", "_calibrated_model.onnx",
                   "_quantized_model.onnx"):
        check(os.path.exists(os.path.join(work, "out", "m" + suffix)), "no out/m" + suffix)
    check(os.path.exists(os.path.join(work, "hb_compile.log")), "no hb_compile.log")
    check("Start hb_compile" in log, "the log does not name hb_compile")
    got = infer(os.path.join(args.bin, "hrt_model_exec_ucp"), hbm, "input.bin", work, "hbm")
    accuracy(got, ref, "hb_compile --config, nash-e, UCP runtime")

    # The same yaml through hb_mapper: a .bin whose outputs (libdnn 1.x) equal the .hbm's.
    os.makedirs(os.path.join(work, "mapper"))
    shutil.copytree(os.path.join(work, "cal"), os.path.join(work, "mapper", "cal"))
    shutil.copy(os.path.join(work, "c.yaml"), os.path.join(work, "mapper", "c.yaml"))
    run([hb_mapper, "makertbin", "--config", "c.yaml", "--model-type", "onnx"], os.path.join(work, "mapper"))
    got_bin = infer(os.path.join(args.bin, "hrt_model_exec"), os.path.join(work, "mapper", "out", "m.bin"),
                    "input.bin", work, "bin")
    check(got is not None and got_bin is not None and np.array_equal(got, got_bin),
          "the .hbm (UCP) and the .bin (libdnn 1.x) of one yaml give different outputs")

    # --fast-perf: built-in config, random calibration; runs.
    os.makedirs(os.path.join(work, "fast"))
    run([hb_compile, "--fast-perf", "--model", model, "--march", "nash-e", "-i", "input", "1x3x16x16"],
        os.path.join(work, "fast"))
    fast = os.path.join(work, "fast", "model_output", "m.hbm")
    check(os.path.exists(fast), "no fast/model_output/m.hbm")
    run([os.path.join(args.bin, "hrt_model_exec_ucp"), "model_info", "--model_file=" + fast], work)

    # Bad input: an error naming the problem, no model file.
    bad = os.path.join(work, "bad")
    os.makedirs(bad)
    shutil.copytree(os.path.join(work, "cal"), os.path.join(bad, "cal"))
    with open(os.path.join(bad, "q.json"), "w") as f:
        json.dump({"node_config": {"y": {"type": "float16"}}}, f)
    cases = [("bayes-e", "", "hb_mapper"),
             ("nash-e", "  quant_config: 'q.json'\n", "float16 computation is not supported")]
    for march, extra, needle in cases:
        with open(os.path.join(bad, "c.yaml"), "w") as f:
            f.write(YAML.format(model=model, march=march, extra=extra))
        out = run([hb_compile, "-c", "c.yaml"], bad, ok=False)
        check(needle in out, "error of case %s/%r does not name %s:\n%s" % (march, extra, needle, out[-1500:]))
        check(not os.path.exists(os.path.join(bad, "out", "m.hbm")), "a model was left after an error")
    out = run([hb_compile, "--model", model, "--march", "nash-e"], bad, ok=False)
    check("--fast-perf" in out, "--model without --fast-perf is not named")

    seed_template(args.bin, work, hb_compile,
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "j6_doc_template.yaml"))
    quant_config_effects(work, hb_compile)
    if FAILS:
        print("hb_compile: %d check(s) failed" % len(FAILS), file=sys.stderr)
        return 1
    print("hb_compile: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
