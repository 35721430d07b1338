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
  vec_diff   vec_diff on the ONNX Runtime and .bin output folders of the
             resnet18 e2e test: every CSV number against numpy, execution
             order, unmatched and uncomparable files, bad arguments.
  eval_preprocess  hb_eval_preprocess on photos: sizes, NV12 luma and BGR
             pixels against a numpy/skimage implementation of the recipes,
             the PP-OCR padding, val_txt order, errors.
  perf       hb_perf on resnet18: per-subgraph MACs and latency against the
             makertbin log, MACs against a count from the ONNX model's
             shapes, the HTML/JSON/PNG/SVG outputs, the Layer Details of a
             debug build (layers' MACs add up to the subgraph's, nodes of the
             optimized float model); -m on a packed file. (The warning of a
             model without records: timing, built with debug: False.)
  modifier   hb_model_modifier on resnet18: the candidates, removing the
             output Reshape and Dequantize, the model's new int32/int8 output
             through libdnn (hrt_model_exec, quanti type SCALE) dequantized
             back equals the original output bit for bit, hb_model_info's
             deleted nodes and deleted_nodes_info.txt, refusals.
  verifier   hb_verifier / hb_model_verifier on the PP-OCR classifier: its
             quantized ONNX model against its .bin (PASSED on an image and on
             random data), against the .bin of another conversion (FAILED,
             exit status 1, mismatch counts), refusals.
  layer_dump hrt_model_exec infer --dump_intermediate on the PP-OCR
             classifier: CPU operators and whole subgraphs against ONNX
             Runtime on the source model, every layer inside the BPU subgraph
             against ONNX Runtime on the optimized float model (cosine), the
             last layer against the .bin's output bit for bit; hb_mapper infer
             on the calibrated model writes the same names: vec_diff pairs
             every layer and its figures equal numpy's.
  layer_dump_hbm  the same for the UCP generation: the PP-OCR classifier's
             yaml (march nash-e) through hb_compile (.hbm) and hb_mapper
             (.bin); hrt_model_exec --dump_intermediate=3 on the .hbm (Y and
             UV planes of the same NV12 frame) writes the .bin's files, bit
             for bit, the layers inside the BPU subgraph against ONNX Runtime
             on the optimized float model.
  cli        --help and --version of every model tool.

usage: tools_e2e.py CASE --work DIR --bin BUILD_BIN_DIR --e2e CONVERTER_E2E_DIR
Run with Debian's /usr/bin/python3 (numpy, onnx, yaml).
"""
import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

FAILURES = []
SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


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
                "compiler_parameters:\n  optimize_level: 'O3'\n  debug: False\n" % (model, os.path.join(work, "model_output")))
    r = run([os.path.join(args.bin, "hb_mapper"), "makertbin", "-c", yaml_path, "--model-type", "onnx"], cwd=work)
    lat = [float(m.group(1)) for m in re.finditer(r"_subgraph_\d+: FPS=[\d.]+, latency = ([\d.]+) us", r.stdout)]
    check(len(lat) == 1, "MobileNetV1 should compile to one BPU subgraph, the log shows %d" % len(lat))
    binf = os.path.join(work, "model_output", "mobilenetv1_224x224_nv12.bin")
    run([os.path.join(args.bin, "hb_model_info"), binf], cwd=work)
    m = re.search(r"estimated latency (\d+) us", open(os.path.join(work, "hb_model_info.log")).read())
    whole = int(m.group(1)) / 1000.0 if m else 0.0
    bpu = lat[0] / 1000.0 if lat else 0.0
    # hb_perf reports the same model (when built: it needs Graphviz).
    if os.path.exists(os.path.join(args.bin, "hb_perf")):
        r = run([os.path.join(args.bin, "hb_perf"), binf], cwd=work)
        sm = list(hb_perf_json(work, "mobilenetv1_224x224_nv12").values())
        # Built with debug: False: no layer records, the vendor's warning.
        check("bpu model don't have per-layer perf info." in r.stdout and "compiler_parameters.debug:True" in r.stdout,
              "no per-layer warning for a model built with debug: False")
        check(all("layer details" not in s_ for s_ in sm), "layer details without debug records")
        check(len(sm) == 1 and abs(sm[0]["latency (ms)"] - bpu) < 1e-3, "hb_perf's subgraph latency differs from the log's")
        page = open(os.path.join(work, "hb_perf_result", "mobilenetv1_224x224_nv12", "mobilenetv1_224x224_nv12.html")).read()
        m = re.search(r"with the CPU operators \(ms\)</th><td>([\d.]+)<", page)
        check(m is not None and abs(float(m.group(1)) - whole) < 2e-3, "hb_perf's whole-model estimate differs from the file's")
    for what, est, board in (("BPU subgraph", bpu, BOARD_BPU_MS), ("whole model", whole, BOARD_MODEL_MS)):
        err = (est - board) / board
        print("%s: estimate %.3f ms, RDK X3 %.3f ms, error %+.1f%%" % (what, est, board, 100 * err))
        check(abs(err) <= 0.03, "%s estimate %.3f ms is more than 3%% from the board's %.3f ms" % (what, est, board))


def onnx_macs(path):
    """Multiply-accumulates of the Conv and Gemm/MatMul nodes of an ONNX model,
    from its inferred shapes."""
    import onnx
    from onnx import shape_inference, numpy_helper
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    inits = {i.name: numpy_helper.to_array(i).shape for i in m.graph.initializer}
    total = 0
    for n in m.graph.node:
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            total += int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
        elif n.op_type in ("Gemm", "MatMul") and n.input[1] in inits:
            w = inits[n.input[1]]
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            k = w[-2] if n.op_type == "MatMul" else (w[1] if trans_b else w[0])
            total += int(np.prod(shapes[n.output[0]])) * int(k)
    return total


def hb_perf_json(work, name):
    import json
    d = os.path.join(work, "hb_perf_result", name)
    return {f[:-5]: json.load(open(os.path.join(d, f)))["summary"] for f in os.listdir(d) if f.endswith(".json")}


def check_layer_details(name, sm, float_nodes):
    """Layer Details of a subgraph built with debug: True: the layers' MACs
    add up to the subgraph's (every MAC instruction belongs to a layer), their
    instruction ranges do not overlap, each names nodes of the optimized float
    model (the graph the compiler placed)."""
    layers = sm.get("layer details", [])
    if not check(len(layers) > 0, name + ": no layer details in a model built with debug: True"):
        return
    macs = sum(l["MACs"] for l in layers)
    print("%s: %d layers, %d MACs (subgraph %d)" % (name, len(layers), macs, sm["MACs per frame"]))
    check(macs == sm["MACs per frame"], "%s: layers' MACs %d, subgraph %d" % (name, macs, sm["MACs per frame"]))
    spans = sorted((l["first instruction"], l["instruction count"]) for l in layers)
    check(all(a[0] + a[1] <= b[0] for a, b in zip(spans, spans[1:])), name + ": overlapping layer instruction ranges")
    check(sum(l["latency (us)"] for l in layers) <= sm["latency (ms)"] * 1000 + 1e-6,
          name + ": layers take longer than their subgraph")
    # (A converter node such as HzPreprocess is written back to the float
    # model as standard operators named "<node>_<op>".)
    unknown = [n for l in layers for n in l["ONNX nodes"].split(";")
               if n not in float_nodes and not any(f.startswith(n + "_") for f in float_nodes)]
    check(not unknown, "%s: layer nodes not in the optimized float model: %s" % (name, unknown[:5]))


def perf(args):
    import yaml
    work = args.work
    case = "resnet18_nv12"
    e2e = os.path.join(args.e2e, case)
    binf = os.path.join(e2e, "model_output", case + ".bin")
    r = run([os.path.join(args.bin, "hb_perf"), binf], cwd=work)
    d = os.path.join(work, "hb_perf_result", case)
    for f in (case + ".html", case + ".png", case + ".svg", case):
        check(os.path.isfile(os.path.join(d, f)), "hb_perf wrote no " + f)
    check(open(os.path.join(d, case + ".png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n", "the picture is not a PNG")
    svg = open(os.path.join(d, case + ".svg")).read()
    check("darkcyan" in svg and "grey" in svg, "the SVG lacks the BPU (darkcyan) or CPU (grey) colours")
    check("per-layer perf info" not in r.stdout, "per-layer warning for a model built with debug: True")
    # Per subgraph against the makertbin log of the same conversion.
    log = open(os.path.join(e2e, "hb_mapper_makertbin.log")).read()
    logged = {m.group(1): (float(m.group(2)), int(m.group(3))) for m in
              re.finditer(r"(\S+_subgraph_\d+): FPS=[\d.]+, latency = ([\d.]+) us, MACs = (\d+)", log)}
    summaries = hb_perf_json(work, case)
    import onnx
    float_nodes = {n.name for n in onnx.load(
        os.path.join(e2e, "model_output", case + "_optimized_float_model.onnx")).graph.node}
    check(set(summaries) == set(logged), "subgraphs: hb_perf %s, makertbin log %s" % (sorted(summaries), sorted(logged)))
    total = 0
    for name, sm in summaries.items():
        us, macs = logged.get(name, (0, 0))
        check(sm["MACs per frame"] == macs, "%s: hb_perf %d MACs, makertbin log %d" % (name, sm["MACs per frame"], macs))
        check(sm["BPU OPs per frame (effective)"] == 2 * sm["MACs per frame"], name + ": OPs are not 2 x MACs")
        check(abs(sm["latency (ms)"] * 1000 - us) <= 0.1, "%s: hb_perf %.1f us, makertbin log %.1f us"
              % (name, sm["latency (ms)"] * 1000, us))
        check(sm["loaded bytes per frame"] > 0 and sm["stored bytes per frame"] > 0, name + ": no DDR traffic")
        total += sm["MACs per frame"]
        check_layer_details(name, sm, float_nodes)
    src = yaml.safe_load(open(os.path.join(e2e, "config.yaml")))["model_parameters"]["onnx_model"]
    ref = onnx_macs(src)
    print("resnet18: hb_perf %d MACs, ONNX Conv/Gemm %d MACs (%+.2f%%)" % (total, ref, 100.0 * (total - ref) / ref))
    check(ref <= total <= ref * 1.01, "hb_perf MACs %d vs %d from the ONNX shapes" % (total, ref))
    # A packed file: -m picks a model, the directory is the model's name.
    cls = os.path.join(args.e2e, "ppocr_cls_nv12", "model_output", "ppocr_cls_nv12.bin")
    packed = os.path.join(work, "packed.bin")
    run([os.path.join(args.bin, "hb_pack"), binf, cls, "-o", packed], cwd=work)
    run([os.path.join(args.bin, "hb_perf"), "-m", "ppocr_cls_nv12", packed], cwd=work)
    check(os.path.isfile(os.path.join(work, "hb_perf_result", "ppocr_cls_nv12", "ppocr_cls_nv12.html")),
          "hb_perf -m on a packed file wrote no page")
    r = run([os.path.join(args.bin, "hb_perf"), "-m", "nope", packed], cwd=work, expect=1)
    check("model 'nope' not found" in r.stdout, "hb_perf -m nope: no clear error")


def hrt_fields(text):
    """hrt_model_exec model_info's output blocks: name -> {key: value}."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(input|output)\[(\d+)\]: ?$", line)
        if m:
            cur = {}
            blocks["%s%s" % (m.group(1), m.group(2))] = cur
        elif cur is not None and ": " in line:
            k, v = line.split(": ", 1)
            cur[k] = v
    return blocks


def modifier(args):
    work = args.work
    case = "resnet18_nv12"
    e2e = os.path.join(args.e2e, case)
    binf = os.path.join(work, case + ".bin")
    shutil.copy(os.path.join(e2e, "model_output", case + ".bin"), binf)
    tool = os.path.join(args.bin, "hb_model_modifier")
    r = run([tool, binf], cwd=work)
    m = re.search(r"Nodes that can be deleted: \[(.*)\]", r.stdout)
    check(m is not None, "no candidate list")
    candidates = [x.strip(" '") for x in m.group(1).split(",")] if m else []
    print("candidates:", candidates)
    # The fc's (N, C, 1, 1) output is the model output: its Dequantize is the
    # only boundary node.
    check(len(candidates) == 1 and candidates[0].endswith("Dequantize"),
          "candidates %s, expected the output Dequantize" % candidates)
    r = run([tool, binf, "-a", "Dequantize"], cwd=work)
    check("modified model saved as" in r.stdout, "no modified model")
    removed = re.findall(r"Node '([^']+)' is removed", r.stdout)
    check(removed == candidates, "removed %s, expected %s" % (removed, candidates))
    modified = os.path.join(work, case + "_modified.bin")
    hrt = os.path.join(args.bin, "hrt_model_exec")
    before = hrt_fields(run([hrt, "model_info", "--model_file=" + binf], cwd=work).stdout)["output0"]
    after = hrt_fields(run([hrt, "model_info", "--model_file=" + modified], cwd=work).stdout)["output0"]
    check(before["tensor type"] == "HB_DNN_TENSOR_TYPE_F32", "original output type %s" % before["tensor type"])
    check(after["tensor type"] in ("HB_DNN_TENSOR_TYPE_S32", "HB_DNN_TENSOR_TYPE_S8"), "modified output type %s"
          % after["tensor type"])
    check(after["quanti type"] == "SCALE" and after.get("scale data"), "modified output has no SCALE / scale data")
    check(after["name"] == before["name"], "the output lost its name")
    # Through libdnn: the integer output dequantized by its scales is the original float output.
    first_input = open(os.path.join(e2e, "rt.txt")).readline().split()[0]
    d = os.path.join(work, "dump")
    run([hrt, "infer", "--model_file=" + modified, "--input_file=" + first_input, "--enable_dump=true",
         "--hybrid_dequantize_process=true", "--dump_path=" + d], cwd=work)
    got = np.fromfile(os.path.join(d, "model_infer_output_0_%s.bin" % after["name"]), np.float32)
    want = np.fromfile(os.path.join(e2e, "bin", "0_%s.bin" % before["name"]), np.float32)
    check(got.shape == want.shape and np.array_equal(got, want),
          "modified model's dequantized output differs from the original model's output")
    # hb_model_info: deleted nodes and their records.
    r = run([os.path.join(args.bin, "hb_model_info"), modified], cwd=work)
    shown = re.findall(r"deleted nodes: (\S+)", r.stdout)
    check(shown == removed, "hb_model_info deleted nodes %s, removed %s" % (shown, removed))
    info = open(os.path.join(work, "deleted_nodes_info.txt")).read()
    scales = [float(x) for x in after["scale data"].strip(",").split(",")]
    m = re.search(r"\(Dequantize\): scale: \[([^\]]*)\]", info)
    check(m is not None, "deleted_nodes_info.txt lacks the Dequantize scales")
    if m:
        rec = [float(x) for x in m.group(1).split(",")]
        check(np.allclose(rec, scales, rtol=1e-6), "recorded scales differ from the output's scale data")
    # Refusals: a packed file; a node in the middle of the model.
    packed = os.path.join(work, "packed.bin")
    run([os.path.join(args.bin, "hb_pack"), binf, "-o", packed], cwd=work)
    r = run([tool, packed, "-a", "Dequantize"], cwd=work, expect=1)
    check("Packed model is not supported" in r.stdout, "packed file not refused")
    r = run([tool, modified, "-r", "no_such_node"], cwd=work)
    check("is not removed" in r.stdout, "unknown node: no warning")
    # An input-side node (the featuremap model's input Quantize, the segment
    # before the BPU subgraph): the debug records follow their subgraph, the
    # model loads and dumps the same layers inside it.
    fm = os.path.join(work, "resnet18_featuremap.bin")
    shutil.copy(os.path.join(args.e2e, "resnet18_featuremap", "model_output", "resnet18_featuremap.bin"), fm)
    r = run([tool, fm, "-a", "Quantize"], cwd=work)
    check(re.findall(r"Node '([^']+)' is removed", r.stdout) == ["input_HzQuantize"], "input Quantize not removed")
    fm_mod = os.path.join(work, "resnet18_featuremap_modified.bin")
    x = np.random.RandomState(0).randint(-127, 128, 3 * 224 * 224).astype(np.int8)  # symmetric int8
    x.tofile(os.path.join(work, "fm_input.bin"))
    layers = {}
    for name, f in (("original", fm), ("modified", fm_mod)):
        d = os.path.join(work, "fm_dump_" + name)
        # The modified model takes the int8 NHWC data, the original the float
        # NCHW values its Quantize turns into the same data.
        inp = os.path.join(work, "fm_input.bin")
        if name == "original":
            scale = float(hrt_fields(run([hrt, "model_info", "--model_file=" + fm_mod], cwd=work).stdout)
                          ["input0"]["scale data"].strip(",").split(",")[0])
            inp = os.path.join(work, "fm_input_f32.bin")
            (x.reshape(1, 224, 224, 3).astype(np.float32) * scale).transpose(0, 3, 1, 2).tofile(inp)
        run([hrt, "infer", "--model_file=" + f, "--input_file=" + inp, "--dump_intermediate=3", "--dump_path=" + d],
            cwd=work)
        rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "intermediate", "layer_mapping.txt"))][1:]
        layers[name] = {r_[0]: np.fromfile(os.path.join(d, "intermediate", r_[0]), np.float32)
                        for r_ in rows if r_[2] == "BPU" and r_[5] != "0"}
    check(len(layers["modified"]) > 10 and sorted(layers["modified"]) == sorted(layers["original"]),
          "layers inside the subgraph: %d after removing the input Quantize, %d before"
          % (len(layers["modified"]), len(layers["original"])))
    check(all(np.array_equal(v, layers["original"].get(k)) for k, v in layers["modified"].items()),
          "a layer inside the subgraph differs after removing the input Quantize")


def verifier(args):
    work = args.work
    e2e = os.path.join(args.e2e, "ppocr_cls_nv12")
    quanti = os.path.join(e2e, "model_output", "ppocr_cls_nv12_quantized_model.onnx")
    binf = os.path.join(e2e, "model_output", "ppocr_cls_nv12.bin")
    png = os.path.join(e2e, "test_render", "00000.png")
    tool = os.path.join(args.bin, "hb_verifier")
    r = run([tool, "-m", quanti + "," + binf, "-i", png], cwd=work)
    check("Quanti.onnx and Sim result Strict check PASSED" in r.stdout, "image input: no PASSED line")
    r = run([tool, "-m", quanti + "," + binf], cwd=work)
    check("Strict check PASSED" in r.stdout, "random input: no PASSED line")
    # -r: every dumped layer that has a float value in the quantized model (here
    # the CPU operators and the last layer inside the BPU subgraph, whose value
    # its Dequantize makes float under the same name; the values inside the
    # subgraph and its integer output are not in the quantized model), then
    # the output.
    r = run([tool, "-m", quanti + "," + binf, "-i", png, "-r"], cwd=work)
    nodes = re.findall(r"compare source: Quanti.onnx VS Sim, node '([^']+)'", r.stdout)
    rows = [l.rstrip("\n").split("\t") for l in
            open(os.path.join(work, "verifier_output", "sim", "intermediate", "layer_mapping.txt"))][1:]
    cpu_tensors = {l[9] for l in rows if l[2] == "CPU"}
    check(nodes == [l[8] for l in rows if l[2] == "CPU" or l[9] in cpu_tensors] and len(nodes) >= 4,
          "-r compared %s, expected the layers of layer_mapping.txt with a float value" % nodes)
    check(r.stdout.count("Strict check PASSED") == len(nodes) + 1, "-r: not every layer and output PASSED")
    r = run([os.path.join(args.bin, "hb_model_verifier"), "-q", quanti, "-b", binf, "-i", png], cwd=work)
    check("Strict check PASSED" in r.stdout, "hb_model_verifier: no PASSED line")
    # Another conversion of the same network (int16, bayes-e) is not the same model.
    other = os.path.join(args.e2e, "ppocr_cls_nv12_int16", "model_output", "ppocr_cls_nv12_int16.bin")
    r = run([tool, "-m", quanti + "," + other, "-i", png], cwd=work, expect=1)
    check("Strict check FAILED" in r.stdout and re.search(r"mismatch line num: [1-9]", r.stdout),
          "a different .bin was not reported as a mismatch")
    r = run([tool, "-m", quanti + "," + other, "-i", png, "-r"], cwd=work, expect=1)
    check(re.search(r"node '[^']+' .*\n.*mismatch line num: [1-9]", r.stdout) is not None,
          "-r: no layer of a different .bin reported as a mismatch")
    packed = os.path.join(work, "packed.bin")
    run([os.path.join(args.bin, "hb_pack"), binf, "-o", packed], cwd=work)
    r = run([tool, "-m", quanti + "," + packed], cwd=work, expect=1)
    check("pack model is not supported" in r.stdout, "packed file not refused")
    # A board is an hrt_server (here on loopback, running the same simulator):
    # each result is compared with the others, the host executor's among them.
    with hrt_server(args.bin, work) as (addr, token):
        board = ["-b", addr, "--token_file", token]
        r = run([tool, "-m", quanti + "," + binf, "-i", png, "-s"] + board, cwd=work)
        for pair in ("Quanti.onnx and Sim", "Quanti.onnx and Arm", "Sim and Arm"):
            check(pair + " result Strict check PASSED" in r.stdout, "board run: no PASSED line for " + pair)
        r = run([tool, "-m", quanti + "," + binf] + board, cwd=work)
        check("Quanti.onnx and Arm result Strict check PASSED" in r.stdout and "VS Sim" not in r.stdout,
              "hb_verifier -b without -s: not Quanti.onnx against the board only")
        r = run([os.path.join(args.bin, "hb_model_verifier"), "-q", quanti, "-b", binf, "-i", png, "-a", addr,
                 "--token_file", token], cwd=work)
        check("Sim and Arm result Strict check PASSED" in r.stdout, "hb_model_verifier -a: no Sim VS Arm check")
        r = run([tool, "-m", quanti + "," + other, "-i", png] + board, cwd=work, expect=1)
        check("Quanti.onnx and Arm result Strict check FAILED" in r.stdout,
              "board: a different .bin was not reported as a mismatch")
        r = run([tool, "-m", quanti + "," + binf, "-b", addr], cwd=work, expect=1)
        check("--token_file is required" in r.stdout, "board without a token file")
        bad = os.path.join(work, "wrong_token")
        fd = os.open(bad, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, b"not-the-token-of-this-server\n")
        os.close(fd)
        r = run([tool, "-m", quanti + "," + binf, "-b", addr, "--token_file", bad], cwd=work, expect=1)
        check("failed on" in r.stdout and "on the board" in r.stdout, "a refused token was not an error")
    r = run([tool, "-m", quanti + "," + binf, "-b", "board", "--token_file", token], cwd=work, expect=1)
    check("give HOST:PORT" in r.stdout, "a board address without a port was accepted")


@contextlib.contextmanager
def hrt_server(bindir, work):
    """An hrt_server on loopback (the board of hb_verifier -b; its cache
    folder relative to its working folder): yields (HOST:PORT, token file);
    stops it and checks its clean exit."""
    d = os.path.join(work, "hrt_server")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    token = os.path.join(d, "token")
    fd = os.open(token, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"tools-e2e-verifier-token-0123\n")
    os.close(fd)
    port_file = os.path.join(d, "port")
    srv = subprocess.Popen([os.path.join(bindir, "hrt_server"), "--port=0", "--bind=127.0.0.1", "--token_file=" + token,
                            "--cache_dir=hrt_server/cache", "--port_file=" + port_file],
                           cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if os.path.exists(port_file) and open(port_file).read().endswith("\n"):
                break
            check(srv.poll() is None, "hrt_server exited at start")
            time.sleep(0.05)
        with open(port_file) as f:
            yield "127.0.0.1:" + f.read().strip(), token
    finally:
        srv.send_signal(signal.SIGTERM)
        _, err = srv.communicate(timeout=60)
    check(srv.returncode == 0, "hrt_server did not stop cleanly: " + err)


def read_csv(path):
    rows = [l.rstrip("\n").split(",") for l in open(path)]
    return rows[0], rows[1:]


def metrics(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    d = a - b
    return (float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))),
            float(np.linalg.norm(d) / np.linalg.norm(a)), float(np.abs(d).max()), float(np.mean(d * d)))


def check_rows(rows, left, right):
    """Each vec_diff CSV row against numpy's figures of its two files (9
    significant digits in the CSV); returns numpy's figures."""
    out = []
    for row in rows:
        want = metrics(np.fromfile(os.path.join(left, row[0]), np.float32),
                       np.fromfile(os.path.join(right, row[1]), np.float32))
        got = [float(x) for x in row[2:]]
        check(np.allclose(got, want, rtol=1e-6, atol=1e-12), "%s: vec_diff %s, numpy %s" % (row[0], got, want))
        out.append(want)
    return out


def vec_diff(args):
    work = args.work
    e2e = os.path.join(args.e2e, "resnet18_nv12")
    left, right = os.path.join(work, "ort"), os.path.join(work, "bin")
    shutil.copytree(os.path.join(e2e, "ort"), left)
    shutil.copytree(os.path.join(e2e, "bin"), right)
    names = sorted(os.listdir(left))
    # Execution order given by the left folder (reversed name order), an
    # unmatched file, a length mismatch and an all-zero vector.
    with open(os.path.join(left, "execution_order.txt"), "w") as f:
        f.write("\n".join(reversed(names)) + "\n")
    np.zeros(7, np.float32).tofile(os.path.join(left, "only_left.bin"))
    np.ones(5, np.float32).tofile(os.path.join(left, "short.bin"))
    np.ones(6, np.float32).tofile(os.path.join(right, "short.bin"))
    np.zeros(4, np.float32).tofile(os.path.join(left, "zero.bin"))
    np.ones(4, np.float32).tofile(os.path.join(right, "zero_float.bin"))  # pairs with zero.bin
    csv = os.path.join(work, "result.csv")
    r = run([os.path.join(args.bin, "vec_diff"), left, right, "-o", csv], cwd=work)
    header, rows = read_csv(csv)
    check(header == ["Left Files", "Right Files", "Cosine Similarity", "Relative Euclidean Distance",
                     "Max Absolute Error", "Mean Square Error"], "CSV header %s" % header)
    check([row[0] for row in rows] == list(reversed(names)), "rows not in execution order")
    check_rows(rows, left, right)
    log = r.stdout
    check("only in %s: only_left.bin" % left in log, "unmatched file not reported")
    check("short.bin vs short.bin: skipped, different lengths" in log, "length mismatch not reported")
    check("zero.bin vs zero_float.bin: skipped" in log and "all zeros" in log, "zero vector not reported")
    check(len(rows) == len(names), "skipped pairs appear in the CSV")
    # Two files; a file and a folder.
    r = run([os.path.join(args.bin, "vec_diff"), os.path.join(left, names[0]), os.path.join(right, names[0]),
             "-o", os.path.join(work, "one.csv")], cwd=work)
    _, rows1 = read_csv(os.path.join(work, "one.csv"))
    check(len(rows1) == 1 and rows1[0][2:] == [r_ for r_ in rows if r_[0] == names[0]][0][2:],
          "file mode differs from folder mode")
    r = run([os.path.join(args.bin, "vec_diff"), left, os.path.join(right, names[0])], cwd=work, expect=1)
    check("must be two files or two folders" in r.stdout, "file/folder mix: no clear error")


def skimage_photos(n):
    from skimage import data
    imgs = []
    for name in ["astronaut", "chelsea", "coffee", "rocket"][:n]:
        im = getattr(data, name)()
        imgs.append((name, im[..., :3]))
    return imgs


def ref_resize(img, h, w):
    """Bilinear resize with pixel-center alignment (OpenCV INTER_LINEAR's
    mapping), float result."""
    from skimage import transform
    return transform.resize(img.astype(np.float64), (h, w), order=1, mode="edge", anti_aliasing=False,
                            preserve_range=True)


def eval_preprocess(args):
    from skimage import io
    work = args.work
    imgs_dir = os.path.join(work, "images")
    os.makedirs(imgs_dir)
    photos = skimage_photos(4)
    for name, im in photos:
        io.imsave(os.path.join(imgs_dir, name + ".png"), im, check_contrast=False)
    tool = os.path.join(args.bin, "hb_eval_preprocess")
    out = os.path.join(work, "out_resnet18")
    run([tool, "-m", "resnet18", "-i", imgs_dir, "-o", out], cwd=work)
    info = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(os.path.join(out, "image_info.txt"))}
    for name, im in photos:
        f = os.path.join(out, name + ".bin")
        raw = np.fromfile(f, np.uint8)
        check(raw.size == 224 * 224 * 3 // 2, "%s: %d bytes, NV12 224x224 has %d" % (name, raw.size, 224 * 224 * 3 // 2))
        check(info.get(name + ".bin") == [im.shape[0], im.shape[1], 224, 224], "%s: image_info %s" % (name, info.get(name + ".bin")))
        # Reference: short side 256, center crop 224, BT.601 full-range luma.
        s = 256.0 / min(im.shape[:2])
        nh, nw = max(224, int(im.shape[0] * s + 0.5)), max(224, int(im.shape[1] * s + 0.5))
        ref = ref_resize(im, nh, nw)
        y0, x0 = (nh - 224) // 2, (nw - 224) // 2
        ref = ref[y0:y0 + 224, x0:x0 + 224]
        luma = 0.299 * ref[..., 0] + 0.587 * ref[..., 1] + 0.114 * ref[..., 2]
        got = raw[:224 * 224].reshape(224, 224).astype(np.float64)
        err = np.abs(got - luma).mean()
        print("%s: NV12 luma mean abs difference from the reference %.3f" % (name, err))
        check(err < 2.0, "%s: luma differs from the reference recipe by %.3f on average" % (name, err))
    # PP-OCR classifier: BGR 48x192, aspect kept, padding 128 on the right.
    out = os.path.join(work, "out_cls")
    with open(os.path.join(work, "val.txt"), "w") as f:
        f.write("rocket.png 1\nastronaut.png 0\n")
    run([tool, "-m", "ppocr_cls", "-i", imgs_dir, "-o", out, "-v", os.path.join(work, "val.txt")], cwd=work)
    order = [l.split()[0] for l in open(os.path.join(out, "image_info.txt"))]
    check(order == ["rocket.bin", "astronaut.bin"], "val_txt order not kept: %s" % order)
    for name, im in photos:
        if name not in ("rocket", "astronaut"):
            continue
        got = np.fromfile(os.path.join(out, name + ".bin"), np.uint8).reshape(48, 192, 3).astype(np.float64)
        w = min(192, int(np.ceil(im.shape[1] * 48.0 / im.shape[0])))
        check(np.all(got[:, w:, :] == 128), "%s: padding right of column %d is not 128" % (name, w))
        ref = ref_resize(im, 48, w)[..., ::-1]  # BGR
        err = np.abs(got[:, :w, :] - ref).mean()
        print("%s: ppocr_cls BGR mean abs difference from the reference %.3f" % (name, err))
        check(err < 2.0, "%s: ppocr_cls pixels differ from the reference by %.3f" % (name, err))
    r = run([tool, "-m", "nope", "-i", imgs_dir, "-o", out], cwd=work, expect=None)
    check(r.returncode != 0 and "nope" in r.stdout, "unknown model: no clear error")
    r = run([tool, "-m", "resnet18", "-i", os.path.join(work, "missing"), "-o", out], cwd=work, expect=1)
    check("is not a folder" in r.stdout, "missing image folder: no clear error")


def float_values(model_path, tensors, input_file, input_name, dims, out_dir, dtype="float32"):
    """ONNX Runtime's values of the given tensors of a float model (each made
    a graph output)."""
    import onnx
    m = onnx.load(model_path)
    have = {o.name for o in m.graph.output}
    for t in tensors:
        if t not in have:
            m.graph.output.append(onnx.helper.make_empty_tensor_value_info(t))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "float_with_outputs.onnx")
    onnx.save(m, path)
    run(["node", os.path.join(SRC, "tests", "common", "ort_run.js"), path, out_dir,
         "%s=%s:%s:%s" % (input_name, input_file, dtype, "x".join(map(str, dims)))])
    return {t: np.fromfile(os.path.join(out_dir, re.sub(r"[/\\:]", "_", t) + ".bin"), np.float32) for t in tensors}


def range_cosine(ref, got):
    """Cosine of a dumped layer with a reference clamped to the range the
    dump spans: a value read only by table lookups is quantized over the
    part of its range where they are not flat (a hard-swish input from -3
    on, docs/numerics.md "Asymmetric activations"), so the float values
    beyond it are not an error of the layer."""
    a = np.clip(ref, got.min(), got.max()) if got.size else ref
    return float(np.dot(a, got) / (np.linalg.norm(a) * np.linalg.norm(got) + 1e-30))


def check_inside_layers(inside, header, inter, optimized, i8_input, out_dir):
    """Each layer inside a BPU subgraph (level-3 dump in folder inter) against
    ONNX Runtime's value of the same tensor in the optimized float model (the
    graph the compiler placed; int8 input: the YUV444 of the same NV12 minus
    128)."""
    import onnx
    opt_in = onnx.load(optimized).graph.input[0]
    opt_dims = [d.dim_value for d in opt_in.type.tensor_type.shape.dim]
    ref = float_values(optimized, [l[header.index("tensor")] for l in inside], i8_input, opt_in.name, opt_dims,
                       out_dir, "int8")
    worst = 1.0
    for l in inside:
        a = ref[l[header.index("tensor")]]
        got = np.fromfile(os.path.join(inter, l[0]), np.float32)
        if not check(a.size == got.size, "%s: %d values, ONNX Runtime %d" % (l[0], got.size, a.size)):
            continue
        cos = range_cosine(a, got)
        worst = min(worst, cos)
        check(cos > 0.95, "%s: cosine %.4f with the optimized float model's %s" % (l[0], cos, l[header.index("tensor")]))
    print("%d layers inside the BPU subgraph against ONNX Runtime: lowest cosine %.5f" % (len(inside), worst))


def layer_dump(args):
    import onnx
    work = args.work
    case = "ppocr_cls_nv12"
    e2e = os.path.join(args.e2e, case)
    binf = os.path.join(e2e, "model_output", case + ".bin")
    rt_input = open(os.path.join(e2e, "rt.txt")).readline().split()[0]
    float_input = open(os.path.join(e2e, "float.txt")).readline().split()[0]
    d = os.path.join(work, "dump")
    run([os.path.join(args.bin, "hrt_model_exec"), "infer", "--model_file=" + binf, "--input_file=" + rt_input,
         "--dump_intermediate=3", "--dump_path=" + d, "--enable_dump=true"], cwd=work)
    inter = os.path.join(d, "intermediate")
    mapping = [l.rstrip("\n").split("\t") for l in open(os.path.join(inter, "layer_mapping.txt"))]
    header, layers = mapping[0], mapping[1:]
    order = [l.strip() for l in open(os.path.join(inter, "execution_order.txt"))]
    check([l[0] for l in layers] == order, "layer_mapping.txt and execution_order.txt disagree")
    check(any(l[header.index("on")] == "BPU" for l in layers), "no BPU layer dumped")
    check(any(l[header.index("on")] == "CPU" for l in layers), "no CPU layer dumped")
    # The last layer is the model output: bit for bit the .bin's output.
    outs = [f for f in os.listdir(d) if f.startswith("model_infer_output_")]
    for o in outs:
        got = np.fromfile(os.path.join(d, o), np.float32)
        last = np.fromfile(os.path.join(inter, order[-1]), np.float32)
        check(np.array_equal(got, last), "last dumped layer differs from the model output %s" % o)
    # Every dumped value whose ONNX tensor the float model has, against ONNX Runtime.
    import yaml
    src_path = yaml.safe_load(open(os.path.join(e2e, "config.yaml")))["model_parameters"]["onnx_model"]
    src = onnx.load(src_path)
    values = {o for n in src.graph.node for o in n.output}
    # (CPU operators and whole subgraphs: the values inside a subgraph are
    # those of the optimized graph, where e.g. a Conv's output already holds
    # its folded BatchNorm; they are checked below.)
    wanted = [l for l in layers if l[header.index("tensor")] in values and l[header.index("instruction_count")] == "0"]
    check(len(wanted) >= 2, "fewer than 2 dumped layers map to float model tensors")
    inp = src.graph.input[0]
    cfg = yaml.safe_load(open(os.path.join(e2e, "config.yaml")))
    dims = [int(v) for v in str(cfg["input_parameters"]["input_shape"]).split("x")]
    ref = float_values(src_path, [l[header.index("tensor")] for l in wanted], float_input, inp.name, dims,
                       os.path.join(work, "ort"))
    float_dir = os.path.join(work, "float_by_node")
    os.makedirs(float_dir)
    for l in wanted:
        t = l[header.index("tensor")]
        got = np.fromfile(os.path.join(inter, l[0]), np.float32)
        a = ref[t]
        if not check(a.size == got.size, "%s: %d values, ONNX Runtime %d" % (l[0], got.size, a.size)):
            continue
        cos = float(np.dot(a, got) / (np.linalg.norm(a) * np.linalg.norm(got) + 1e-30))
        print("%-40s %-4s cosine with the float model %.5f" % (l[0], l[header.index("on")], cos))
        check(cos > 0.95, "%s: cosine %.4f with the float model's %s" % (l[0], cos, t))
        a.tofile(os.path.join(float_dir, l[0]))
    # vec_diff over the two folders pairs them by name.
    csv = os.path.join(work, "vec_diff.csv")
    run([os.path.join(args.bin, "vec_diff"), float_dir, inter, "-o", csv], cwd=work)
    _, rows = read_csv(csv)
    check(len(rows) == len(wanted), "vec_diff compared %d pairs, %d expected" % (len(rows), len(wanted)))
    # Layers inside the BPU subgraph (debug records): instruction ranges.
    inside = [l for l in layers if l[header.index("on")] == "BPU" and int(l[header.index("instruction_count")]) > 0]
    check(len(inside) >= 3, "only %d layers inside the BPU subgraph dumped" % len(inside))
    optimized = os.path.join(e2e, "model_output", case + "_optimized_float_model.onnx")
    i8_input = open(os.path.join(e2e, "i8.txt")).readline().split()[0]
    check_inside_layers(inside, header, inter, optimized, i8_input, os.path.join(work, "ort_optimized"))
    # hb_mapper infer on the calibrated model writes its per-node outputs under
    # the same names: vec_diff pairs every layer inside the subgraph, with the
    # figures numpy computes from the two files.
    calibrated = os.path.join(e2e, "model_output", case + "_calibrated_model.onnx")
    cal_dir = os.path.join(work, "infer_calibrated")
    run([os.path.join(args.bin, "hb_mapper"), "infer", "-c", os.path.join(e2e, "config.yaml"), "--model-type", "onnx",
         "--model-file", calibrated, "--image-file", onnx.load(calibrated).graph.input[0].name, i8_input,
         "--output-dir", cal_dir], cwd=work)
    csv = os.path.join(work, "vec_diff_calibrated.csv")
    run([os.path.join(args.bin, "vec_diff"), cal_dir, inter, "-o", csv], cwd=work)
    _, rows = read_csv(csv)
    paired = {row[1] for row in rows}
    missing = [l[0] for l in inside if l[0] not in paired]
    check(not missing, "layers without a calibrated model file of the same name: %s" % missing[:5])
    node_order = [l.strip() for l in open(os.path.join(cal_dir, "execution_order.txt"))]
    check([row[0] for row in rows] == sorted([row[0] for row in rows], key=node_order.index),
          "vec_diff rows not in the order of the left folder's execution_order.txt")
    check_rows(rows, cal_dir, inter)
    for row in rows:
        cos = range_cosine(np.fromfile(os.path.join(cal_dir, row[0]), np.float32),
                           np.fromfile(os.path.join(inter, row[1]), np.float32))
        check(cos > 0.95, "%s: cosine %.4f between the calibrated model and the .bin" % (row[1], cos))
    print("vec_diff calibrated model vs .bin dump: %d layers paired, lowest cosine %.5f"
          % (len(rows), min(float(r_[2]) for r_ in rows) if rows else 0))


def read_mapping(inter):
    """layer_mapping.txt of a dump folder: header and rows (split at tabs)."""
    mapping = [l.rstrip("\n").split("\t") for l in open(os.path.join(inter, "layer_mapping.txt"))]
    return mapping[0], mapping[1:]


def layer_dump_hbm(args):
    import onnx
    work = args.work
    case = "ppocr_cls_nv12"
    e2e = os.path.join(args.e2e, case)
    with open(os.path.join(e2e, "config.yaml")) as f:
        text = re.sub(r"march: '[^']*'", "march: 'nash-e'", f.read())
    # One yaml, two tools: hb_compile's .hbm and hb_mapper's .bin of the same model.
    models = {}
    for kind, cmd in (("hbm", ["hb_compile", "--config", "config.yaml"]),
                      ("bin", ["hb_mapper", "makertbin", "--config", "config.yaml", "--model-type", "onnx"])):
        d = os.path.join(work, kind)
        os.makedirs(d)
        with open(os.path.join(d, "config.yaml"), "w") as f:
            f.write(re.sub(r"working_dir: '[^']*'", "working_dir: '%s'" % os.path.join(d, "model_output"), text))
        run([os.path.join(args.bin, cmd[0])] + cmd[1:], cwd=d)
        models[kind] = os.path.join(d, "model_output", case + "." + kind)
    rt_input = open(os.path.join(e2e, "rt.txt")).readline().split()[0]
    nv12 = np.fromfile(rt_input, np.uint8)
    y, uv = os.path.join(work, "y.bin"), os.path.join(work, "uv.bin")
    nv12[:nv12.size * 2 // 3].tofile(y)
    nv12[nv12.size * 2 // 3:].tofile(uv)
    dumps = {k: os.path.join(work, "dump_" + k) for k in models}
    run([os.path.join(args.bin, "hrt_model_exec"), "infer", "--model_file=" + models["bin"], "--input_file=" + rt_input,
         "--dump_intermediate=3", "--dump_path=" + dumps["bin"]], cwd=work)
    # (hrt_model_exec hands the .hbm to hrt_model_exec_ucp, the UCP build.)
    run([os.path.join(args.bin, "hrt_model_exec"), "infer", "--model_file=" + models["hbm"], "--input_file=%s,%s" % (y, uv),
         "--input_img_properties=Y,UV", "--dump_intermediate=3", "--dump_path=" + dumps["hbm"], "--enable_dump=true"],
        cwd=work)
    inter = {k: os.path.join(v, "intermediate") for k, v in dumps.items()}
    order = {k: [l.strip() for l in open(os.path.join(v, "execution_order.txt"))] for k, v in inter.items()}
    check(order["hbm"] == order["bin"], "the .hbm dump's layers differ from the .bin dump's: %s vs %s"
          % (order["hbm"][:5], order["bin"][:5]))
    # The same layers, values bit for bit (the .hbm describes BPU values by
    # strides in the ONNX order, the .bin by the NHWC layout: level 3 writes both in the ONNX order).
    (header, layers), (_, bin_layers) = read_mapping(inter["hbm"]), read_mapping(inter["bin"])
    same_cols = [header.index(c) for c in ("file", "op_type", "on", "segment", "first_instruction",
                                           "instruction_count", "data_type", "nodes", "tensor")]
    check([[l[i] for i in same_cols] for l in layers] == [[l[i] for i in same_cols] for l in bin_layers],
          "layer_mapping.txt of the .hbm and the .bin differ")
    differ = [f for f in order["hbm"] for ext in (".bin", ".txt")
              if open(os.path.join(inter["hbm"], f[:-4] + ext), "rb").read()
              != open(os.path.join(inter["bin"], f[:-4] + ext), "rb").read()]
    check(not differ, "%d of %d dumped files differ between the .hbm and the .bin: %s"
          % (len(differ), 2 * len(order["hbm"]), differ[:5]))
    inside = [l for l in layers if l[header.index("on")] == "BPU" and int(l[header.index("instruction_count")]) > 0]
    check(len(inside) >= 3, "only %d layers inside the .hbm's BPU subgraph dumped" % len(inside))
    print("%d files of the .hbm dump equal the .bin dump's (%d layers inside BPU subgraphs)"
          % (len(order["hbm"]), len(inside)))
    # The last layer is the model output.
    for o in (f for f in os.listdir(dumps["hbm"]) if f.startswith("model_infer_output_")):
        check(np.array_equal(np.fromfile(os.path.join(dumps["hbm"], o), np.float32),
                             np.fromfile(os.path.join(inter["hbm"], order["hbm"][-1]), np.float32)),
              "last dumped layer of the .hbm differs from its output %s" % o)
    optimized = os.path.join(work, "hbm", "model_output", case + "_optimized_float_model.onnx")
    i8_input = open(os.path.join(e2e, "i8.txt")).readline().split()[0]
    check(onnx.load(optimized).graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT8,
          "the optimized float model does not take the int8 input")
    check_inside_layers(inside, header, inter["hbm"], optimized, i8_input, os.path.join(work, "ort_optimized"))


TOOLS = ("hb_model_info", "hb_perf", "hb_pack", "hb_model_modifier", "vec_diff", "hb_verifier", "hb_model_verifier",
         "hb_eval_preprocess", "hb_mapper")


def cli(args):
    """--help and --version of every model tool: usage naming the tool, exit
    status 0; one version, the project's (CMakeLists.txt)."""
    want = re.search(r"project\(openbpu VERSION ([\d.]+)", open(os.path.join(SRC, "CMakeLists.txt")).read()).group(1)
    versions = set()
    for t in TOOLS:
        if not os.path.exists(os.path.join(args.bin, t)):
            continue  # hb_perf needs Graphviz
        h = run([os.path.join(args.bin, t), "--help"])
        check(re.search(r"^Usage: %s " % t, h.stdout, re.M) is not None, t + " --help: no usage line")
        v = run([os.path.join(args.bin, t), "--version"]).stdout.strip()
        check(v.endswith("openbpu" + want), "%s --version '%s' is not OpenBPU %s's" % (t, v, want))
        versions.add(v)
    check(len(versions) == 1, "the tools print different versions: %s" % sorted(versions))


CASES = {"cli": cli, "info_pack": info_pack, "timing": timing, "vec_diff": vec_diff, "eval_preprocess": eval_preprocess,
         "perf": perf, "modifier": modifier, "verifier": verifier, "layer_dump": layer_dump,
         "layer_dump_hbm": layer_dump_hbm}


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
