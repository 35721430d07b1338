#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-layer local error of a .bin (hand measurements, docs/converter.md
"int16 and the weights"): every BPU layer recomputed in float by ONNX
Runtime from the .bin's own dumped inputs, compared with the .bin's dumped
output. Unlike a per-layer comparison with the float model (vec_diff), whose
differences accumulate along the network, this separates what each layer
adds: its weights' rounding, its output's quantization, its table.

    hrt_model_exec infer --model_file=M.bin --input_file=IN --dump_intermediate=3 --dump_path=D
    local_error.py M_optimized_float_model.onnx D/intermediate MODEL_INPUT OUT_DIR

MODEL_INPUT is the optimized float model's input for the same image (raw;
int8 pixels minus 128 or float32, as the model declares). Prints one line
per layer in execution order: tensor, the ONNX nodes of the layer, cosine,
relative L2 error and max absolute error of the .bin against float.
Run with Debian's /usr/bin/python3 (numpy, onnx) and node (ORT).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "..", "common", "ort_run.js")


def layer_files(dump):
    """tensor -> (dump file stem, ONNX nodes) from layer_mapping.txt."""
    files = {}
    for line in open(os.path.join(dump, "layer_mapping.txt")):
        p = line.rstrip("\n").split("\t")
        if len(p) >= 10 and p[0] != "file":
            files[p[9]] = (p[0][:-4] if p[0].endswith(".bin") else p[0], p[8])
    return files


def local_model(model, files):
    """The model with every dumped value a node reads replaced by an input
    `<value>__bin`, and every dumped value a node computes an output."""
    shape = {}
    inferred = shape_inference.infer_shapes(model).graph
    for v in list(inferred.value_info) + list(inferred.output) + list(inferred.input):
        shape[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    g = model.graph
    inits = {i.name for i in g.initializer}
    fed = {}
    for n in g.node:
        for k, x in enumerate(n.input):
            if x in files and x not in inits:
                n.input[k] = fed.setdefault(x, x + "__bin")
    computed = [t for t in files if any(t in n.output for n in g.node)]
    del g.output[:]
    for t in computed:
        g.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    for x, name in fed.items():
        g.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape.get(x)))
    return model, fed, computed, shape


def main():
    model_path, dump, model_input, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    files = layer_files(dump)
    model, fed, computed, shape = local_model(onnx.load(model_path), files)
    path = os.path.join(out, "local.onnx")
    onnx.save(model, path)
    gin = model.graph.input[0]
    dtype = {1: "float32", 3: "int8"}[gin.type.tensor_type.elem_type]
    specs = ["%s=%s:%s:%s" % (gin.name, model_input, dtype,
                              "x".join(str(d.dim_value) for d in gin.type.tensor_type.shape.dim))]
    for x, name in fed.items():
        specs.append("%s=%s:float32:%s" % (name, os.path.join(dump, files[x][0] + ".bin"), "x".join(map(str, shape[x]))))
    subprocess.run(["node", ORT_RUN, path, os.path.join(out, "ort")] + specs, check=True, stdout=subprocess.DEVNULL)
    by_file = {stem: t for t, (stem, _) in files.items()}
    for line in open(os.path.join(dump, "execution_order.txt")):
        stem = line.strip()[:-4] if line.strip().endswith(".bin") else line.strip()
        t = by_file.get(stem)
        if t not in computed:
            continue
        a = np.fromfile(os.path.join(out, "ort", t.replace("/", "_") + ".bin"), dtype=np.float32).astype(np.float64)
        b = np.fromfile(os.path.join(dump, stem + ".bin"), dtype=np.float32).astype(np.float64)
        if a.size != b.size:
            print("%s: %d values in float, %d in the dump" % (t, a.size, b.size))
            continue
        den = np.linalg.norm(a) * np.linalg.norm(b)
        cos = 1.0 if den == 0 else a @ b / den
        rel = np.linalg.norm(a - b) / max(1e-30, np.linalg.norm(a))
        print("%-32s %-40s cos %.8f rel %.3e maxabs %.3e" % (t, files[t][1][:40], cos, rel, np.abs(a - b).max()))


if __name__ == "__main__":
    main()
