#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""HB_ONNXRuntime: the quantized ONNX model equals the .bin (hb_mapper) and
the .hbm (hb_compile) bit for bit; the float models compute what an
independent numpy implementation of the source model computes; input_offset
and dtype conversions follow the vendor's rules."""
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

import openbpu
from openbpu import HB_ONNXRuntime
from common import MODELS, calibration_samples, cosine, hbm_file, model_file


def conv2d(x, w, b, pad, stride=1):
    """Reference convolution (NCHW, float64)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    h = (x.shape[2] - k) // stride + 1
    wd = (x.shape[3] - k) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], h, wd))
    for i in range(k):
        for j in range(k):
            patch = x[:, :, i:i + stride * h:stride, j:j + stride * wd:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b[None, :, None, None]


def weights(name):
    m = onnx.load("%s/%s/%s.onnx" % (MODELS, name, name))
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}


class OnnxRuntime(unittest.TestCase):
    def test_quantized_model_equals_bin(self):
        for name, inp in (("sensitive", "input"), ("sensitive_int", "input")):
            sess = HB_ONNXRuntime(model_file=model_file(name, "quantized"))
            m = openbpu.load_model(model_file(name))
            for x in calibration_samples(name, inp):
                got = sess.run_feature(None, {inp: x})[0]
                want = m.infer([x])[0]
                self.assertEqual(got.dtype, want.dtype, name)
                self.assertEqual(got.shape, want.shape, name)
                self.assertEqual(got.tobytes(), want.tobytes(), name)

    def test_quantized_image_model_equals_bin(self):
        sess = HB_ONNXRuntime(model_file=model_file("image", "quantized"))
        m = openbpu.load_model(model_file("image"))
        self.assertEqual(sess.get_inputs()[0].shape, [1, 32, 32, 3])  # the .bin's BGR NHWC bytes
        self.assertEqual(sess.input_types, ["tensor(uint8)"])
        for img in calibration_samples("image", "image"):
            bgr = (img.astype(np.int16) + 128).astype(np.uint8).transpose(0, 2, 3, 1)
            want = m.infer([np.ascontiguousarray(bgr)])[0]
            self.assertEqual(sess.run(None, {"image": bgr})[0].tobytes(), want.tobytes())
            # int8 "_128" data: input_offset adds the 128 back.
            as_int8 = (bgr.astype(np.int16) - 128).astype(np.int8)
            self.assertEqual(sess.run(None, {"image": as_int8}, input_offset=128)[0].tobytes(), want.tobytes())

    def test_quantized_model_equals_hbm(self):
        """hb_compile's quantized ONNX model against its .hbm (the UCP
        generation): an int32 output with per-channel scales, and NV12 given
        to the .hbm as Y and UV planes and to the quantized model as the one
        NV12 tensor of their bytes."""
        name = "sensitive_int_hbm"
        sess = HB_ONNXRuntime(model_file=model_file(name, "quantized"))
        m = openbpu.load_model(hbm_file(name))
        for x in calibration_samples(name, "input"):
            got, want = sess.run_feature(None, {"input": x})[0], m.infer([x])[0]
            self.assertEqual((got.dtype, got.shape), (want.dtype, want.shape), name)
            self.assertEqual(got.tobytes(), want.tobytes(), name)
        name = "image_nv12_hbm"
        sess = HB_ONNXRuntime(model_file=model_file(name, "quantized"))
        m = openbpu.load_model(hbm_file(name))
        shape = sess.get_inputs()[0].shape
        self.assertEqual(int(np.prod(shape)), 32 * 32 * 3 // 2)  # NV12 bytes
        rng = np.random.default_rng(11)
        for _ in range(3):
            y = rng.integers(0, 256, (1, 32, 32, 1), dtype=np.uint8)
            uv = rng.integers(0, 256, (1, 16, 16, 2), dtype=np.uint8)
            want = m.infer([y, uv])[0]
            nv12 = np.concatenate([y.ravel(), uv.ravel()]).reshape(shape)
            got = sess.run(None, {sess.input_names[0]: nv12})[0]
            self.assertEqual((got.dtype, got.shape), (want.dtype, want.shape), name)
            self.assertEqual(got.tobytes(), want.tobytes(), name)

    def test_float_models_compute_the_source_model(self):
        w = weights("sensitive")
        for kind in ("original_float", "optimized_float"):
            sess = HB_ONNXRuntime(model_file=model_file("sensitive", kind))
            self.assertEqual(sess.input_names, ["input"])
            self.assertEqual(sess.output_names, ["output"])
            self.assertEqual(sess.get_outputs()[0].shape, [1, 4, 16, 16])
            for x in calibration_samples("sensitive", "input")[:3]:
                r1 = np.maximum(conv2d(x.astype(np.float64), w["w1"], w["b1"], 1), 0)
                c2 = conv2d(r1, w["w2"], w["b2"], 1)
                ref = conv2d(c2, w["w3"], w["b3"], 0)
                got = sess.run(["output"], {"input": x})[0]
                err = np.abs(got - ref).max() / np.abs(ref).max()
                self.assertLess(err, 1e-5, kind)

    def test_image_float_model_takes_uint8_with_offset(self):
        w = weights("image")
        sess = HB_ONNXRuntime(model_file=model_file("image", "original_float"))
        self.assertEqual(sess.input_types, ["tensor(int8)"])
        img = calibration_samples("image", "image")[0]  # int8 NCHW, pixel - 128
        pixels = (img.astype(np.int16) + 128).astype(np.uint8)
        a = sess.run(None, {"image": pixels}, input_offset=128)[0]
        b = sess.run(None, {"image": img})[0]
        self.assertEqual(a.tobytes(), b.tobytes())
        # mean 120/115/110, scale 0.017 (config), then the source model.
        x = (pixels.astype(np.float64) - np.array([120, 115, 110])[None, :, None, None]) * 0.017
        r1 = np.maximum(conv2d(x, w["w1"], w["b1"], 1, stride=2), 0)
        ref = conv2d(r1, w["w2"], w["b2"], 1).mean(axis=(2, 3))
        self.assertLess(np.abs(a - ref).max() / np.abs(ref).max(), 1e-5)
        with self.assertRaisesRegex(TypeError, "float32 data cannot be converted"):
            sess.run(None, {"image": img.astype(np.float32)})
        with self.assertRaisesRegex(ValueError, "does not fit"):
            sess.run(None, {"image": pixels}, input_offset=0)
        with self.assertRaisesRegex(KeyError, "no data for model input 'image'"):
            sess.run(None, {"x": img})

    def test_calibrated_model_fake_quantizes(self):
        """The calibrated model holds a QDQ pair per int8 activation and per
        convolution weight; its output is close to the .bin's."""
        m = onnx.load(model_file("sensitive", "calibrated"))
        q = [n for n in m.graph.node if n.op_type == "QuantizeLinear"]
        inits = {t.name for t in m.graph.initializer}
        self.assertEqual(sorted(n.input[0] for n in q if n.input[0] in inits), ["w1", "w2", "w3"])
        self.assertEqual(len([n for n in q if n.input[0] not in inits]), 4)  # input, c1, r1, c2
        # The deliberately sensitive model loses its output in both.
        calib = HB_ONNXRuntime(model_file=model_file("sensitive", "calibrated"))
        flt = HB_ONNXRuntime(model_file=model_file("sensitive", "optimized_float"))
        binm = openbpu.load_model(model_file("sensitive"))
        x = calibration_samples("sensitive", "input")[0]
        ref = flt.run(None, {"input": x})[0]
        self.assertLess(cosine(calib.run(None, {"input": x})[0], ref), 0.9)
        self.assertLess(cosine(binm.infer([x])[0], ref), 0.9)
        # A well-behaved model: calibrated ONNX close to the .bin.
        calib = HB_ONNXRuntime(model_file=model_file("image", "calibrated"))
        binm = openbpu.load_model(model_file("image"))
        for img in calibration_samples("image", "image"):
            bgr = np.ascontiguousarray((img.astype(np.int16) + 128).astype(np.uint8).transpose(0, 2, 3, 1))
            self.assertGreater(cosine(calib.run(None, {"image": img})[0], binm.infer([bgr])[0]), 0.99)

    def test_intermediate_values_and_errors(self):
        sess = HB_ONNXRuntime(model_file=model_file("sensitive", "optimized_float"))
        x = calibration_samples("sensitive", "input")[0]
        r1, out = sess.run(["r1", "output"], {"input": x})
        self.assertEqual(r1.shape, (1, 8, 16, 16))
        self.assertGreaterEqual(r1.min(), 0.0)
        with self.assertRaisesRegex(RuntimeError, "no value 'nope'"):
            sess.run(["nope"], {"input": x})
        with self.assertRaisesRegex(RuntimeError, r"shape \(1,3,8,16\) given, the model takes \(1,3,16,16\)"):
            sess.run(None, {"input": x[:, :, :8]})
        with self.assertRaisesRegex(RuntimeError, "cannot open ONNX model"):
            HB_ONNXRuntime(model_file="missing.onnx")
        with self.assertRaisesRegex(RuntimeError, "protobuf parse failed"):
            HB_ONNXRuntime(model_file=b"garbage bytes")


if __name__ == "__main__":
    unittest.main()
