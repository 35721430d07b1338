# SPDX-License-Identifier: Apache-2.0
"""RemoteSession: a model run on a board's hrt_server from the host
(docs/hrt_server.md). The .bin or .hbm is uploaded once (the server keeps
files by content); infer() sends numpy arrays and returns the outputs as
Model.infer() does, computed by the board's libdnn (a .hbm: its UCP
runtime); perf() runs hrt_model_exec perf there.

    sess = openbpu.RemoteSession("board:9000", "~/.hrt_token", "model_output/x.bin")
    scores = sess.infer([image], dequantize=True)[0]
"""
import os
import re

import numpy as np

from ._openbpu import RemoteClient


class RemoteError(RuntimeError):
    """hrt_model_exec failed on the server: exit code, console output."""

    def __init__(self, exit_code, stdout, stderr):
        super().__init__("remote hrt_model_exec failed (exit code %d): %s" % (exit_code, stderr.strip()))
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr


class RemoteSession:
    def __init__(self, remote, token_file, model_file, model_name=None, timeout_s=60):
        from . import load_model
        self.client = RemoteClient(remote, os.path.expanduser(token_file), timeout_s)
        self.model_file = model_file
        self.model_sha = self.client.upload_file(model_file)
        # Sent with every run: the server keeps the extension, so a .hbm runs
        # on hrt_model_exec_ucp as a local hrt_model_exec hands it over.
        self.model_file_name = os.path.basename(model_file)
        # The tensor properties come from the same model file loaded here.
        self.local = load_model(model_file, model_name)
        self.model_name = self.local.name
        self.inputs, self.outputs = self.local.inputs, self.local.outputs

    def device(self):
        """The server's versions and device: protocol, server_version, dnn_version, machine, system, cpus."""
        return self.client.info()

    def run(self, mode, options=None, input_files=(), profile=False, wait_s=900):
        """hrt_model_exec <mode> on the server with `options` ({name: value},
        not the file/path ones) and local `input_files` (uploaded). Returns
        {exit_code, stdout, stderr, files: [(kind, name, bytes)]}."""
        inputs = [(self.client.upload_file(f), os.path.basename(f)) for f in input_files]
        opts = [("model_name", self.model_name)] + [(k, _text(v)) for k, v in (options or {}).items()]
        return self.client.run(mode, opts, [self.model_sha], inputs, profile, wait_s, [self.model_file_name])

    def infer(self, inputs, dequantize=False, core_id=0):
        """One inference on the board: inputs as for Model.infer (list, dict
        or one array); returns the valid output data (float32 with
        dequantize=True), equal to Model.infer on the same .bin."""
        if isinstance(inputs, dict):
            arrays = [inputs[p.name] for p in self.inputs]
        elif isinstance(inputs, np.ndarray):
            arrays = [inputs]
        else:
            arrays = list(inputs)
        if len(arrays) != len(self.inputs):
            raise ValueError("model '%s' has %d input(s), %d given" % (self.model_name, len(self.inputs), len(arrays)))
        names = []
        for p, a in zip(self.inputs, arrays):
            a = np.ascontiguousarray(a)
            if a.nbytes != p.tight_byte_size:
                raise ValueError("input '%s': %d bytes given, %d expected" % (p.name, a.nbytes, p.tight_byte_size))
            names.append((self.client.upload_bytes(a.tobytes()), "%s.bin" % _safe(p.name)))
        opts = [("model_name", self.model_name), ("core_id", str(core_id)), ("enable_dump", "true"),
                ("hybrid_dequantize_process" if dequantize else "remove_padding_process", "true")]
        res = self.client.run("infer", opts, [self.model_sha], names, False, 900, [self.model_file_name])
        if res["exit_code"] != 0:
            raise RemoteError(res["exit_code"], res["stdout"], res["stderr"])
        dumps = {}
        for kind, name, data in res["files"]:
            m = re.match(r"model_infer_output_(\d+)_", name)
            if kind == "dump" and m:
                dumps[int(m.group(1))] = data
        out = []
        for i, p in enumerate(self.outputs):
            if i not in dumps:
                raise RuntimeError("the server returned no dump of output %d '%s'" % (i, p.name))
            dtype = np.float32 if dequantize else p.dtype
            out.append(np.frombuffer(dumps[i], dtype=dtype).reshape(p.valid_shape).copy())
        return out

    def perf(self, frame_count=200, thread_num=1, profile=False, **options):
        """hrt_model_exec perf on the board; returns {'frames', 'average_latency_ms',
        'fps', 'stdout', 'files'} (files: profiler.log/.csv with profile=True)."""
        opts = dict(options, frame_count=frame_count, thread_num=thread_num)
        res = self.run("perf", opts, profile=profile,
                       wait_s=900 + 60 * int(options.get("perf_time", 0)))
        if res["exit_code"] != 0:
            raise RemoteError(res["exit_code"], res["stdout"], res["stderr"])
        text = res["stdout"]

        def number(pattern):
            m = re.search(pattern, text)
            return float(m.group(1)) if m else None
        return {"frames": number(r"Frame count   is: (\d+)"), "average_latency_ms": number(r"Average    latency    is: ([\d.]+)"),
                "fps": number(r"Frame      rate       is: ([\d.]+)"), "stdout": text, "files": res["files"]}

    def model_info(self):
        res = self.run("model_info")
        if res["exit_code"] != 0:
            raise RemoteError(res["exit_code"], res["stdout"], res["stderr"])
        return res["stdout"]


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "input"
