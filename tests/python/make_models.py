#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the Python tests' models: small ONNX models written with onnx.helper,
converted with `hb_mapper makertbin` (debug_mode dump_calibration_data).

* sensitive: featuremap input; conv1+relu, conv2 whose output channel 0
  has weights 300x larger than the others (one huge channel in a per-tensor
  int8 activation crushes the rest), conv3 that reads mostly the small
  channels. Quantizing conv2 is what costs accuracy: the debugger must rank
  it first.
* sensitive_int: the same with the output Dequantize removed (int32 output,
  per-channel scales, channels padded).
* image: BGR image input (NHWC at run time, mean/scale preprocessing) on
  bernoulli2: the quantized model takes the .bin's image bytes, the float
  models the int8 "_128" image.
* sensitive_int_hbm, image_nv12_hbm: `hb_compile` (nash-e, .hbm, the UCP
  generation) of sensitive_int and of the image model with NV12 at run time
  (two inputs: Y and UV planes).

usage: make_models.py OUT_DIR HB_MAPPER (hb_compile is next to it)
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(name, x, w, b, out, kernel, pads=1):
    return helper.make_node("Conv", [x, w, b], [out], name=name, kernel_shape=[kernel, kernel], pads=[pads] * 4)


def sensitive_model(rng):
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.1, (8, 8, 3, 3)).astype(np.float32)
    w2[0] *= 300.0  # the outlier channel
    w3 = rng.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32)
    w3[:, 0] /= 300.0  # conv3 barely reads it: the model output lives in the small channels
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (np.zeros(8, np.float32), "b1"), (w2, "w2"), (np.full(8, 0.05, np.float32), "b2"),
        (w3, "w3"), (np.zeros(4, np.float32), "b3")]]
    nodes = [conv("conv1", "input", "w1", "b1", "c1", 3), helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             conv("conv2", "r1", "w2", "b2", "c2", 3), conv("conv3", "c2", "w3", "b3", "output", 1, pads=0)]
    g = helper.make_graph(nodes, "sensitive", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 16, 16])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], ir_version=7)


def image_model(rng):
    w1 = rng.normal(0, 0.2, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (6, 8, 3, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (np.full(8, 0.1, np.float32), "b1"), (w2, "w2"), (np.zeros(6, np.float32), "b2")]]
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c2"], ["pooled"], name="gap"),
             helper.make_node("Flatten", ["pooled"], ["logits"], name="flatten")]
    g = helper.make_graph(nodes, "image", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], ir_version=7)


def smooth_images(rng, n, shape):
    """Images with spatial structure (random low-frequency patterns)."""
    out = []
    for _ in range(n):
        c, h, w = shape
        yy, xx = np.mgrid[0:h, 0:w] / float(max(h, w))
        img = np.zeros((c, h, w))
        for ch in range(c):
            fx, fy, ph = rng.uniform(0.5, 3, 2).tolist() + [rng.uniform(0, 6.3)]
            img[ch] = np.sin(2 * np.pi * (fx * xx + fy * yy) + ph)
        out.append(img + rng.normal(0, 0.1, img.shape))
    return out


def convert(out, name, model, yaml_inputs, cal, hb_mapper, extra=(), hbm=False):
    """hb_mapper makertbin (bernoulli2, .bin) or hb_compile (nash-e, .hbm)."""
    work = os.path.join(out, name)
    cal_dir = os.path.join(work, "cal")
    os.makedirs(cal_dir, exist_ok=True)
    onnx.save(model, os.path.join(work, name + ".onnx"))
    for i, sample in enumerate(cal):
        sample.tofile(os.path.join(cal_dir, "%03d.bin" % i))
    yaml = "\n".join([
        "model_parameters:",
        "  onnx_model: '%s'" % os.path.join(work, name + ".onnx"),
        "  march: '%s'" % ("nash-e" if hbm else "bernoulli2"),
        "  output_model_file_prefix: '%s'" % name,
        "  working_dir: '%s'" % os.path.join(work, "model_output"),
        "  debug_mode: 'dump_calibration_data'"] + list(extra) + [
        "input_parameters:"] + yaml_inputs + [
        "calibration_parameters:",
        "  cal_data_dir: '%s'" % cal_dir,
        "  cal_data_type: '%s'" % ("float32" if cal[0].dtype == np.float32 else "uint8"),
        "  calibration_type: 'max'",
        "compiler_parameters:",
        "  optimize_level: 'O3'", ""])
    with open(os.path.join(work, "config.yaml"), "w") as f:
        f.write(yaml)
    config = os.path.join(work, "config.yaml")
    cmd = ([os.path.join(os.path.dirname(hb_mapper), "hb_compile"), "--config", config] if hbm else
           [hb_mapper, "makertbin", "--config", config, "--model-type", "onnx"])
    r = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("%s failed for %s:\n%s" % (" ".join(cmd[:2]), name, r.stdout[-4000:]))


def main():
    out, hb_mapper = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(1234)
    cal = [x.astype(np.float32)[None] for x in smooth_images(rng, 8, (3, 16, 16))]
    featuremap = ["  input_name: 'input'", "  input_type_train: 'featuremap'", "  input_layout_train: 'NCHW'",
                  "  input_type_rt: 'featuremap'", "  input_layout_rt: 'NCHW'", "  input_shape: '1x3x16x16'",
                  "  norm_type: 'no_preprocess'"]
    model = sensitive_model(rng)
    convert(out, "sensitive", model, featuremap, cal, hb_mapper)
    # The same with the output Dequantize removed: an int32 output with
    # per-channel scales in the padded native layout.
    convert(out, "sensitive_int", model, featuremap, cal, hb_mapper, ["  remove_node_type: 'Dequantize'"])
    convert(out, "sensitive_int_hbm", model, featuremap, cal, hb_mapper, ["  remove_node_type: 'Dequantize'"], hbm=True)
    imgs = [np.clip(x * 60 + 128, 0, 255).astype(np.uint8)[None] for x in smooth_images(rng, 6, (3, 32, 32))]
    image = image_model(rng)
    image_inputs = [
        "  input_name: 'image'", "  input_type_train: 'bgr'", "  input_layout_train: 'NCHW'",
        "  input_type_rt: 'bgr'", "  input_layout_rt: 'NHWC'", "  input_shape: '1x3x32x32'",
        "  norm_type: 'data_mean_and_scale'", "  mean_value: '120 115 110'", "  scale_value: '0.017'"]
    convert(out, "image", image, image_inputs, imgs, hb_mapper)
    nv12 = [line.replace("'bgr'", "'nv12'") if "input_type_rt" in line else line for line in image_inputs]
    convert(out, "image_nv12_hbm", image, nv12, imgs, hb_mapper, hbm=True)


if __name__ == "__main__":
    main()
