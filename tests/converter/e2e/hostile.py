#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""hb_mapper on hostile input (issue 15, findings 8-11): malformed node
attributes, external data pointing anywhere, output paths leaving
working_dir, absurd sizes. Each case must end with a non-zero exit code (no
signal, no hang), an ERROR line naming the problem, nothing written outside
working_dir and the previous good run's files untouched.

usage: hostile.py --work DIR --bin BUILD_BIN_DIR [-k NAME_REGEX]
Run with Debian's /usr/bin/python3 (onnx, numpy).
"""
import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from errors import GOOD_YAML

SKIP = "  calibration_type: 'skip'"
FIVE = ["m_original_float_model.onnx", "m_optimized_float_model.onnx", "m_calibrated_model.onnx",
        "m_quantized_model.onnx", "m.bin"]


def save(nodes, path, inits=(), in_shape=(1, 3, 32, 32), in_name="input", out_name="y", external=None):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(in_name, TensorProto.FLOAT, list(in_shape))],
                          [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    if external is not None:
        m.graph.initializer[0].ClearField("raw_data")
        m.graph.initializer[0].data_location = TensorProto.EXTERNAL
        for k, v in external.items():
            e = m.graph.initializer[0].external_data.add()
            e.key, e.value = k, v
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def weight(name="w"):
    return numpy_helper.from_array(np.full((4, 3, 3, 3), 0.1, np.float32), name)


def conv(**attrs):
    attrs.setdefault("pads", [1] * 4)
    return helper.make_node("Conv", ["input", "w"], ["y"], name="conv0", **attrs)


def pool(op, **attrs):
    return helper.make_node(op, ["input"], ["y"], name="pool0", **attrs)


def chain(n):
    """A chain of n Relu nodes."""
    nodes = [helper.make_node("Relu", ["input" if i == 0 else "r%d" % i], ["y" if i == n - 1 else "r%d" % (i + 1)])
             for i in range(n)]
    return nodes


def digest(d):
    out = {}
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        p = os.path.join(d, f)
        if os.path.isfile(p):
            with open(p, "rb") as fh:
                out[f] = hashlib.sha256(fh.read()).hexdigest()
        else:
            out[f] = "dir"
    return out


class Runner:
    def __init__(self, hb, work):
        self.hb, self.work, self.failures = hb, work, 0

    def run(self, yaml, timeout=60):
        with open(os.path.join(self.work, "c.yaml"), "w") as f:
            f.write(yaml)
        t0 = time.time()
        try:
            r = subprocess.run([self.hb, "makertbin", "--config", "c.yaml", "--model-type", "onnx"], cwd=self.work,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
            return r.returncode, r.stdout.decode("utf-8", "replace"), time.time() - t0
        except subprocess.TimeoutExpired as e:
            return "timeout", (e.stdout or b"").decode("utf-8", "replace"), time.time() - t0

    def check(self, name, ok, why, log=""):
        print("%-44s %s" % (name, "ok" if ok else "FAIL: " + why))
        if ok and log:
            print("    " + next((l.split(" ERROR ", 1)[1] for l in log.splitlines() if " ERROR " in l), ""))
        if not ok:
            self.failures += 1
            print("\n".join(log.splitlines()[-15:]))

    def expect_error(self, name, yaml, pattern, seconds=60, forbid=None):
        """A non-zero exit within `seconds`, an ERROR line matching pattern,
        out/ unchanged (holding the good run's files) and nothing else new."""
        before = digest(os.path.join(self.work, "out"))
        top = set(os.listdir(self.work))
        rc, log, secs = self.run(yaml, timeout=max(seconds, 5))
        errors = [l for l in log.splitlines() if " ERROR " in l]
        after = digest(os.path.join(self.work, "out"))
        new_top = set(os.listdir(self.work)) - top
        why = []
        if rc == "timeout" or (isinstance(rc, int) and rc < 0):
            why.append("ended by %s" % (rc if rc == "timeout" else "signal %d" % -rc))
        elif rc == 0:
            why.append("exit 0")
        if not any(re.search(pattern, l) for l in errors):
            why.append("no ERROR matching /%s/ (%s)" % (pattern, errors[:1]))
        if forbid and re.search(forbid, log):
            why.append("log matches /%s/" % forbid)
        if after != before:
            why.append("working_dir changed: %s -> %s" % (sorted(before), sorted(after)))
        if new_top - {"c.yaml", "hb_mapper_makertbin.log"}:
            why.append("new files beside the config: %s" % sorted(new_top))
        if secs > seconds:
            why.append("took %.1f s (> %d s)" % (secs, seconds))
        self.check(name, not why, "; ".join(why), log)


def yaml_for(model, cal=SKIP, shape="1x3x32x32", prefix="'m'", wd="'./out'", name="input"):
    y = GOOD_YAML.format(model=model, cal=cal).replace("1x3x32x32", shape)
    y = y.replace("output_model_file_prefix: 'm'", "output_model_file_prefix: " + prefix)
    y = y.replace("working_dir: './out'", "working_dir: " + wd)
    return y.replace("input_name: 'input'", "input_name: '%s'" % name)


def attribute_cases(r, w):
    """Finding 8: attributes the ONNX shape inference divides by or loops on."""
    cases = [
        ("conv strides 0", [conv(strides=[0, 1])], r"conv0.*Conv.*strides"),
        ("conv dilations -1", [conv(dilations=[1, -1])], r"conv0.*Conv.*dilations"),
        ("conv kernel_shape 0", [conv(kernel_shape=[0, 3])], r"conv0.*Conv.*kernel_shape"),
        ("conv pads -2", [conv(pads=[1, 1, -2, 1])], r"conv0.*Conv.*pads"),
        ("conv group 0", [conv(group=0)], r"conv0.*Conv.*group"),
        ("maxpool strides 0", [pool("MaxPool", kernel_shape=[2, 2], strides=[0, 0])], r"pool0.*MaxPool.*strides"),
        ("averagepool kernel_shape -1", [pool("AveragePool", kernel_shape=[-1, 2])], r"pool0.*AveragePool.*kernel_shape"),
        ("maxpool pads odd count", [pool("MaxPool", kernel_shape=[2, 2], pads=[0, 0, 0])], r"pool0.*MaxPool.*pads"),
        ("scan without body", [helper.make_node("Scan", ["input"], ["y"], name="scan0", num_scan_inputs=1)],
         r"scan0.*Scan.*body"),
        ("if without branches", [helper.make_node("If", ["input"], ["y"], name="if0")], r"if0.*If.*then_branch"),
        ("loop without body", [helper.make_node("Loop", ["", "", "input"], ["y"], name="loop0")], r"loop0.*Loop.*body"),
    ]
    for name, nodes, pattern in cases:
        save(nodes, os.path.join(w, "a.onnx"), [weight()])
        r.expect_error(name, yaml_for("a.onnx"), pattern)


def external_cases(r, w):
    """Finding 9: external data confined to the model's folder."""
    ext = os.path.join(w, "ext")
    os.makedirs(os.path.join(ext, "subdir"), exist_ok=True)
    with open(os.path.join(ext, "w.dat"), "wb") as f:
        f.write(np.full((4, 3, 3, 3), 0.1, np.float32).tobytes())
    os.symlink("/etc/passwd", os.path.join(ext, "passwd"))
    os.symlink("w.dat", os.path.join(ext, "inner_link"))
    os.mkfifo(os.path.join(ext, "fifo"))
    model = os.path.join(ext, "e.onnx")
    cases = [
        ("external data: a directory", {"location": "subdir"}, r"'w'.*subdir.*not a regular file"),
        ("external data: a FIFO", {"location": "fifo"}, r"'w'.*fifo.*not a regular file"),
        ("external data: symlink to /etc/passwd", {"location": "passwd"}, r"'w'.*passwd.*outside the model's folder"),
        ("external data: absolute path", {"location": "/etc/passwd"}, r"'w'.*outside the model's folder"),
        ("external data: offset 'abc'", {"location": "w.dat", "offset": "abc"}, r"'w'.*offset 'abc'"),
        ("external data: length > 2^63", {"location": "w.dat", "length": "99999999999999999999"}, r"'w'.*length"),
        ("external data: offset + length overflow",
         {"location": "w.dat", "offset": str(2 ** 62), "length": str(2 ** 62)}, r"'w'.*range"),
        ("external data: unknown key", {"location": "w.dat", "chunk": "1"}, r"'w'.*chunk"),
    ]
    for name, keys, pattern in cases:
        save([conv()], model, [weight()], external=keys)
        r.expect_error(name, yaml_for(model), pattern, forbid=r"root:|terminate called")
    # A symlink that stays inside the folder is fine.
    save([conv()], model, [weight()], external={"location": "inner_link"})
    rc, log, _ = r.run(yaml_for(model).replace("'./out'", "'./out_ext'"))
    r.check("external data: symlink inside the folder", rc == 0, "exit %s" % rc, log)
    shutil.rmtree(os.path.join(w, "out_ext"), ignore_errors=True)


def output_path_cases(r, w):
    """Finding 10: every output inside working_dir."""
    save([conv()], os.path.join(w, "a.onnx"), [weight()])
    r.expect_error("prefix '../x'", yaml_for("a.onnx", prefix="'../x'"), r"output_model_file_prefix.*'/'")
    r.expect_error("prefix 'sub/x'", yaml_for("a.onnx", prefix="'sub/x'"), r"output_model_file_prefix.*'/'")
    r.expect_error("prefix with NUL", yaml_for("a.onnx", prefix='"a\\0b"'), r"output_model_file_prefix.*NUL")
    # (with calibration data of the wrong size, so that a regression fails before converting into '/')
    os.makedirs(os.path.join(w, "cal_short"), exist_ok=True)
    with open(os.path.join(w, "cal_short", "a.bin"), "wb") as f:
        f.write(bytes(100))
    cal_short = "  cal_data_dir: './cal_short'\n  calibration_type: 'max'"
    r.expect_error("working_dir '/'", yaml_for("a.onnx", wd="'/'", cal=cal_short), r"working_dir.*'/'")
    r.expect_error("working_dir with NUL", yaml_for("a.onnx", wd='"out\\0x"'), r"working_dir.*NUL")
    # A run failing late (calibration data of the wrong size) keeps the good run's files.
    r.expect_error("failing run keeps the previous outputs", yaml_for("a.onnx", cal=cal_short), r"a\.bin")
    # A killed run: SIGKILL once it has saved its first model.
    before = digest(os.path.join(w, "out"))
    with open(os.path.join(w, "c.yaml"), "w") as f:
        f.write(yaml_for("a.onnx"))
    p = subprocess.Popen([r.hb, "makertbin", "--config", "c.yaml", "--model-type", "onnx"], cwd=w,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = False
    for line in p.stdout:
        if b"Saving model to" in line:
            seen = True
            p.send_signal(signal.SIGKILL)
            break
    p.wait()
    p.stdout.close()
    # (its staging folder .m.partial.<pid> stays until the next run)
    after = {k: v for k, v in digest(os.path.join(w, "out")).items() if not k.startswith(".m.partial.")}
    r.check("killed run leaves the previous outputs", seen and after == before,
            "saw a save: %s; %s -> %s" % (seen, sorted(before), sorted(after)))
    # The next good run replaces the outputs and clears the killed run's staging.
    rc, log, _ = r.run(yaml_for("a.onnx"))
    left = sorted(os.listdir(os.path.join(w, "out")))
    r.check("next good run cleans up", rc == 0 and left == sorted(FIVE), "exit %s, left %s" % (rc, left), log)


def size_cases(r, w):
    """Finding 11: sizes capped before the work they would cost."""
    save([conv()], os.path.join(w, "a.onnx"), [weight()])
    r.expect_error("input_shape 1x3x20000x20000", yaml_for("a.onnx", shape="1x3x20000x20000"),
                   r"input.*1x3x20000x20000|input.*1200000000", seconds=20)
    r.expect_error("input_shape overflowing int64", yaml_for("a.onnx", shape="1x3x4294967296x4294967296"),
                   r"input_shape|input", seconds=20, forbid=r"-\d{4,}")
    big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2 ** 31, 2 ** 31, 2 ** 31, 4])
    save([conv()], os.path.join(w, "b.onnx"), [big])
    r.expect_error("initializer dims overflowing int64", yaml_for("b.onnx"), r"'w'", seconds=20, forbid=r"-\d{4,}")
    save(chain(50000), os.path.join(w, "c.onnx"))
    r.expect_error("50,000-node chain", yaml_for("c.onnx"), r"50000 nodes", seconds=30)
    save([helper.make_node("Relu", ["in\0put"], ["y"])], os.path.join(w, "d.onnx"), in_name="in\0put")
    r.expect_error("input name with NUL", yaml_for("d.onnx", name="in"), r"NUL")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("-k", default="", help="run only the groups whose name matches")
    args = ap.parse_args()
    work = os.path.abspath(os.path.join(args.work, "hostile"))
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    r = Runner(os.path.join(os.path.abspath(args.bin), "hb_mapper"), work)
    # A good run first: every later case must leave its outputs untouched.
    save([conv()], os.path.join(work, "a.onnx"), [weight()])
    rc, log, secs = r.run(yaml_for("a.onnx"))
    r.check("good run (%.1f s)" % secs, rc == 0 and sorted(os.listdir(os.path.join(work, "out"))) == sorted(FIVE),
            "exit %s" % rc, log)
    for group in (attribute_cases, external_cases, output_path_cases, size_cases):
        if re.search(args.k, group.__name__):
            group(r, work)
    print("%d failure(s)" % r.failures)
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
