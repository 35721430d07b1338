#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Byte identity of the converter's .bin outputs.

The records in bin_digests.txt are the sha256 of the .bin files that the
e2e conversions (e2e.py, every case) and the main job (scripts/main_job.sh:
examples/ppocr_cls/config.yaml on 50 rendered lines) produced with the main
branch before the converter refactor of issue 8 ("one home per fact"); a
refactor must give the same bytes. The .bin holds absolute paths (model,
calibration data, working directory) in its metadata and config echo, so each
file is first rewritten by openbpu_bin_canonical with those directories
replaced by fixed tokens; everything else is compared byte for byte.

Regenerating the records. A change that alters quantization or code
generation on purpose (a new calibration rule, a new BPU operator placement,
a schema field written into every model...) changes these bytes. Such a
change must regenerate the records in the same commit and say why in the
commit message:
    OPENBPU_RECORD_BIN_DIGESTS=1 ctest --test-dir build -R 'converter_e2e|bin_identity'
rewrites the lines of every case that runs (check `git diff` that only the
cases you expected changed).

usage (the main job case):
    bin_identity.py main_job --work DIR --bin BUILD_BIN_DIR --ocr-models DIR --src SRC
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "bin_digests.txt")


def digest(bin_dir, binf, substitutions):
    """sha256 of the canonical form of a .bin (paths replaced by tokens)."""
    canon = binf + ".canonical"
    subs = ["%s=%s" % (p, t) for p, t in sorted(substitutions.items(), key=lambda kv: -len(kv[0]))]
    subprocess.run([os.path.join(bin_dir, "openbpu_bin_canonical"), binf, canon] + subs, check=True)
    with open(canon, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()
    os.remove(canon)
    return h


def _read_records():
    rec = {}
    if os.path.isfile(RECORDS):
        for line in open(RECORDS):
            line = line.strip()
            if line and not line.startswith("#"):
                name, h = line.split()
                rec[name] = h
    return rec


def _record(name, h):
    with open(RECORDS + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        header = [l for l in open(RECORDS) if l.startswith("#")] if os.path.isfile(RECORDS) else []
        rec = _read_records()
        rec[name] = h
        with open(RECORDS, "w") as f:
            f.writelines(header)
            for k in sorted(rec):
                f.write("%s %s\n" % (k, rec[k]))
    os.remove(RECORDS + ".lock")


def check(name, bin_dir, binf, substitutions):
    """Returns a failure message, or None when the .bin matches its record
    (or was recorded because OPENBPU_RECORD_BIN_DIGESTS is set)."""
    h = digest(bin_dir, binf, substitutions)
    if os.environ.get("OPENBPU_RECORD_BIN_DIGESTS"):
        _record(name, h)
        print("recorded .bin digest of %s: %s" % (name, h))
        return None
    want = _read_records().get(name)
    if want is None:
        return "no recorded .bin digest for %s in %s" % (name, RECORDS)
    if h != want:
        return (".bin of %s is not byte-identical to the record (%s, recorded %s); if the change alters "
                "quantization or code generation on purpose, regenerate the records (see bin_identity.py)"
                % (name, h, want))
    print(".bin of %s is byte-identical to the record" % name)
    return None


def main_job(args):
    """scripts/main_job.sh's conversion, as it runs it."""
    work = os.path.join(args.work, "main_job")
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "calibration_data"))
    subprocess.run([os.path.join(args.bin, "openbpu_render_text"), "--out", os.path.join(work, "calibration_data"),
                    "--count", "50", "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(args.src, "examples", "ppocr_cls", "config.yaml"), os.path.join(work, "config.yaml"))
    os.symlink(os.path.join(args.ocr_models, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
               os.path.join(work, "ch_ppocr_mobile_v2.0_cls_infer.onnx"))
    r = subprocess.run([os.path.join(args.bin, "hb_mapper"), "makertbin", "--config", "config.yaml",
                        "--model-type", "onnx"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout)
        return 1
    err = check("main_job", args.bin, os.path.join(work, "model_output", "ppocr_cls.bin"), {work: "@WORK@"})
    if err:
        print("FAIL: " + err)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["main_job"])
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ocr-models", required=True)
    ap.add_argument("--src", required=True)
    args = ap.parse_args()
    for k in ("work", "bin", "ocr_models", "src"):
        setattr(args, k, os.path.abspath(getattr(args, k)))
    return main_job(args)


if __name__ == "__main__":
    sys.exit(main())
