#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: build, produce a model and measure it with
# `hrt_model_exec perf` on the simulated BPU.
# Until the converter (hb_mapper) lands, the model is MobileNetV1 224x224 nv12
# with random weights, built by the model writer (openbpu_testgen).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build.sh"
OUT="$ROOT/build/main_job"
mkdir -p "$OUT"
"$ROOT/build/bin/openbpu_testgen" "$OUT"
"$ROOT/build/bin/hrt_model_exec" model_info --model_file="$OUT/mobilenetv1_224x224_nv12.bin"
cd "$OUT"
"$ROOT/build/bin/hrt_model_exec" perf --model_file="$OUT/mobilenetv1_224x224_nv12.bin" \
  --frame_count="${FRAMES:-20}" --thread_num=1 --profile_path="$OUT"
