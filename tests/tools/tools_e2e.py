#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The model tools on converted real models, checked against independent data.

Cases (each a ctest test):
  info_pack  hb_model_info on the PP-OCR classifier and torchvision resnet18
             (.bin files of the converter e2e tests) against the yaml they were
             built from and their ONNX models; hb_pack of both, hb_model_info -m
             on the packed file, and hrt_model_exec infer of each packed model
             against the unpacked .bin's outputs (bit for bit); hb_pack's
             refusals.
  timing     MobileNetV1 converted for bernoulli2 with an NV12 input: the
             estimates of the timing model against the RDK X3 board figures of
             the reference documents (docs/timing.md).

usage: tools_e2e.py CASE --work DIR --bin BUILD_BIN_DIR --e2e CONVERTER_E2E_DIR
Run with Debian's /usr/bin/python3 (numpy, onnx, yaml).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print("FAIL: " + msg)
    return cond


def run(cmd, cwd=None, expect=0):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if expect is not None and r.returncode != expect:
        print(r.stdout)
        raise SystemExit("%s exited with %d (expected %d)" % (" ".join(cmd), r.returncode, expect))
    return r


def messages(text):
    """Console lines without the "YYYY-mm-dd HH:MM:SS,ms LEVEL " prefix."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\w+) (.*)$", line)
        out.append((m.group(1), m.group(2)) if m else ("", line))
    return out


def info_fields(text):
    """hb_model_info's "key : value" lines as a dict (first occurrence)."""
    d = {}
    for _, msg in messages(text):
        m = re.match(r"^([A-Za-z_&\- ]+?) *: (.*)$", msg)
        if m and m.group(1) not in d:
            d[m.group(1)] = m.group(2)
    return d


def info_pack(args):
    import onnx
    import yaml
    work = args.work
    tool = lambda name: os.path.join(args.bin, name)
    cases = ["ppocr_cls_nv12", "resnet18_nv12"]
    bins, infos = {}, {}
    for case in cases:
        e2e = os.path.join(args.e2e, case)
        bins[case] = os.path.join(e2e, "model_output", case + ".bin")
        cfg = yaml.safe_load(open(os.path.join(e2e, "config.yaml")))
        r = run([tool("hb_model_info"), bins[case]], cwd=work)
        infos[case] = [m for _, m in messages(r.stdout)]
        f = info_fields(r.stdout)
        mp, ip, cp = cfg["model_parameters"], cfg["input_parameters"], cfg["calibration_parameters"]
        # The yaml echo against the yaml itself.
        expect = {"onnx_model": mp["onnx_model"], "BPU march": mp["march"], "working dir": mp["working_dir"],
                  "output_model_file_prefix": mp["output_model_file_prefix"], "input_name": ip["input_name"],
                  "input_type_rt": ip["input_type_rt"], "input_type_train": ip["input_type_train"],
                  "input_layout_train": ip["input_layout_train"], "norm_type": ip["norm_type"],
                  "input_shape": ip["input_shape"], "calibration_type": cp["calibration_type"],
                  "cal_data_dir": cp["cal_data_dir"], "cal_data_type": cp["cal_data_type"]}
        for k, v in expect.items():
            check(f.get(k) == str(v), "%s: hb_model_info %s = %r, the yaml says %r" % (case, k, f.get(k), v))
        for k in ("mean_value", "scale_value"):
            got = [float(x) for x in f.get(k, "").split(",") if x]
            want = [float(x) for x in str(ip[k]).split()]
            check(np.allclose(got, want, rtol=1e-6), "%s: %s %s != yaml %s" % (case, k, got, want))
        # Types: the runtime input type of the yaml; the ONNX model's float outputs.
        check(f.get("model input types") == "[<InputDataType.NV12: 7>]",
              "%s: input types %s" % (case, f.get("model input types")))
        n_out = len(onnx.load(mp["onnx_model"], load_external_data=False).graph.output)
        check(f.get("model output types") == "[" + ", ".join(["<InputDataType.F32: 5>"] * n_out) + "]",
              "%s: output types %s" % (case, f.get("model output types")))
        check(any(m.startswith("hb_mapper version") for m in infos[case]), case + ": no deps info")

    # hb_pack, then every model of the packed file.
    packed = os.path.join(work, "packed.bin")
    r = run([tool("hb_pack"), bins[cases[0]], bins[cases[1]], "-o", packed], cwd=work)
    check("pack models succeed!" in r.stdout, "hb_pack did not report success")
    r = run([tool("hb_model_info"), packed], cwd=work)
    for case in cases:
        check(("*" * 5 + " " + case + " ") in r.stdout or (" " + case + " *") in r.stdout,
              "packed hb_model_info lacks the banner of " + case)
        r1 = run([tool("hb_model_info"), packed, "-m", case + ".bin"], cwd=work)
        lines = [m for _, m in messages(r1.stdout) if not m.startswith("This is a packed model")]
        check(lines == infos[case], "hb_model_info -m %s on the packed file differs from the single file" % case)
    r = run([tool("hb_model_info"), packed, "-m", "nope"], cwd=work, expect=1)
    check("model 'nope' not found in this bin model" in r.stdout, "hb_model_info -m nope: no clear error")
    for case in cases:
        e2e = os.path.join(args.e2e, case)
        first_input = open(os.path.join(e2e, "rt.txt")).readline().split()[0]
        d = os.path.join(work, "dump_" + case)
        os.makedirs(d)
        run([tool("hrt_model_exec"), "infer", "--model_file=" + packed, "--model_name=" + case,
             "--input_file=" + first_input, "--enable_dump=true", "--dump_path=" + d], cwd=work)
        outs = sorted(x for x in os.listdir(d) if x.startswith("model_infer_output_"))
        check(len(outs) > 0, case + ": hrt_model_exec wrote no output dump")
        for o in outs:
            name = re.match(r"model_infer_output_\d+_(.*)\.bin$", o).group(1)
            got = np.fromfile(os.path.join(d, o), dtype=np.float32)
            want = np.fromfile(os.path.join(e2e, "bin", "0_%s.bin" % name), dtype=np.float32)
            check(got.shape == want.shape and np.array_equal(got, want),
                  "%s output %s from the packed file differs from the single file" % (case, name))
    # Refusals.
    r = run([tool("hb_pack"), packed, bins[cases[0]], "-o", os.path.join(work, "again.bin")], cwd=work, expect=1)
    check("is a packed model, it can not be packed again!" in r.stdout, "packing a packed file: no refusal")
    r = run([tool("hb_pack"), bins[cases[0]], bins[cases[0]], "-o", os.path.join(work, "twice.bin")], cwd=work,
            expect=1)
    check("model name must be different" in r.stdout, "packing a model twice: no refusal")
    check(not os.path.exists(os.path.join(work, "again.bin")) and not os.path.exists(os.path.join(work, "twice.bin")),
          "a refused hb_pack left an output file")


# RDK X3 MobileNetV1 224x224 nv12 profile (reference documents, hrt_model_exec
# perf): BPU subgraph average and whole-model average latency, ms.
BOARD_BPU_MS, BOARD_MODEL_MS = 3.42556, 4.003106


def timing(args):
    work = args.work
    model = os.path.join(args.e2e, "models", "mobilenet_v1.onnx")
    yaml_path = os.path.join(work, "mobilenet_v1.yaml")
    with open(yaml_path, "w") as f:
        f.write("model_parameters:\n  onnx_model: '%s'\n  march: 'bernoulli2'\n"
                "  output_model_file_prefix: 'mobilenetv1_224x224_nv12'\n  working_dir: '%s'\n"
                "input_parameters:\n  input_type_rt: 'nv12'\n  input_type_train: 'bgr'\n"
                "  input_layout_train: 'NCHW'\n  norm_type: 'data_mean_and_scale'\n"
                "  mean_value: '103.94 116.78 123.68'\n  scale_value: '0.017'\n"
                "calibration_parameters:\n  calibration_type: 'skip'\n"
                "compiler_parameters:\n  optimize_level: 'O3'\n" % (model, os.path.join(work, "model_output")))
    r = run([os.path.join(args.bin, "hb_mapper"), "makertbin", "-c", yaml_path, "--model-type", "onnx"], cwd=work)
    lat = [float(m.group(1)) for m in re.finditer(r"_subgraph_\d+: FPS=[\d.]+, latency = ([\d.]+) us", r.stdout)]
    check(len(lat) == 1, "MobileNetV1 should compile to one BPU subgraph, the log shows %d" % len(lat))
    binf = os.path.join(work, "model_output", "mobilenetv1_224x224_nv12.bin")
    run([os.path.join(args.bin, "hb_model_info"), binf], cwd=work)
    m = re.search(r"estimated latency (\d+) us", open(os.path.join(work, "hb_model_info.log")).read())
    whole = int(m.group(1)) / 1000.0 if m else 0.0
    bpu = lat[0] / 1000.0 if lat else 0.0
    for what, est, board in (("BPU subgraph", bpu, BOARD_BPU_MS), ("whole model", whole, BOARD_MODEL_MS)):
        err = (est - board) / board
        print("%s: estimate %.3f ms, RDK X3 %.3f ms, error %+.1f%%" % (what, est, board, 100 * err))
        check(abs(err) <= 0.03, "%s estimate %.3f ms is more than 3%% from the board's %.3f ms" % (what, est, board))


CASES = {"info_pack": info_pack, "timing": timing}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--e2e", required=True, help="the converter e2e tests' work directory")
    args = ap.parse_args()
    args.work = os.path.join(os.path.abspath(args.work), args.case)
    args.bin, args.e2e = os.path.abspath(args.bin), os.path.abspath(args.e2e)
    if os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    CASES[args.case](args)
    print("%s: %s" % (args.case, "FAILED (%d)" % len(FAILURES) if FAILURES else "passed"))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
