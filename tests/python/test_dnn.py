#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The libdnn binding against hrt_model_exec: the same model and input give
the same bytes as `hrt_model_exec infer` dumps (raw aligned, padding
removed, dequantized); quantize/dequantize against numpy's formula; errors.
The same for .hbm models (the UCP generation, hb_compile), in the same
process as .bin models."""
import os
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import openbpu
from common import BIN, calibration_samples, hbm_file, model_file


def hrt_dump(model, inputs, *flags):
    """Runs hrt_model_exec infer with --enable_dump; returns the output dump bytes."""
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, a in enumerate(inputs):
            files.append(os.path.join(d, "in%d.bin" % i))
            np.ascontiguousarray(a).tofile(files[-1])
        out = os.path.join(d, "dump")
        r = subprocess.run([os.path.join(BIN, "hrt_model_exec"), "infer", "--model_file=" + model,
                            "--input_file=" + ",".join(files), "--enable_dump", "--dump_path=" + out] + list(flags),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise AssertionError("hrt_model_exec failed:\n" + r.stdout)
        dumps = sorted(f for f in os.listdir(out) if f.startswith("model_infer_output_"))
        blobs = []
        for f in dumps:
            with open(os.path.join(out, f), "rb") as fh:
                blobs.append(fh.read())
        return blobs


def three_outputs_equal_dumps(test, m, path, x):
    """The one-input model's output raw (aligned), valid and dequantized equal
    hrt_model_exec's dumps without flags, with --remove_padding_process and
    with --hybrid_dequantize_process; returns (aligned, valid)."""
    aligned = m.infer([x], aligned=True)[0]
    valid = m.infer({m.inputs[0].name: x})[0]
    floats = m.infer(x, dequantize=True)[0]
    test.assertEqual(aligned.tobytes(), hrt_dump(path, [x])[0])
    test.assertEqual(valid.tobytes(), hrt_dump(path, [x], "--remove_padding_process")[0])
    test.assertEqual(floats.tobytes(), hrt_dump(path, [x], "--hybrid_dequantize_process")[0])
    return aligned, valid


def check_threads(test, m, xs, ref, runs, priority_step):
    """4 Python threads, `runs` inferences each at priorities 0, step, 2*step,
    3*step: every output equals the single-threaded reference."""
    results, errors = {}, []

    def worker(t):
        try:
            for k in range(runs):
                i = (t + k) % len(xs)
                results[(t, k)] = np.array_equal(m.infer([xs[i]], priority=t * priority_step)[0], ref[i])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    test.assertEqual(errors, [])
    test.assertEqual(len(results), 4 * runs)
    test.assertTrue(all(results.values()))


def round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


class DnnBinding(unittest.TestCase):
    def test_int_output_equals_hrt_model_exec_dumps(self):
        path = model_file("sensitive_int")
        m = openbpu.load_model(path)
        self.assertEqual(m.outputs[0].quanti_type, "SCALE")
        self.assertNotEqual(m.outputs[0].valid_shape, m.outputs[0].aligned_shape)  # padded channels
        x = calibration_samples("sensitive_int", "input")[0]
        aligned, valid = three_outputs_equal_dumps(self, m, path, x)
        self.assertEqual(valid.shape, m.outputs[0].valid_shape)
        self.assertTrue(np.array_equal(aligned.reshape(m.outputs[0].aligned_shape)[..., :4], valid))

    def test_image_input_equals_hrt_model_exec_dumps(self):
        path = model_file("image")
        m = openbpu.load_model(path)
        self.assertEqual(m.inputs[0].tensor_type, "HB_DNN_IMG_TYPE_BGR")
        self.assertEqual(m.inputs[0].layout, "HB_DNN_LAYOUT_NHWC")
        img = calibration_samples("image", "image")[0]  # int8 "_128" NCHW
        bgr = np.ascontiguousarray((img.astype(np.int16) + 128).astype(np.uint8).transpose(0, 2, 3, 1))
        out = m.infer([bgr])[0]
        self.assertEqual(out.dtype, np.float32)
        self.assertEqual(out.tobytes(), hrt_dump(path, [bgr])[0])

    def test_quantize_dequantize_follow_the_tensor(self):
        m = openbpu.load_model(model_file("sensitive_int"))
        p = m.outputs[0]
        q = m.infer([calibration_samples("sensitive_int", "input")[1]])[0]
        scales = np.array(p.scale, np.float64)
        f = openbpu.dequantize(q, p)
        self.assertTrue(np.array_equal(f, (q.astype(np.float64) * scales).astype(np.float32)))
        x = np.random.default_rng(5).normal(0, 3, p.valid_shape).astype(np.float32)
        x[0, 0, 0, :] = [0.5 * p.scale[0], -2.5 * p.scale[1], 1e12, -1e12]  # ties round away; saturation
        want = np.clip(round_half_away(x.astype(np.float64) / scales), -2**31, 2**31 - 1).astype(np.int32)
        got = openbpu.quantize(x, p)
        self.assertEqual(got.dtype, np.int32)
        self.assertTrue(np.array_equal(got, want))
        self.assertEqual(got[0, 0, 0, 0], 1)
        self.assertEqual(got[0, 0, 0, 1], -3)
        with self.assertRaisesRegex(RuntimeError, "not quantized|no quantization"):
            openbpu.quantize(x, m.inputs[0])

    def test_priorities_cores_and_threads_give_the_same_result(self):
        m = openbpu.load_model(model_file("sensitive"))
        self.assertEqual(m.march, "bernoulli2")
        self.assertEqual(m.bpu_core_num, 2)
        xs = calibration_samples("sensitive", "input")
        ref = [m.infer([x])[0] for x in xs]
        for core in (0, 1, 2):
            for prio in (0, 100, 255):
                self.assertTrue(np.array_equal(m.infer([xs[0]], priority=prio, core_id=core)[0], ref[0]))
        check_threads(self, m, xs, ref, runs=10, priority_step=30)

    def test_errors_name_the_problem(self):
        m = openbpu.load_model(model_file("sensitive"))
        x = calibration_samples("sensitive", "input")[0]
        with self.assertRaisesRegex(RuntimeError, "input 'input': dtype float64 given.*F32"):
            m.infer([x.astype(np.float64)])
        with self.assertRaisesRegex(RuntimeError, "input .input.: 1536 bytes given.*takes 3072"):
            m.infer([x[:, :, :8]])
        with self.assertRaisesRegex(RuntimeError, r"priority 256 is outside \[0, 255\]"):
            m.infer([x], priority=256)
        with self.assertRaisesRegex(RuntimeError, "core_id 3"):
            m.infer([x], core_id=3)
        with self.assertRaisesRegex(RuntimeError, "has 1 input"):
            m.infer([x, x])
        with self.assertRaisesRegex(RuntimeError, "no data for input 'input'"):
            m.infer({"other": x})
        with self.assertRaisesRegex(RuntimeError, "cannot load 'missing.bin'"):
            openbpu.load("missing.bin")
        with tempfile.NamedTemporaryFile(suffix=".bin") as bad:
            bad.write(b"not a model" * 10)
            bad.flush()
            with self.assertRaisesRegex(RuntimeError, "cannot load"):
                openbpu.load(bad.name)
        with self.assertRaisesRegex(ValueError, "holds"):
            pack = openbpu.load(model_file("sensitive"), model_file("image"))
            self.assertEqual(sorted(pack.model_names), ["image", "sensitive"])
            openbpu.load_model([model_file("sensitive"), model_file("image")])


class HbmBinding(unittest.TestCase):
    """.hbm models (hb_compile, nash-e) through the UCP generation's libdnn."""

    def test_int_output_equals_hrt_model_exec_dumps(self):
        path = hbm_file("sensitive_int_hbm")
        m = openbpu.load_model(path)
        self.assertEqual((m.march, m.bpu_core_num), ("nash-e", 1))
        p = m.outputs[0]
        self.assertEqual((p.tensor_type, p.quanti_type, p.quantize_axis), ("HB_DNN_TENSOR_TYPE_S32", "SCALE", 3))
        self.assertIsNone(p.aligned_shape)  # gen B: validShape and byte strides only
        self.assertIsNone(p.layout)
        self.assertGreater(p.aligned_byte_size, p.tight_byte_size)  # padded rows
        x = calibration_samples("sensitive_int_hbm", "input")[0]
        aligned, valid = three_outputs_equal_dumps(self, m, path, x)
        self.assertEqual(valid.shape, p.valid_shape)
        strided = np.lib.stride_tricks.as_strided(aligned, p.valid_shape, p.stride)
        self.assertTrue(np.array_equal(strided, valid))
        # per-axis SCALE along the channel axis (3)
        self.assertTrue(np.array_equal(openbpu.dequantize(valid, p),
                                       (valid.astype(np.float64) * np.array(p.scale)).astype(np.float32)))
        self.assertTrue(np.array_equal(openbpu.quantize(openbpu.dequantize(valid, p), p), valid))

    def test_nv12_planes_equal_hrt_model_exec_dumps(self):
        path = hbm_file("image_nv12_hbm")
        m = openbpu.load_model(path)
        self.assertEqual([i.name for i in m.inputs], ["image_y", "image_uv"])
        self.assertEqual([i.valid_shape for i in m.inputs], [(1, 32, 32, 1), (1, 16, 16, 2)])
        self.assertEqual(m.inputs[0].stride[:2], [-1, -1])  # the caller's row pitch
        rng = np.random.default_rng(7)
        y = rng.integers(0, 256, (1, 32, 32, 1), dtype=np.uint8)
        uv = rng.integers(0, 256, (1, 16, 16, 2), dtype=np.uint8)
        out = m.infer([y, uv])[0]
        self.assertEqual(out.dtype, np.float32)
        self.assertEqual(out.tobytes(), hrt_dump(path, [y, uv])[0])
        self.assertEqual(m.infer({"image_uv": uv, "image_y": y})[0].tobytes(), out.tobytes())

    def test_both_generations_in_one_process(self):
        # Both libdnn.so are libdnn.so.0: the .hbm module must not reach the
        # 1.x library loaded first (which refuses .hbm files).
        bin_model = openbpu.load_model(model_file("sensitive_int"))
        hbm_model = openbpu.load_model(hbm_file("sensitive_int_hbm"))
        x = calibration_samples("sensitive_int", "input")[2]
        a = bin_model.infer([x], dequantize=True)[0]
        b = hbm_model.infer([x], dequantize=True)[0]
        self.assertEqual(a.shape, b.shape)
        self.assertTrue(np.array_equal(a, b))  # same converter pipeline, same numerics
        self.assertTrue(openbpu.native(True).dnn_version().startswith("3."))
        self.assertTrue(openbpu.dnn_version().startswith("1."))

    def test_priorities_cores_and_threads(self):
        m = openbpu.load_model(hbm_file("sensitive_int_hbm"))
        xs = calibration_samples("sensitive_int_hbm", "input")
        ref = [m.infer([x])[0] for x in xs]
        for core in (0, 1):
            for prio in (0, 128, 255):
                self.assertTrue(np.array_equal(m.infer([xs[1]], priority=prio, core_id=core)[0], ref[1]))
        with self.assertRaisesRegex(RuntimeError, "core_id 2.*1 BPU core"):
            m.infer([xs[0]], core_id=2)
        check_threads(self, m, xs, ref, runs=8, priority_step=60)

    def test_errors_name_the_problem(self):
        m = openbpu.load_model(hbm_file("image_nv12_hbm"))
        y = np.zeros((1, 32, 32, 1), np.uint8)
        with self.assertRaisesRegex(RuntimeError, "input 'image_uv': 1024 bytes given.*takes 512"):
            m.infer([y, y])
        with self.assertRaisesRegex(RuntimeError, "input 'image_y': dtype int8 given.*U8"):
            m.infer([y.astype(np.int8), y[:, :16, :16].reshape(1, 16, 16, 1).repeat(2, 3)])
        with self.assertRaisesRegex(ValueError, "load them separately"):
            openbpu.load(model_file("image"), hbm_file("image_nv12_hbm"))
        with self.assertRaisesRegex(RuntimeError, "cannot load .*Incompatible model: another generation"):
            openbpu.native(True).PackedModel([model_file("image")])  # a .bin through the UCP runtime
        with self.assertRaisesRegex(RuntimeError, "cannot load 'missing.hbm'"):
            openbpu.load("missing.hbm")


if __name__ == "__main__":
    unittest.main()
