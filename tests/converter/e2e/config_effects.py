#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The yaml keys that change what makertbin does do it, and the ones accepted
for compatibility say in the log that they have no effect (docs/config.md).

A small generated model (conv -> relu -> Softmax on the CPU -> conv, plus a
CPU InstanceNormalization) with featuremap input is converted with one key
changed at a time against a base configuration:
  - debug_mode: dump_calibration_data writes calibration_data/<input>/<k>.npy
    that numpy.load reads back as the calibration files' values;
  - jobs: the same quantized model as one thread (calibration runs in
    parallel, merged in order);
  - optimize_level O0: no fusion (more instructions), O3 the base;
  - node_info InputType: int16 makes the node's input int16;
  - advice: per-op timing lines in the log;
  - cross_layer_equalization True: the equalization stage runs (no pair);
  - asymmetric: a warning that no value qualified (none between BPU operators);
  - compile_mode bandwidth, per_channel, set_Softmax_input_int8: a warning each.

usage: config_effects.py --work DIR --bin BUILD_BIN_DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

N_CAL = 6


def make_model(path):
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k):
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")])
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], name=name, pads=[k // 2] * 4))
        return name

    y = conv("conv1", "input", 3, 8, 3)
    nodes.append(helper.make_node("Relu", [y], ["relu1"], name="relu1"))
    inits.extend([numpy_helper.from_array(np.linspace(0.5, 1.5, 8).astype(np.float32), "in_scale"),
                  numpy_helper.from_array(np.linspace(-0.2, 0.2, 8).astype(np.float32), "in_bias")])
    nodes.append(helper.make_node("InstanceNormalization", ["relu1", "in_scale", "in_bias"], ["inorm"], name="inorm"))
    y = conv("conv2", "inorm", 8, 8, 3)
    nodes.append(helper.make_node("Relu", [y], ["relu2"], name="relu2"))
    nodes.append(helper.make_node("Softmax", ["relu2"], ["prob"], name="softmax", axis=1))
    graph = helper.make_graph(nodes, "effects", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 8, 64, 64])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


BASE = {
    "model_parameters": {"onnx_model": "'model.onnx'", "march": "'bayes-e'", "output_model_file_prefix": "'m'",
                         "working_dir": "'out'"},
    "input_parameters": {"input_name": "'input'", "input_type_train": "'featuremap'", "input_layout_train": "'NCHW'",
                         "input_type_rt": "'featuremap'", "input_layout_rt": "'NCHW'", "input_shape": "'1x3x64x64'",
                         "norm_type": "'no_preprocess'"},
    "calibration_parameters": {"cal_data_dir": "'cal'", "cal_data_type": "'float32'", "calibration_type": "'default'"},
    "compiler_parameters": {"optimize_level": "'O3'"},
}


def convert(args, name, changes):
    """Converts with the base config plus changes {group: {key: value}}; returns (dir, log)."""
    d = os.path.join(args.work, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    os.symlink(os.path.join(args.work, "model.onnx"), os.path.join(d, "model.onnx"))
    os.symlink(os.path.join(args.work, "cal"), os.path.join(d, "cal"))
    cfg = {g: dict(kv) for g, kv in BASE.items()}
    for g, kv in changes.items():
        cfg.setdefault(g, {}).update(kv)
    with open(os.path.join(d, "config.yaml"), "w") as f:
        for g, kv in cfg.items():
            f.write(g + ":\n" + "".join("  %s: %s\n" % (k, v) for k, v in kv.items()))
    r = subprocess.run([os.path.join(args.bin, "hb_mapper"), "makertbin", "--config", "config.yaml",
                        "--model-type", "onnx"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit("%s: makertbin failed" % name)
    return d, open(os.path.join(d, "hb_mapper_makertbin.log")).read()


def quantized(d):
    import onnx
    return onnx.load(os.path.join(d, "out", "m_quantized_model.onnx"))


def code_bytes(d):
    n = 0
    for node in quantized(d).graph.node:
        if node.op_type == "BpuSubgraph":
            n += sum(len(a.s) for a in node.attribute if a.name == "code")
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    args.work, args.bin = os.path.abspath(args.work), os.path.abspath(args.bin)
    if os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(os.path.join(args.work, "cal"))
    make_model(os.path.join(args.work, "model.onnx"))
    rng = np.random.default_rng(5)
    cal = [rng.standard_normal((1, 3, 64, 64)).astype(np.float32) for _ in range(N_CAL)]
    for i, x in enumerate(cal):
        x.tofile(os.path.join(args.work, "cal", "%03d.bin" % i))

    failures = []

    def expect(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    base, base_log = convert(args, "base", {})
    expect("advice:" not in base_log and "no effect" not in base_log, "base: no advice lines, no 'no effect' warning")

    d, log = convert(args, "dump", {"model_parameters": {"debug_mode": "'dump_calibration_data'"}})
    files = sorted(os.listdir(os.path.join(d, "out", "calibration_data", "input")))
    expect(files == ["%d.npy" % k for k in range(N_CAL)], "dump_calibration_data: one .npy per sample (%s)" % files)
    got = [np.load(os.path.join(d, "out", "calibration_data", "input", "%d.npy" % k)) for k in range(N_CAL)]
    expect(all(g.dtype == np.float32 and g.shape == (1, 3, 64, 64) and np.array_equal(g, c) for g, c in zip(got, cal)),
           "dump_calibration_data: numpy.load gives the calibration data")

    d, log = convert(args, "jobs", {"compiler_parameters": {"jobs": "3"}})
    same = open(os.path.join(d, "out", "m_quantized_model.onnx"), "rb").read() == \
        open(os.path.join(base, "out", "m_quantized_model.onnx"), "rb").read()
    expect(same, "jobs 3: the same quantized model as one thread")

    d, log = convert(args, "o0", {"compiler_parameters": {"optimize_level": "'O0'"}})
    expect(code_bytes(d) > code_bytes(base), "optimize_level O0: more BPU code than O3 (no fusion): %d > %d"
           % (code_bytes(d), code_bytes(base)))

    d, log = convert(args, "input_type", {"model_parameters": {"node_info": "{conv2: {InputType: int16}}"}})
    m = quantized(d)
    types = {v.name: v.type.tensor_type.elem_type for v in list(m.graph.value_info) + list(m.graph.output)}
    q = [n.output[0] for n in m.graph.node if n.op_type == "Quantize" and n.input[0] == "inorm"]
    expect(len(q) == 1 and types.get(q[0]) == 5, "node_info InputType int16: conv2 reads an int16 input (%s)"
           % [(x, types.get(x)) for x in q])

    # int16_weights: the convolutions reading int16 compute with two int8
    # weight planes (set_model_output_int8: the tail conv is not int32).
    d16, _ = convert(args, "all_int16", {"calibration_parameters": {
        "optimization": "'set_all_nodes_int16;set_model_output_int8'"}})
    d, log = convert(args, "int16_weights", {"calibration_parameters": {
        "optimization": "'set_all_nodes_int16;set_model_output_int8;int16_weights'"}})
    expect(code_bytes(d) > code_bytes(d16) and "convolutions reading int16 compute with 16-bit weights" in log,
           "int16_weights: two weight planes, more BPU code than all-int16 alone: %d > %d"
           % (code_bytes(d), code_bytes(d16)))
    d, log = convert(args, "int16_weights_int8", {"calibration_parameters": {"optimization": "'int16_weights'"}})
    expect("int16_weights: no convolution reads an int16 value" in log and code_bytes(d) == code_bytes(base),
           "int16_weights without int16 activations: a warning, the same BPU code")

    # Its only Relu -> convolution path goes through the CPU's
    # InstanceNormalization: no pair to equalize, and the log says so.
    d, log = convert(args, "cle", {"calibration_parameters": {"cross_layer_equalization": "True"}})
    expect("Cross-layer equalization: 0 convolution pairs, nothing to equalize." in log,
           "cross_layer_equalization True: the equalization runs and finds no pair")
    expect("Cross-layer equalization" not in base_log, "base: no cross-layer equalization")

    # asymmetric: this model's int8 values all cross the CPU's nodes (subgraph
    # boundaries stay symmetric): a warning that none qualified; the base
    # (default) does not choose it either.
    d, log = convert(args, "asymmetric", {"calibration_parameters": {"optimization": "'asymmetric'"}})
    expect("optimization asymmetric: no int8 value qualifies for a zero point" in log and
           code_bytes(d) == code_bytes(base), "asymmetric without a value between BPU operators: a warning, "
           "the same BPU code")
    expect("Activations: symmetric" in base_log, "base: default keeps symmetric activations here")

    d, log = convert(args, "advice", {"compiler_parameters": {"advice": "1"}})
    expect("advice: conv1" in log or "advice: conv2" in log, "advice 1: per-op timing lines")

    ops_dir = os.path.join(args.work, "custom_ops")
    os.makedirs(ops_dir, exist_ok=True)
    open(os.path.join(ops_dir, "sample_custom.py"), "w").close()
    for name, changes, text in [
            ("bandwidth", {"compiler_parameters": {"compile_mode": "'bandwidth'"}},
             "compile_mode bandwidth: accepted for compatibility, no effect"),
            ("per_channel", {"calibration_parameters": {"calibration_type": "'max'", "per_channel": "True"}},
             "per_channel: accepted for compatibility, no effect"),
            ("softmax", {"calibration_parameters": {"optimization": "'set_Softmax_input_int8'"}},
             "no Softmax node runs on the BPU (a Softmax at the model's head or tail runs on the CPU in float)"),
            ("custom_op", {"custom_op": {"custom_op_method": "'register'", "custom_op_dir": "'%s'" % ops_dir,
                                         "op_register_files": "'sample_custom.py'"}},
             "custom_op: accepted for compatibility, no effect")]:
        d, log = convert(args, name, changes)
        expect(text in log, "%s: the log says '%s'" % (name, text))

    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
