#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The accuracy debugger on the deliberately sensitive model: conv2 (one
output channel 300x larger than the others) ranks first; the sensitivity
value equals an independent numpy computation of "quantize conv2 only";
thresholds equal the calibration data's maxima; plots are PNG images; the
hmct-debugger command runs the same analyses."""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

import openbpu.debug as dbg
from common import BIN, MODELS, calibration_samples, model_file, out_dir
from test_onnx_runtime import conv2d

MODEL = model_file("sensitive", "calibrated")
DATA = os.path.join(out_dir("sensitive"), "calibration_data")


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 2000


def qdq(x, scale, axis=None):
    """ONNX QuantizeLinear + DequantizeLinear, int8, zero point 0 (round half to even)."""
    s = scale if axis is None else scale.reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    return np.clip(np.rint(x / s), -128, 127) * s


class Debugger(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = dbg.CalibratedModel(MODEL)
        m = onnx.load(MODEL)
        cls.init = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def pair_reading(self, value_prefix):
        return next(p for p in self.model.pairs.values() if p.input.startswith(value_prefix))

    def test_structure(self):
        self.assertEqual(list(self.model.groups), ["conv1", "relu1", "conv2", "conv3"])
        self.assertEqual(sorted(self.model.names("weight")), sorted(p.name for p in self.model.pairs.values()
                                                                    if p.input in ("w1", "w2", "w3")))
        c2 = self.pair_reading("c2")
        self.assertEqual(c2.owner, "conv2")
        self.assertEqual(self.model.group("conv2"), {c2.name, self.pair_reading("w2").name})
        self.assertEqual(self.model.pair(c2.q.name).name, c2.name)  # node names are aliases

    def test_conv2_ranks_first_with_the_numpy_value(self):
        res = dbg.get_sensitivity_of_nodes(MODEL, ["cosine-similarity", "mse", "mre", "sqnr", "chebyshev"], DATA,
                                           verbose=True)
        self.assertEqual(list(res)[0], "conv2")
        self.assertEqual(set(res), {"conv1", "relu1", "conv2", "conv3"})
        self.assertEqual(list(res["conv2"]), ["cosine-similarity", "mse", "mre", "sqnr", "chebyshev"])
        # Independent: quantize conv2's weights and output only, in numpy.
        w = self.init
        sw = w[self.pair_reading("w2").q.input[1]]
        sc = w[self.pair_reading("c2").q.input[1]]
        cos, mse = [], []
        for x in calibration_samples("sensitive", "input"):
            r1 = np.maximum(conv2d(x.astype(np.float64), w["w1"], w["b1"], 1), 0)
            ref = conv2d(conv2d(r1, w["w2"], w["b2"], 1), w["w3"], w["b3"], 0)
            got = conv2d(qdq(conv2d(r1, qdq(w["w2"], sw, 0), w["b2"], 1), sc), w["w3"], w["b3"], 0)
            cos.append(float(ref.ravel() @ got.ravel() / np.linalg.norm(ref) / np.linalg.norm(got)))
            mse.append(float(np.mean((ref - got) ** 2)))
        self.assertAlmostEqual(float(res["conv2"]["cosine-similarity"]), np.mean(cos), delta=1e-4)
        self.assertAlmostEqual(float(res["conv2"]["mse"]) / np.mean(mse), 1.0, delta=1e-3)
        self.assertLess(np.mean(cos), 0.9)
        self.assertGreater(float(res["conv1"]["cosine-similarity"]), 0.999)

    def test_activation_and_weight_nodes(self):
        act = dbg.get_sensitivity_of_nodes(MODEL, "sqnr", DATA, node_type="activation", data_num=4)
        first = self.model.pair(list(act)[0])
        self.assertTrue(first.input.startswith("c2"))
        self.assertEqual(act[first.name]["node"], "conv2")
        self.assertEqual(act[first.name]["bit"], "8")
        # Calibration "max": the threshold is the largest |conv2 output| of the calibration data.
        w = self.init
        peak = 0.0
        for x in calibration_samples("sensitive", "input"):
            r1 = np.maximum(conv2d(x.astype(np.float64), w["w1"], w["b1"], 1), 0)
            peak = max(peak, float(np.abs(conv2d(r1, w["w2"], w["b2"], 1)).max()))
        self.assertAlmostEqual(float(act[first.name]["threshold"]) / peak, 1.0, delta=1e-4)
        wt = dbg.get_sensitivity_of_nodes(MODEL, "mse", DATA, node_type="weight")
        self.assertEqual({r["node"] for r in wt.values()}, {"conv1", "conv2", "conv3"})
        values = [float(r["mse"]) for r in wt.values()]
        self.assertEqual(values, sorted(values, reverse=True))  # worst (largest mse) first
        only = dbg.get_sensitivity_of_nodes(MODEL, "mse", DATA, interested_nodes=["conv1"], output_node="relu1")
        self.assertEqual(list(only), ["conv1"])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "unknown metric 'cos'"):
            dbg.get_sensitivity_of_nodes(MODEL, "cos", DATA)
        with self.assertRaisesRegex(ValueError, r"data_num 9: must be in \[1, 8\]"):
            dbg.get_sensitivity_of_nodes(MODEL, "mse", DATA, data_num=9)
        with self.assertRaisesRegex(KeyError, "'nope' is not a node"):
            dbg.get_sensitivity_of_nodes(MODEL, "mse", DATA, interested_nodes="nope")
        with self.assertRaisesRegex(ValueError, "cannot both be None"):
            dbg.plot_acc_error(self.tmp.name, DATA, MODEL)
        with self.assertRaisesRegex(ValueError, "does not exist"):
            dbg.get_sensitivity_of_nodes(MODEL, "mse", "/nonexistent")
        with self.assertRaisesRegex(ValueError, "is not a calibration node"):
            dbg.get_channelwise_data_distribution(self.tmp.name, MODEL, DATA, ["conv2"])

    def test_acc_error_curves(self):
        d = os.path.join(self.tmp.name, "acc")
        res = dbg.plot_acc_error(d, DATA, MODEL, quantize_node=["weight", "activation"])
        self.assertEqual(list(res), ["weight", "activation"])
        self.assertEqual([n for n, _ in res["weight"]], ["conv1", "relu1", "conv2", "conv3"])
        avg = dbg.plot_acc_error(d, DATA, MODEL, quantize_node=["weight", "activation"], average_mode=True)
        raw = [v for _, v in res["activation"]]
        self.assertTrue(np.allclose([v for _, v in avg["activation"]], np.cumsum(raw) / np.arange(1, len(raw) + 1)))
        nested = dbg.plot_acc_error(d, DATA, MODEL, non_quantize_node=[["conv2"], ["conv1", "conv2"]], metric="mse")
        self.assertEqual(list(nested), ["partial_qmodel_0", "partial_qmodel_1"])
        self.assertEqual(nested["partial_qmodel_1"][0][1], 0.0)  # conv1 in float: exact
        self.assertTrue(is_png(os.path.join(d, "plot_acc_error.png")))
        with open(os.path.join(d, "plot_acc_error.txt")) as f:
            self.assertIn("partial_qmodel_1", f.read())

    def test_distributions(self):
        d = os.path.join(self.tmp.name, "dist")
        w2, c2 = self.pair_reading("w2"), self.pair_reading("c2")
        files = dbg.plot_distribution(d, MODEL, DATA, [c2.name, w2.q.name, "conv2"])
        self.assertEqual(len(files), 3)
        for f in files.values():
            self.assertTrue(is_png(f), f)
        cw = dbg.get_channelwise_data_distribution(d, MODEL, DATA, [w2.name, c2.name])
        png, chans = cw[w2.name]
        self.assertTrue(is_png(png))
        self.assertEqual(len(chans), 8)
        peaks = [np.abs(c).max() for c in chans]
        self.assertEqual(int(np.argmax(peaks)), 0)  # the outlier channel
        self.assertGreater(peaks[0], 50 * max(peaks[1:]))
        png, chans = cw[c2.name]
        self.assertEqual(len(chans), 8)  # axis 1 of the activation
        self.assertEqual(chans[0].size, 8 * 16 * 16)

    def test_sensitivity_analysis(self):
        d = os.path.join(self.tmp.name, "sa")
        res = dbg.sensitivity_analysis(MODEL, DATA, pick_threshold=0.99, data_num=2, save_dir=d)
        self.assertEqual(list(res)[:2], ["none", "conv2"])
        self.assertGreater(res["conv2"]["partial"], res["none"]["partial"] + 0.3)  # conv2 in float repairs it
        self.assertTrue(is_png(os.path.join(d, "sensitivity_analysis.png")))

    def run_cli(self, *args):
        return subprocess.run([os.path.join(BIN, "hmct-debugger")] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def test_command_line(self):
        r = self.run_cli("get-sensitivity-of-nodes", MODEL, DATA, "-m", "[cosine-similarity,mse]", "-v", "True")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split()[0] for line in r.stderr.splitlines() + r.stdout.splitlines()
                if line.split() and line.split()[0] in ("conv1", "relu1", "conv2", "conv3")]
        self.assertEqual(rows[0], "conv2")
        d = os.path.join(self.tmp.name, "cli")
        r = self.run_cli("plot-acc-error", MODEL, DATA, "-q", "[['conv2'],['conv1','conv2']]", "-s", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(is_png(os.path.join(d, "plot_acc_error.png")))
        r = self.run_cli("runall", MODEL, DATA, "-s", os.path.join(d, "all"), "-dn", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = os.listdir(os.path.join(d, "all"))
        for f in ("sensitivity_of_weight.txt", "sensitivity_of_activation.txt", "plot_acc_error.png",
                  "sensitivity_analysis.png"):
            self.assertIn(f, names)
        self.assertTrue(any(n.startswith("channelwise_") for n in names))
        self.assertTrue(any(n.startswith("distribution_") for n in names))
        r = self.run_cli("plot-distribution", MODEL, DATA, "-n", "[nope]")
        self.assertEqual(r.returncode, 1)
        self.assertIn("'nope' is not a node", r.stderr)
        r = self.run_cli("get-sensitivity-of-nodes", MODEL, DATA, "-m", "cos")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown metric 'cos'", r.stderr)


if __name__ == "__main__":
    unittest.main()
