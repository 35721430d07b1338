#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-model latency: OpenBPU's simulator (hrt_model_exec perf) against the
int8 and float CPU runtimes people use, in one run on the same machine.

Models: torchvision mobilenet_v2 and resnet18 (224x224) and the small
detector-like net (128x128) of tests/converter/models/export_models.py, with
random weights (no download): exported to ONNX, converted with
`hb_mapper makertbin --fast-perf --march bernoulli2`, then measured with

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
Peak RSS of every hrt_model_exec perf run is reported (wait4 rusage).

usage: compare.py --build-dir BUILD [--work-dir DIR] [--models a,b] [--runs N]
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
MODELS = {"mobilenet_v2": 224, "resnet18": 224, "detector": 128}


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


def prepare(args):
    onnx_dir = os.path.join(args.work_dir, "onnx")
    bin_dir = os.path.join(args.work_dir, "model_output")
    if not all(os.path.exists(os.path.join(onnx_dir, m + ".onnx")) for m in args.models):
        log("exporting ONNX models ...")
        export = os.path.join(ROOT, "tests/converter/models/export_models.py")
        run_child([sys.executable, export, onnx_dir])
    hb_mapper = os.path.join(args.build_dir, "bin", "hb_mapper")
    for m in args.models:
        if os.path.exists(os.path.join(bin_dir, m + ".bin")):
            continue
        log("converting %s with hb_mapper ..." % m)
        cmd = [hb_mapper, "makertbin", "--fast-perf", "--model", os.path.join(onnx_dir, m + ".onnx"),
               "--model-type", "onnx", "--march", "bernoulli2"]
        p = subprocess.run(cmd, cwd=args.work_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("hb_mapper failed on %s:\n%s" % (m, p.stdout.decode()[-3000:]))
    return onnx_dir, bin_dir


def ours(args, bin_path, sim_threads, thread_num):
    exe = os.path.join(args.build_dir, "bin", "hrt_model_exec")
    env = dict(os.environ, OPENBPU_SIM_THREADS=str(sim_threads))
    frames = args.runs * thread_num
    out, ru, hwm = run_child([exe, "perf", "--model_file", bin_path, "--frame_count", str(frames),
                         "--thread_num", str(thread_num)], env)
    avg = float(re.search(r"Average\s+latency\s+is:\s*([0-9.]+)", out).group(1))
    fps = float(re.search(r"Frame\s+rate\s+is:\s*([0-9.]+)", out).group(1))
    mins = [float(v) for v in re.findall(r"thread min latency:\s*([0-9.]+)", out)]
    return {"min_ms": min(mins) if mins else avg, "median_ms": avg, "per_frame_ms": 1000.0 / fps,
            "cpu_ms": (ru.ru_utime + ru.ru_stime) * 1000.0 / frames, "rss_mb": hwm / 1024.0}


def load_detector():
    path = os.path.join(ROOT, "tests/converter/models/export_models.py")
    spec = importlib.util.spec_from_file_location("export_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Detector()


def torch_model(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "detector":
        return load_detector().eval()
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


def torch_runs(args, name, size):
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    res = {}
    engines = torch.backends.quantized.supported_engines
    engine = next((e for e in ("onednn", "x86", "fbgemm") if e in engines), None)
    x = torch.randn(1, 3, size, size)
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
        m = prepare_fx(torch_model(name), qmap, example_inputs=(x,))
        with torch.no_grad():
            for _ in range(4):
                m(torch.randn(1, 3, size, size))
        q = convert_fx(m)
        best = None
        for fmt in (torch.contiguous_format, torch.channels_last):
            xx = x.contiguous(memory_format=fmt)
            r1 = time_torch(q, xx, 1, args.runs)
            if best is None or r1["min_ms"] < best[0]["min_ms"]:
                best = (r1, time_torch(q, xx, 2, args.runs))
        res["torch int8 (%s)" % engine] = best
    return res


def ort_runs(args, onnx_path, size):
    runner = os.path.join(ROOT, "bench/compare/ort_runner.js")
    env = dict(os.environ, OPENBPU_COMPARE_SHAPE=json.dumps([1, 3, size, size]))
    out = []
    for threads in (1, 2):
        cmd = ["node", runner, args.ort_dir, onnx_path, str(threads), str(args.runs)]
        o, _, _ = run_child(cmd, env)
        out.append(json.loads(o.strip().splitlines()[-1]))
    return tuple(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default="/tmp/openbpu_compare")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ort-dir",
                    default=os.path.join(ROOT, "third_party/npm/node_modules/onnxruntime-node"))
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    os.makedirs(args.work_dir, exist_ok=True)
    onnx_dir, bin_dir = prepare(args)

    results = {}
    for name in args.models:
        size = MODELS[name]
        binp = os.path.join(bin_dir, name + ".bin")
        log("measuring %s ..." % name)
        r = {}
        r["ours"] = (ours(args, binp, 1, 1), ours(args, binp, 2, 1))
        r["ours 2 jobs"] = ours(args, binp, 1, 2)
        r.update(torch_runs(args, name, size))
        try:
            r["ort fp32"] = ort_runs(args, os.path.join(onnx_dir, name + ".onnx"), size)
        except Exception as e:  # onnxruntime-node missing: say so, keep the rest
            log("onnxruntime-node: %s" % e)
        results[name] = r

    print("\nLatency in ms (min over %d runs; median and CPU ms per inference in brackets)"
          % args.runs)
    print("'ratio' = ours (1 thread) / theirs (1 thread): below 1 means ours is faster\n")
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
            if not k.startswith("ours"):
                print("%-13s %-22s %-30s %-30s %.2f"
                      % ("", k, cell(v[0]), cell(v[1]), o1["min_ms"] / v[0]["min_ms"]))
        print("%-13s peak RSS of hrt_model_exec perf: %.1f MB (1 thread), %.1f MB (2 threads), "
              "%.1f MB (2 jobs)" % ("", o1["rss_mb"], o2["rss_mb"], j["rss_mb"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
