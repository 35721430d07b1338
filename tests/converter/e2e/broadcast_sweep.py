#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Element-wise broadcasting on the BPU against ONNX Runtime (issue 10).

For every march alignment (bernoulli2: 8 channels, bayes-e: 16, nash-e: 32)
and every activation rank 1..4 (one shape without and one with 1-dims), one
model holds one branch per broadcast pattern:
  - activation (op) constant or constant (op) activation, for every
    constant shape that numpy-broadcasts with the activation: every rank
    0..4 and every choice of 1 or the output's dim per axis (lower ranks are
    right-aligned, as ONNX does);
  - activation (op) activation, the second operand a Slice of the input to
    extent 1 on a subset of the axes (Reshape'd to a lower rank when the
    sliced axes are leading);
  - division by a scalar constant;
cycling the operator over Add, Sub, Mul, Max and Min and alternating the
operand order.

Each model goes through `hb_mapper checker` (every branch node must be on
the BPU: the test is about the BPU's broadcasting) and `hb_mapper
makertbin` (whatever checker places on the BPU, makertbin compiles); the
.bin runs in the simulator through libdnn (openbpu_run_bin) and every
output is compared with ONNX Runtime on the float model, saturated at the
output's calibrated range: a maximum error of 4 quantization steps.
A broadcasting bug reads the wrong constant or activation elements and is
off by a large fraction of the range.

usage: broadcast_sweep.py --work DIR --bin BUILD_BIN_DIR [--march M ...]
Run with Debian's /usr/bin/python3 (numpy, onnx).
"""
import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ORT_RUN = os.path.join(SRC, "tests", "common", "ort_run.js")

OPS = ["Add", "Sub", "Mul", "Max", "Min"]
# Activation shapes per rank: all dims > 1, and some 1-dims the constant
# broadcasts up.
SHAPES = {
    4: [(2, 3, 4, 5), (1, 3, 1, 5)],
    3: [(3, 4, 5), (3, 1, 5)],
    2: [(4, 5), (1, 5)],
    1: [(5,)],
}
FULL = (2, 3, 4, 5)  # output dims a constant may broadcast 1-dims of x up to
N_CAL, N_TEST = 4, 3
MAX_OUTPUTS = 32  # hb_mapper's limit of model outputs


def const_shapes(xs):
    """Every constant shape of rank 0..4 that broadcasts with xs to an output
    of rank <= 4 whose dims come from FULL (right-aligned)."""
    shapes = []
    for k in range(0, 5):
        full = FULL[4 - k:]
        for mask in itertools.product([0, 1], repeat=k):
            cs = tuple(full[i] if m else 1 for i, m in enumerate(mask))
            try:
                np.broadcast_shapes(xs, cs)
            except ValueError:
                continue
            shapes.append(cs)
    return shapes


def slice_patterns(xs):
    """(axes sliced to extent 1, rank of the operand after a Reshape)."""
    r = len(xs)
    out = []
    for mask in itertools.product([0, 1], repeat=r):
        axes = [i for i, m in enumerate(mask) if m and xs[i] > 1]
        if len(axes) != sum(mask):
            continue  # slicing an extent-1 axis repeats another pattern
        # Leading sliced axes may be dropped: the lowest rank keeps the rest.
        lead = 0
        while lead < r and mask[lead]:
            lead += 1
        out.append((axes, r))
        if 0 < lead < r:
            out.append((axes, r - lead))
    return out


def branches(xs):
    """Every branch of the sweep of an activation shape: (op, first operand,
    second operand), an operand being ("x",), ("const", shape) or
    ("slice", axes, rank)."""
    out = []
    for i, cs in enumerate(const_shapes(xs)):
        c = ("const", cs)
        out.append((OPS[i % len(OPS)],) + ((("x",), c) if i % 2 == 0 else (c, ("x",))))
    for i, (axes, rank) in enumerate(slice_patterns(xs)):
        a = ("slice", axes, rank)
        out.append((OPS[(i + 2) % len(OPS)],) + ((a, ("x",)) if i % 2 == 0 else (("x",), a)))
    out.append(("Div", ("x",), ("const", ())))
    return out


def build_model(path, xs, specs, seed):
    """One model with a branch (graph output) per spec; returns the branch
    nodes and the output names."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.RandomState(seed)
    nodes, inits, outs, branch_nodes = [], [], [], []
    shapes = {"x": tuple(xs)}

    def operand(spec, k, j):
        name = "o%03d_%d" % (k, j)
        if spec[0] == "x":
            return "x", "x"
        if spec[0] == "const":
            cs = spec[1]
            v = rng.uniform(-1.5, 1.5, cs).astype(np.float32)
            if spec == ("const", ()) and j == 1:
                v = np.array(-2.5, np.float32)  # the divisor
            inits.append(numpy_helper.from_array(v, name))
            shapes[name] = cs
            return name, "c" + ("x".join(map(str, cs)) if cs else "scalar")
        _, axes, rank = spec
        dims = [1 if d in axes else xs[d] for d in range(len(xs))]
        if axes:
            par = [name + n for n in ("_st", "_en", "_ax")]
            inits.extend(numpy_helper.from_array(np.array(v, np.int64), n)
                         for v, n in zip(([0] * len(axes), [1] * len(axes), axes), par))
            nodes.append(helper.make_node("Slice", ["x"] + par, [name], name="slice_" + name))
        else:
            nodes.append(helper.make_node("Identity", ["x"], [name], name="identity_" + name))
        if rank < len(xs):
            inits.append(numpy_helper.from_array(np.array(dims[len(xs) - rank:], np.int64), name + "_shape"))
            nodes.append(helper.make_node("Reshape", [name, name + "_shape"], [name + "_r"], name="reshape_" + name))
            name += "_r"
        shapes[name] = tuple(dims[len(xs) - rank:])
        return name, "a" + "".join(map(str, axes)) + "r%d" % rank

    for k, (op, sa, sb) in enumerate(specs):
        (a, ta), (b, tb) = operand(sa, k, 0), operand(sb, k, 1)
        y = "y%03d" % k
        node = helper.make_node(op, [a, b], [y], name="%s_%03d_%s_%s" % (op, k, ta, tb))
        nodes.append(node)
        branch_nodes.append(node)
        shape = np.broadcast_shapes(shapes[a], shapes[b])
        outs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, list(shape)))
    g = helper.make_graph(nodes, "broadcast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))],
                          outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return branch_nodes, [o.name for o in outs]


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:])
        raise SystemExit("command failed (%d): %s" % (r.returncode, " ".join(cmd)))
    return r.stdout


def write_yaml(path, model, march, xs, cal_dir, prefix):
    # The yaml's input_shape of a rank < 4 featuremap is the shape itself.
    with open(path, "w") as f:
        f.write("""model_parameters:
  onnx_model: '%s'
  march: '%s'
  output_model_file_prefix: '%s'
  working_dir: 'model_output'
input_parameters:
  input_name: 'x'
  input_type_train: 'featuremap'
  input_layout_train: 'NCHW'
  input_type_rt: 'featuremap'
  input_layout_rt: 'NCHW'
  input_shape: '%s'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: '%s'
  cal_data_type: 'float32'
  calibration_type: 'max'
compiler_parameters:
  optimize_level: 'O3'
""" % (model, march, prefix, "x".join(map(str, xs)), cal_dir))


def check_placement(log, nodes):
    """Every branch node is on the BPU in checker's node table."""
    placed = {}
    for line in log.splitlines():
        m = re.search(r"INFO (\S+)\s+(BPU|CPU)\s", line)
        if m:
            placed[m.group(1)] = m.group(2)
    return ["checker places %s on %s" % (n.name, placed.get(n.name, "nothing"))
            for n in nodes if placed.get(n.name) != "BPU"]


def sweep(march, xs, specs, name, args):
    work = os.path.join(args.work, name)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "cal"))
    model = os.path.join(work, "model.onnx")
    nodes, out_names = build_model(model, xs, specs, seed=len(specs) * 10 + len(xs))
    # Calibration: the input at +-3 everywhere and random inputs in [-3, 3].
    rng = np.random.RandomState(7)
    cal = [np.full(xs, 3.0, np.float32), np.full(xs, -3.0, np.float32)]
    cal += [rng.uniform(-3, 3, xs).astype(np.float32) for _ in range(N_CAL - 2)]
    cal_list = [os.path.join(work, "cal", "%d.bin" % i) for i in range(N_CAL)]
    for c, f in zip(cal, cal_list):
        c.tofile(f)
    with open(os.path.join(work, "cal_list.txt"), "w") as f:
        f.write("\n".join(cal_list) + "\n")
    test_list = []
    for i in range(N_TEST):
        f = os.path.join(work, "test_%d.bin" % i)
        rng.uniform(-3, 3, xs).astype(np.float32).tofile(f)
        test_list.append(f)
    with open(os.path.join(work, "list.txt"), "w") as f:
        f.write("\n".join(test_list) + "\n")

    failures = []
    run([os.path.join(args.bin, "hb_mapper"), "checker", "--model-type", "onnx", "--model", model,
         "--march", march], cwd=work)
    failures += check_placement(open(os.path.join(work, "hb_mapper_checker.log")).read(), nodes)
    yaml = os.path.join(work, "config.yaml")
    write_yaml(yaml, model, march, xs, os.path.join(work, "cal"), name)
    run([os.path.join(args.bin, "hb_mapper"), "makertbin", "--config", yaml, "--model-type", "onnx"], cwd=work)
    binf = os.path.join(work, "model_output", name + ".bin")
    ref_dir, bin_dir = os.path.join(work, "ort"), os.path.join(work, "bin")
    dims = "x".join(map(str, xs))
    run(["node", ORT_RUN, model, ref_dir, "x=@%s:float32:%s" % (os.path.join(work, "list.txt"), dims)])
    run(["node", ORT_RUN, model, ref_dir + "_cal", "x=@%s:float32:%s" % (os.path.join(work, "cal_list.txt"), dims)])
    run([os.path.join(args.bin, "openbpu_run_bin"), binf, os.path.join(work, "list.txt"), bin_dir])

    def load(d, i, o):
        return np.fromfile(os.path.join(d, "%d_%s.bin" % (i, o)), np.float32).astype(np.float64)

    worst = 1.0
    for node, o in zip(nodes, out_names):
        # The "max" calibration's range of the output: the BPU saturates there.
        top = max(float(np.max(np.abs(load(ref_dir + "_cal", i, o)))) for i in range(N_CAL))
        for i in range(N_TEST):
            ref, got = np.clip(load(ref_dir, i, o), -top, top), load(bin_dir, i, o)
            if ref.size != got.size:
                failures.append("%s: .bin gives %d values, ORT %d" % (node.name, got.size, ref.size))
                break
            den = np.linalg.norm(ref) * np.linalg.norm(got)
            cos = 1.0 if den == 0 else float(ref @ got / den)
            err = float(np.max(np.abs(ref - got)))
            worst = min(worst, cos)
            # int8: each operand and the output within half a step of its
            # range / 127; 4 output steps bound their sum, a wrong element
            # (broadcasting bug) is off by a large part of the range.
            # (No bound on the cosine: an output whose test values are small
            # against its calibrated range has few quantization levels.)
            if err > 4 * top / 127 + 1e-6:
                failures.append("%s (input %d): cosine %.6f, max error %.4f, calibrated range %.4f"
                                % (node.name, i, cos, err, top))
                break
    print("%-14s x %-12s %3d branches: worst cosine %.6f, %d failures"
          % (march, "x".join(map(str, xs)), len(nodes), worst, len(failures)))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True, help="directory of hb_mapper and openbpu_run_bin")
    ap.add_argument("--march", action="append", help="default: bernoulli2, bayes-e, nash-e")
    ap.add_argument("--rank", type=int, action="append", help="activation ranks (default: 1..4)")
    args = ap.parse_args()
    failures = []
    for march in args.march or ["bernoulli2", "bayes-e", "nash-e"]:
        for rank in args.rank or sorted(SHAPES):
            for idx, xs in enumerate(SHAPES[rank]):
                specs = branches(xs)
                for part in range(0, len(specs), MAX_OUTPUTS):
                    name = "%s_r%d_%d_%d" % (march.replace("-", ""), rank, idx, part // MAX_OUTPUTS)
                    failures += ["%s %s: %s" % (march, xs, f)
                                 for f in sweep(march, xs, specs[part:part + MAX_OUTPUTS], name, args)]
    for f in failures:
        print("FAIL", f)
    if failures:
        raise SystemExit("%d failures" % len(failures))
    print("all broadcast patterns agree with ONNX Runtime")


if __name__ == "__main__":
    main()
