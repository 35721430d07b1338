#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""RemoteSession against an hrt_server on loopback: the board's outputs
equal Model.infer's locally (valid and dequantized), perf and model_info
come back, device and versions are reported; the same for .hbm models (run
by the server's hrt_model_exec_ucp)."""
import os
import signal
import subprocess
import tempfile
import time
import unittest

import numpy as np

import openbpu
from common import BIN, calibration_samples, hbm_file, model_file


class Remote(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.token = os.path.join(d, "token")
        fd = os.open(cls.token, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b"python-remote-test-token-0123\n")
        os.close(fd)
        port_file = os.path.join(d, "port")
        cls.server = subprocess.Popen([os.path.join(BIN, "hrt_server"), "--port=0", "--bind=127.0.0.1",
                                       "--token_file=" + cls.token, "--cache_dir=" + os.path.join(d, "cache"),
                                       "--port_file=" + port_file], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().endswith("\n"):
                break
            time.sleep(0.05)
        with open(port_file) as f:
            cls.addr = "127.0.0.1:%s" % f.read().strip()

    @classmethod
    def tearDownClass(cls):
        cls.server.send_signal(signal.SIGTERM)
        _, err = cls.server.communicate(timeout=60)
        cls.tmp.cleanup()
        assert cls.server.returncode == 0, err

    def test_infer_equals_local(self):
        path = model_file("sensitive_int")
        sess = openbpu.RemoteSession(self.addr, self.token, path)
        local = openbpu.load_model(path)
        for x in calibration_samples("sensitive_int", "input")[:3]:
            got = sess.infer([x])[0]
            want = local.infer([x])[0]
            self.assertEqual(got.dtype, np.int32)
            self.assertEqual(got.tobytes(), want.tobytes())
            self.assertEqual(sess.infer({"input": x}, dequantize=True)[0].tobytes(),
                             local.infer([x], dequantize=True)[0].tobytes())
        with self.assertRaisesRegex(ValueError, "bytes given"):
            sess.infer([x[:, :1]])

    def test_hbm_infer_perf_equal_local(self):
        path = hbm_file("sensitive_int_hbm")
        sess = openbpu.RemoteSession(self.addr, self.token, path)
        local = openbpu.load_model(path)
        for x in calibration_samples("sensitive_int_hbm", "input")[:2]:
            got = sess.infer([x])[0]
            self.assertEqual(got.dtype, np.int32)
            self.assertEqual(got.tobytes(), local.infer([x])[0].tobytes())
            self.assertEqual(sess.infer(x, dequantize=True)[0].tobytes(), local.infer([x], dequantize=True)[0].tobytes())
        p = sess.perf(frame_count=6, thread_num=2)
        self.assertEqual(p["frames"], 6)
        self.assertIn("[UCP]: UCP version", p["stdout"])  # the UCP tool ran it
        info = sess.model_info()
        self.assertIn("sensitive_int_hbm", info)
        self.assertNotIn("aligned shape", info)  # gen-B model_info
        nv12 = hbm_file("image_nv12_hbm")
        sess = openbpu.RemoteSession(self.addr, self.token, nv12)
        rng = np.random.default_rng(3)
        planes = [rng.integers(0, 256, p.valid_shape, dtype=np.uint8) for p in sess.inputs]
        self.assertEqual(sess.infer(planes)[0].tobytes(), openbpu.load_model(nv12).infer(planes)[0].tobytes())

    def test_perf_model_info_device(self):
        sess = openbpu.RemoteSession(self.addr, self.token, model_file("image"))
        p = sess.perf(frame_count=10, thread_num=2, profile=True)
        self.assertEqual(p["frames"], 10)
        self.assertGreater(p["fps"], 0)
        self.assertIn("profiler.log", [name for kind, name, _ in p["files"] if kind == "profile"])
        self.assertIn("[model name]: image", sess.model_info())
        dev = sess.device()
        self.assertEqual(dev["dnn_version"], openbpu.dnn_version())
        self.assertEqual(dev["protocol"], 1)
        res = sess.run("infer", {"frame_count": 1})  # no input file: the board's hrt_model_exec refuses
        self.assertEqual(res["exit_code"], 1)
        self.assertIn("input_file", res["stderr"])

    def test_bad_token(self):
        bad = os.path.join(self.tmp.name, "bad")
        fd = os.open(bad, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b"another-token-0123456789\n")
        os.close(fd)
        with self.assertRaisesRegex(RuntimeError, "access token refused"):
            openbpu.RemoteSession(self.addr, bad, model_file("image"))


if __name__ == "__main__":
    unittest.main()
