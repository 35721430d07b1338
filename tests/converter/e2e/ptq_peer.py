#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A same-run peer for the converter's int8 accuracy (issue 9): PyTorch
post-training quantization of the same torchvision models, calibrated on the
same images, measured against the same float outputs on the same held-out
images, printed next to our .bin's cosine in one run.

For each model (random weights, BatchNorm statistics from photos as in
tests/converter/models/export_models.py: exact_bn):
  * ours: ONNX export, `hb_mapper makertbin` (bayes-e, featuremap input,
    calibration_type default) on the calibration crops, the .bin run with
    openbpu_run_bin (libdnn, simulator); with --int16 also the same with
    `optimization: set_all_nodes_int16`, with --int16-weights with
    `set_all_nodes_int16;int16_weights` (16-bit convolution weights, two
    int8 planes), with --mix int8 with `calibration_type: mix`, with
    --min-cosine C int8 with the accuracy budget `min_output_cosine: C`
    (int16 promotions; "-" when the budget is not met; calibration_type
    --budget-cal, default `default`); the estimated BPU
    time and the promotions of each conversion are printed from its
    makertbin log;
  * PTQ: PyTorch FX graph mode post-training quantization: the x86 (fbgemm)
    default qconfig mapping -- per-channel symmetric int8 weights
    (PerChannelMinMaxObserver), HistogramObserver activations, Conv-BN-ReLU
    fused by prepare_fx -- calibrated on the same crops, converted to the
    reference quantized model (quantize/dequantize around float kernels: the
    quantization error alone, no int8 kernel of this host involved). The
    activations use the full 8 bits (quint8 0..255); --reduce-range gives
    fbgemm's default 7 bits, a workaround for int16 overflow in older x86
    kernels rather than an accuracy choice; --symmetric adds PTQ with
    symmetric activations (zero point 128), the number format of our int8;
    --weights-only adds the float model with only its BatchNorm-folded
    weights rounded to per-channel int8 (the ceiling of int16 activations);
  * both against the float PyTorch model on held-out photo crops (other
    crops than the calibration ones): mean (and min) cosine of the logits.

With --check TOL the run fails when our int8 mean cosine is below PTQ's
minus TOL for any model (ctest converter_ptq_peer, a small model).

usage: ptq_peer.py --work DIR --bin BUILD_BIN_DIR [--models mobilenet_v2,resnet18,mobilenet_v3_large,efficientnet_b0]
                   [--size 224] [--n-cal 8] [--n-test 24] [--int16] [--int16-weights] [--mix]
                   [--min-cosine C [--budget-cal TYPE]] [--no-ptq] [--symmetric] [--weights-only] [--check TOL]
Run with Debian's /usr/bin/python3 (torch, torchvision, numpy, onnx, skimage).
"""
import argparse
import copy
import os
import re
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import e2e  # noqa: E402
import export_models  # noqa: E402

MODELS = {"mobilenet_v2": torchvision.models.mobilenet_v2, "resnet18": torchvision.models.resnet18,
          "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
          "efficientnet_b0": torchvision.models.efficientnet_b0}


def float_model(name, size):
    """The torchvision model with random weights (seed 0) and exact BatchNorm
    statistics of export_models.py's photos at this size."""
    torch.manual_seed(0)
    model = MODELS[name]()
    imgs = torch.nn.functional.interpolate(export_models.sample_images(size).double(), size=(size, size),
                                           mode="bilinear", align_corners=False)
    export_models.exact_bn(model, imgs)
    return model.eval()


def crops(n, size, seed):
    """n photo crops (e2e.photos) as normalized float32 NCHW [1, 3, size, size] arrays."""
    return [e2e.normalize(im, e2e.IMAGENET_MEAN, e2e.IMAGENET_STD) for im in e2e.photos(n, (size, size), seed)]


def torch_outputs(model, inputs):
    with torch.no_grad():
        return [model(torch.from_numpy(x)).numpy().ravel() for x in inputs]


def ptq_outputs(model, cal, test, reduce_range, symmetric=False):
    """PyTorch FX post-training quantization (x86 qconfig mapping with
    HistogramObserver activations and per-channel weights), calibrated on
    cal, the reference quantized model run on test. symmetric: activations
    symmetric around 0 (quint8 with zero point 128: the signed int8 of our
    BPU values, half the levels unused by a non-negative activation)."""
    from torch.ao.quantization import QConfig, get_default_qconfig_mapping
    from torch.ao.quantization.observer import HistogramObserver, default_per_channel_weight_observer
    from torch.ao.quantization.quantize_fx import convert_to_reference_fx, prepare_fx
    qscheme = torch.per_tensor_symmetric if symmetric else torch.per_tensor_affine
    qconfig = QConfig(activation=HistogramObserver.with_args(reduce_range=reduce_range, qscheme=qscheme),
                      weight=default_per_channel_weight_observer)
    # The x86 mapping: its default qconfig (7-bit HistogramObserver, also set
    # per operator type: Conv, Linear, ReLU, ...) replaced by ours; the fixed
    # ranges of Sigmoid, Hardsigmoid, Tanh, Softmax kept.
    mapping = get_default_qconfig_mapping("x86")
    default = mapping.global_qconfig
    mapping.set_global(qconfig)
    for op, q in list(mapping.object_type_qconfigs.items()):
        if q is default:
            mapping.set_object_type(op, qconfig)
    warnings.filterwarnings("ignore", module=r"torch\.ao\.quantization")
    prepared = prepare_fx(copy.deepcopy(model), mapping, (torch.from_numpy(cal[0]),))
    with torch.no_grad():
        for x in cal:
            prepared(torch.from_numpy(x))
    return torch_outputs(convert_to_reference_fx(prepared), test)


def weights_only_outputs(model, test):
    """The float model with BatchNorm folded into the convolutions (fuse_fx)
    and only the weights rounded to per-output-channel symmetric int8
    (max |w| / 127), the activations float: the int8 weights' share of the
    loss, which int16 activations cannot remove."""
    from torch.ao.quantization.quantize_fx import fuse_fx
    fused = fuse_fx(copy.deepcopy(model))
    with torch.no_grad():
        for m in fused.modules():
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                w = m.weight
                scale = (w.abs().flatten(1).max(1)[0].clamp(min=1e-12) / 127).view(-1, *([1] * (w.dim() - 1)))
                w.copy_(torch.round(w / scale) * scale)
    return torch_outputs(fused, test)


# Our conversions: key -> (column head, calibration_type, calibration_parameters lines).
OURS = {"int8": ("ours int8", "default", ""),
        "int16": ("ours all-int16", "default", "  optimization: set_all_nodes_int16\n"),
        "int16w": ("ours all-int16 + int16_weights", "default",
                   "  optimization: 'set_all_nodes_int16;int16_weights'\n"),
        "mix": ("ours int8, mix", "mix", ""),
        "asym": ("ours int8, asymmetric", "default", "  optimization: asymmetric\n"),
        "budget": ("ours int8, min_output_cosine", "default", None)}  # None: --min-cosine's value


def our_outputs(args, name, onnx_path, cal_dir, test_list, size, key):
    """makertbin (bayes-e, featuremap; OURS[key]'s calibration), then the
    .bin on the test inputs. Returns (outputs or None when the conversion
    failed, a note from the makertbin log: estimated BPU time, int16
    promotions, or the failure)."""
    tag = "%s_%d_%s" % (name, size, key)
    work = os.path.join(args.work, tag)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    _, cal_type, extra = OURS[key]
    if extra is None:
        cal_type, extra = args.budget_cal, "  min_output_cosine: %g\n" % args.min_cosine
    case = e2e.Case(tag, onnx_path, "bayes-e", "input", (1, 3, size, size), rt="featuremap", train="featuremap",
                    layout_rt="NCHW", cal=cal_type, extra_yaml=extra)
    yaml = os.path.join(work, "config.yaml")
    e2e.write_yaml(case, yaml, onnx_path, cal_dir, work)
    t0 = time.time()
    cmd = ["nice", "-n", "5", os.path.join(args.bin, "hb_mapper"), "makertbin", "--config", yaml,
           "--model-type", "onnx"]
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("%s: makertbin %.0f s" % (tag, time.time() - t0), flush=True)
    if r.returncode != 0:
        err = [l.split("ERROR", 1)[-1].strip() for l in r.stdout.splitlines() if "ERROR" in l]
        print(r.stdout[-3000:])
        return None, "failed: " + (err[0] if err else "exit %d" % r.returncode)
    out_dir = os.path.join(work, "bin")
    e2e.run([os.path.join(args.bin, "openbpu_run_bin"), os.path.join(work, "model_output", tag + ".bin"),
             test_list, out_dir])
    n = len(open(test_list).read().split())
    log_path = os.path.join(work, "hb_mapper_makertbin.log")
    log = open(log_path).read() if os.path.exists(log_path) else r.stdout
    return [e2e.read_outputs(out_dir, i, ["logits"])[0] for i in range(n)], log_note(log)


def log_note(log):
    """The estimated BPU time (sum over the BPU subgraphs), the convolutions
    with 16-bit weights and the int16 promotion summary of a makertbin log."""
    us = sum(float(m) for m in re.findall(r"latency = ([0-9.]+) us", log))
    note = "estimated BPU time %.1f us" % us
    m = re.search(r"int16_weights: (\d+) convolutions", log)
    if m:
        note += "; %s convolutions with 16-bit weights" % m.group(1)
    m = re.search(r"int16 promotion \((.*?)\): (\d+) values promoted, output cosine ([0-9.]+) -> ([0-9.]+), "
                  r"estimated BPU time ([0-9.]+) -> ([0-9.]+) us", log)
    if m:
        note += "; %s promoted (%s ranking), calibration cosine %s -> %s, %s -> %s us" % (
            m.group(2), m.group(1).split(" ranking")[0], m.group(3), m.group(4), m.group(5), m.group(6))
    return note


def cosines(ref, got):
    c = np.array([e2e.cosine(a, b) for a, b in zip(ref, got)])
    return c.mean(), c.min()


def measure(args, name):
    """{'int8': (mean, min), 'int16': ..., 'ptq': ..., 'int8_note': str, ...} for one model."""
    size = args.size
    d = os.path.join(args.work, "%s_%d" % (name, size))
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(os.path.join(d, "cal"))
    os.makedirs(os.path.join(d, "test"))
    model = float_model(name, size)
    onnx_path = os.path.join(d, name + ".onnx")
    torch.onnx.export(model, torch.zeros(1, 3, size, size), onnx_path, opset_version=11, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    cal, test = crops(args.n_cal, size, 1), crops(args.n_test, size, 2)  # e2e.py's crops
    for i, x in enumerate(cal):
        x.tofile(os.path.join(d, "cal", "%03d.bin" % i))
    test_list = os.path.join(d, "test.txt")
    with open(test_list, "w") as f:
        for i, x in enumerate(test):
            x.tofile(os.path.join(d, "test", "%03d.bin" % i))
            f.write(os.path.join(d, "test", "%03d.bin" % i) + "\n")
    ref = torch_outputs(model, test)
    t0 = time.time()
    res = {}
    if not args.no_ptq:
        res["ptq"] = cosines(ref, ptq_outputs(model, cal, test, args.reduce_range))
        print("%s: PyTorch FX PTQ %.0f s" % (name, time.time() - t0), flush=True)
    if args.symmetric:
        res["ptq_sym"] = cosines(ref, ptq_outputs(model, cal, test, args.reduce_range, symmetric=True))
    if args.weights_only:
        res["w8"] = cosines(ref, weights_only_outputs(model, test))
    for key in our_keys(args):
        got, note = our_outputs(args, name, onnx_path, os.path.join(d, "cal"), test_list, size, key)
        res[key] = cosines(ref, got) if got is not None else None
        res[key + "_note"] = note
    return res


def our_keys(args):
    return ["int8"] + [k for k, on in (("int16", args.int16), ("int16w", args.int16_weights), ("mix", args.mix), ("asym", args.asymmetric),
                                       ("budget", args.min_cosine is not None)) if on]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True, help="directory of hb_mapper and openbpu_run_bin")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,mobilenet_v3_large,efficientnet_b0")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--n-cal", type=int, default=8, help="calibration crops (e2e.py's default: 8)")
    ap.add_argument("--n-test", type=int, default=24, help="held-out crops (e2e.py's default: 24)")
    ap.add_argument("--int16", action="store_true", help="also our conversion with set_all_nodes_int16")
    ap.add_argument("--int16-weights", action="store_true",
                    help="also ours with set_all_nodes_int16 and int16_weights (16-bit convolution weights)")
    ap.add_argument("--mix", action="store_true", help="also ours int8 with calibration_type mix")
    ap.add_argument("--asymmetric", action="store_true",
                    help="also ours int8 with optimization asymmetric (zero points between convolutions)")
    ap.add_argument("--min-cosine", type=float,
                    help="also ours int8 with the accuracy budget min_output_cosine MIN_COSINE (int16 promotions)")
    ap.add_argument("--budget-cal", default="default", help="calibration_type of the --min-cosine column")
    ap.add_argument("--no-ptq", action="store_true", help="only our conversions (no PyTorch PTQ column)")
    ap.add_argument("--reduce-range", action="store_true", help="PTQ activations in 7 bits (fbgemm's default)")
    ap.add_argument("--symmetric", action="store_true",
                    help="also PTQ with symmetric activations (the number format of our int8 values)")
    ap.add_argument("--weights-only", action="store_true",
                    help="also the float model with only its (BatchNorm-folded) weights int8 per channel")
    ap.add_argument("--check", type=float, help="fail when our int8 mean cosine < PTQ's - CHECK")
    args = ap.parse_args()
    args.work, args.bin = os.path.abspath(args.work), os.path.abspath(args.bin)
    rows = [(name, measure(args, name)) for name in args.models.split(",")]
    print("\nmean (min) cosine to the float model, %d held-out crops, %d calibration crops, %dx%d:"
          % (args.n_test, args.n_cal, args.size, args.size))
    cols = our_keys(args) + ([] if args.no_ptq else ["ptq"]) + (["ptq_sym"] if args.symmetric else []) + \
        (["w8"] if args.weights_only else [])
    head = {k: v[0] for k, v in OURS.items()}
    head.update({"ptq": "PyTorch FX PTQ", "ptq_sym": "PTQ symmetric", "w8": "int8 weights only"})
    if args.min_cosine is not None:
        head["budget"] += " %g" % args.min_cosine + ("" if args.budget_cal == "default" else ", " + args.budget_cal)
    print("%-20s" % "model" + "".join("%-32s" % head[c] for c in cols))
    failures = []
    for name, res in rows:
        print("%-20s" % name + "".join("%-32s" % ("%.5f (%.5f)" % res[c] if res[c] else "-") for c in cols))
    for name, res in rows:
        for k in our_keys(args):
            print("%s, %s: %s" % (name, head[k], res[k + "_note"]))
    for name, res in rows:
        if args.check is not None and "ptq" in res and res["int8"][0] < res["ptq"][0] - args.check:
            failures.append("%s: our int8 mean cosine %.5f < PyTorch PTQ's %.5f - %g"
                            % (name, res["int8"][0], res["ptq"][0], args.check))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
