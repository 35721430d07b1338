#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# CLI tests of hrt_model_exec: run the binary, check exit codes, output lines
# and the files it writes. POSIX sh + grep/cmp/od only (no Python), so that
# it runs in board and cross (qemu) builds alike.
#
# usage: hrt_cli_test.sh <case> <hrt_model_exec> <testdata dir> <work dir>
#                        <png helper|none> <expected dir> [emulator command...]
# The emulator words (CMAKE_CROSSCOMPILING_EMULATOR) prefix every target
# binary; they must not contain spaces.
set -u
if [ $# -lt 6 ]; then
  echo "usage: $0 <case> <tool> <testdata> <workdir> <png helper|none> <expected dir>" \
    "[emulator...]" >&2
  exit 2
fi
CASE=$1 TOOL=$2 DATA=$3 WORK=$4 PNG_HELPER=$5 EXPECTED=$6
shift 6
EMU="$*"

rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 2
FAILS=0

fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
}

show() { sed 's/^/  | /' "$1" >&2; }

# run <ok|error> args...: runs the tool with stdout in out.txt, stderr in
# err.txt; checks success/failure and that it did not crash (signal).
run() {
  want=$1
  shift
  echo "\$ hrt_model_exec $*"
  # shellcheck disable=SC2086
  $EMU "$TOOL" "$@" >out.txt 2>err.txt
  rc=$?
  if [ $rc -ge 126 ]; then
    fail "crashed or not runnable (exit $rc): $*"
    show err.txt
  elif [ "$want" = ok ] && [ $rc -ne 0 ]; then
    fail "exit $rc, expected success: $*"
    show out.txt
    show err.txt
  elif [ "$want" = error ] && [ $rc -eq 0 ]; then
    fail "exit 0, expected an error: $*"
    show out.txt
  fi
}

# has <file> <extended regex>: some line matches.
has() {
  grep -Eq -- "$2" "$1" || {
    fail "no line of $1 matches /$2/"
    show "$1"
  }
}

# lacks <file> <extended regex>: no line matches.
lacks() {
  if grep -Eq -- "$2" "$1"; then
    fail "a line of $1 matches /$2/"
    show "$1"
  fi
}

# count <file> <extended regex> <n>: exactly n lines match.
count() {
  n=$(grep -Ec -- "$2" "$1")
  [ "$n" -eq "$3" ] || {
    fail "$n lines of $1 match /$2/, expected $3"
    show "$1"
  }
}

# same <a> <b>: byte-identical files.
same() {
  cmp "$1" "$2" || fail "$1 and $2 differ"
}

# One error line on stderr that names the problem, nothing on stdout but
# the banner lines.
error_is() {
  has err.txt "$1"
  count err.txt '.' 1
}

# Normalises the run-dependent lines of model_info output.
normalize() {
  sed -e 's/^\[DNN\] Runtime version = .*/[DNN] Runtime version = <version>/' \
      -e 's/^Load model to DDR cost [0-9.]*ms\.$/Load model to DDR cost <t>ms./' "$1"
}

NUM='[0-9]+\.[0-9]+'
PERF_SUMMARY_OK() {
  has out.txt '^Running condition:$'
  has out.txt "^  Thread number is: $1\$"
  has out.txt "^  Frame count   is: $2\$"
  has out.txt "^  Program run time: $NUM ms\$"
  has out.txt '^Perf result:$'
  has out.txt "^  Frame totally latency is: $NUM ms\$"
  has out.txt "^  Average    latency    is: $NUM ms\$"
  has out.txt "^  Frame      rate       is: $NUM FPS\$"
  lacks out.txt 'core number'
}

# A deterministic NV12 frame for the 32x32 classifier (any bytes will do).
nv12_frame() {
  head -c 1536 "$DATA/packed.bin" >"$1"
}

case "$CASE" in
usage)
  run error
  has out.txt '^Usage: hrt_model_exec <model_info\|infer\|perf>'
  for o in model_file model_name core_id input_file roi_infer roi frame_count dump_intermediate \
    enable_dump dump_precision hybrid_dequantize_process dump_format dump_txt_axis \
    enable_cls_post_process perf_time thread_num profile_path dump_path; do
    has out.txt "^  --$o "
  done
  has out.txt '^  --dump_precision +int32 +9 '
  has out.txt '^  --frame_count +int32 +1/200 '
  has out.txt '^  --dump_format +string +bin '
  run ok -h
  has out.txt '^Usage: hrt_model_exec'
  run ok perf --help
  has out.txt '^Usage: hrt_model_exec'
  ;;

version)
  run ok -v
  has out.txt '^\[DNN\] Runtime version = [0-9]+\.[0-9]+\.[0-9]+_\(.* HBRT\)$'
  count out.txt '.' 1
  run ok --version
  has out.txt '^\[DNN\] Runtime version = '
  ;;

model_info_tiny)
  run ok model_info --model_file="$DATA/tiny_cnn.bin"
  normalize out.txt >got.txt
  grep -v '^#' "$EXPECTED/model_info_tiny_cnn.txt" >want.txt
  diff -u want.txt got.txt || fail "model_info layout differs"
  ;;

model_info_packed)
  run ok model_info --model_file="$DATA/packed.bin"
  normalize out.txt >got.txt
  grep -v '^#' "$EXPECTED/model_info_packed.txt" >want.txt
  diff -u want.txt got.txt || fail "model_info layout differs"
  # --model_name prints one model; several files load together.
  run ok model_info --model_file="$DATA/packed.bin" --model_name=nv12_classifier
  count out.txt '^\[model name\]: ' 1
  has out.txt '^\[model name\]: nv12_classifier$'
  has out.txt '^tensor type: HB_DNN_IMG_TYPE_NV12$'
  has out.txt '^valid shape: \(1,10,1,1,\)$'
  run ok model_info --model_file="$DATA/tiny_cnn.bin,$DATA/nv12_classifier.bin"
  has out.txt '^This model file has 2 model:$'
  printf '[tiny_cnn]\t[nv12_classifier]\n' >names.txt
  grep -Fxq -f names.txt out.txt || fail "model name list line missing"
  count out.txt '^-{69}$' 3
  ;;

infer_tiny)
  # The float output, dumped after dequantization, equals the independently
  # computed expectation bit for bit.
  run ok infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --enable_dump --hybrid_dequantize_process
  count out.txt '^Infer time: [0-9]+\.[0-9]+ ms$' 1
  same model_infer_output_0_output.bin "$DATA/tiny_cnn_expected.bin"
  same model_infer_input_0_data.bin "$DATA/tiny_cnn_input.bin"
  # Raw dump (no dequantization needed: F32 output without padding).
  mkdir raw
  run ok infer --model_file "$DATA/tiny_cnn.bin" --input_file "$DATA/tiny_cnn_input.bin" \
    --enable_dump --dump_path raw --frame_count 3
  count out.txt '^Infer time: ' 3
  lacks err.txt 'differs'
  same raw/model_infer_output_0_output.bin "$DATA/tiny_cnn_expected.bin"
  # --enable_dump=false writes nothing.
  mkdir none
  run ok infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --enable_dump=false --dump_path=none
  [ -z "$(ls none)" ] || fail "--enable_dump=false dumped files"
  ;;

infer_tiny_txt)
  run ok infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --enable_dump --hybrid_dequantize_process --dump_format=txt
  f=model_infer_output_0_output.txt
  # Default: 9 decimals, axis 4 of a 4-D output = one number per line.
  count $f '.' 64
  count $f '^-?[0-9]+\.[0-9]{9}$' 64
  run ok infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --enable_dump --hybrid_dequantize_process --dump_format=txt --dump_precision=3 \
    --dump_txt_axis=2 --dump_path=axis2
  f=axis2/model_infer_output_0_output.txt
  # Output (1,4,4,4): axis 2 -> a line per channel of 16 numbers.
  count $f '.' 4
  count $f '^(-?[0-9]+\.[0-9]{3} ){15}-?[0-9]+\.[0-9]{3}$' 4
  ;;

infer_nv12)
  nv12_frame frame.bin
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=frame.bin \
    --enable_cls_post_process --enable_dump
  count out.txt '^Infer time: [0-9]+\.[0-9]+ ms$' 1
  count out.txt '^class result: \[id\][0-9], \[score\][0-9]+\.[0-9]+$' 5
  same model_infer_input_0_data.bin frame.bin
  # The same frame as text (one number per byte) gives the same input.
  od -An -v -tu1 frame.bin >frame.txt
  mkdir txt
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=frame.txt \
    --enable_cls_post_process --enable_dump --dump_path=txt
  same txt/model_infer_input_0_data.bin frame.bin
  same txt/model_infer_output_0_prob.bin model_infer_output_0_prob.bin
  # From a packed file, with --model_name.
  run ok infer --model_file="$DATA/packed.bin" --model_name=nv12_classifier --input_file=frame.bin
  count out.txt '^Infer time: ' 1
  ;;

infer_png)
  # hrt_make_test_image writes a 48x40 PNG and the NV12 frame the tool must
  # derive from it (resize to 32x32, BGR -> I420 -> NV12).
  $EMU "$PNG_HELPER" img.png expected_nv12.bin 48 40 32 32 || fail "hrt_make_test_image failed"
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=img.png \
    --enable_cls_post_process --enable_dump
  has out.txt "resize image 'img.png' from 48x40 to 32x32"
  count out.txt '^class result: \[id\][0-9], \[score\][0-9]+\.[0-9]+$' 5
  same model_infer_input_0_data.bin expected_nv12.bin
  grep '^class result' out.txt >png_classes.txt
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=expected_nv12.bin \
    --enable_cls_post_process
  grep '^class result' out.txt >bin_classes.txt
  same png_classes.txt bin_classes.txt
  # Images feed image inputs only.
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=img.png
  error_is "image file 'img.png' given for input\[0\] 'data' of type HB_DNN_TENSOR_TYPE_F32"
  ;;

infer_roi)
  # Resizer .bin (testgen's nv12_classifier with input_source resizer):
  # a 160x90 PNG frame (its NV12 by hrt_make_test_image, no resize) and one
  # ROI per run through hbDNNRoiInfer.
  $EMU "$PNG_HELPER" frame.png frame_nv12.bin 160 90 160 90 || fail "hrt_make_test_image failed"
  run ok infer --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi=10,20,41,51 --enable_dump
  count out.txt '^Infer time: [0-9]+\.[0-9]+ ms$' 1
  same model_infer_input_0_data.bin frame_nv12.bin
  # A ROI of the model's size is the frame's pixels: the pyramid twin on
  # that crop (cut here with dd: 32 Y rows at (10, 20), 16 UV rows at
  # (10, 10)) gives the same output.
  : >crop.bin
  r=0
  while [ $r -lt 32 ]; do
    dd if=frame_nv12.bin bs=1 skip=$(((20 + r) * 160 + 10)) count=32 2>/dev/null >>crop.bin
    r=$((r + 1))
  done
  r=0
  while [ $r -lt 16 ]; do
    dd if=frame_nv12.bin bs=1 skip=$((160 * 90 + (10 + r) * 160 + 10)) count=32 2>/dev/null >>crop.bin
    r=$((r + 1))
  done
  mkdir twin
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=crop.bin --enable_dump --dump_path=twin
  same twin/model_infer_output_0_prob.bin model_infer_output_0_prob.bin
  # A scaled ROI (values: api_RoiInfer, converter_e2e_ppocr_cls_resizer).
  run ok infer --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi=0,0,119,89 --enable_cls_post_process
  count out.txt '^class result: \[id\][0-9], \[score\][0-9]+\.[0-9]+$' 5
  run ok perf --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi=0,0,119,89 --frame_count=20 --thread_num=2
  PERF_SUMMARY_OK 2 20
  # Refusals: the tool's (flags) and libdnn's (the ROI rules).
  run error infer --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png
  error_is "input\[0\] 'data' .*is a resizer input: run with --roi_infer=true and --roi"
  run error infer --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi="0,0,31,31;2,2,33,33"
  error_is "2 ROI\(s\) given, model 'nv12_classifier' has 1 resizer input"
  run error infer --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi=1,4,71,47
  has err.txt "left and top must be even, right and bottom odd"
  has err.txt "hbDNNRoiInfer failed for model 'nv12_classifier': invalid argument \(-6000001\)"
  run error perf --model_file="$DATA/nv12_classifier_resizer.bin" --input_file=frame.png \
    --roi_infer --roi=0,0,13,31
  has err.txt "this resizer takes ROI sides 16 to 255"
  ;;

infer_image_without_opencv)
  : >img.jpg
  run error infer --model_file="$DATA/nv12_classifier.bin" --input_file=img.jpg
  error_is "needs OpenCV"
  ;;

perf)
  run ok perf --model_file="$DATA/nv12_classifier.bin" --frame_count=50 --thread_num=2 \
    --profile_path=prof
  lacks out.txt 'exsit'
  has err.txt 'random input data'
  progress="^Frame count: 50,  Thread Average: $NUM ms,  thread max latency: $NUM ms,  "
  progress="${progress}thread min latency: $NUM ms,  FPS: $NUM\$"
  count out.txt "$progress" 1
  PERF_SUMMARY_OK 2 50
  [ -f prof/profiler.csv ] || fail "no profiler.csv"
  f=prof/profiler.log
  count $f '^\*\*\*$' 1
  for key in perf_result FPS average_latency running_condition core_id frame_count model_name \
    run_time thread_num chip_latency BPU_inference_time_cost CPU_inference_time_cost \
    model_latency BPU_CLS_subgraph_0 task_latency TaskPendingTime TaskRunningTime; do
    has $f "\"$key\""
  done
  has $f '"frame_count": 50'
  has $f '"thread_num": 2'
  has $f '"model_name": "nv12_classifier"'
  # Both documents are complete JSON objects: first line "{", "}" before
  # "***" and as the last line.
  [ "$(head -n 1 $f)" = "{" ] || fail "profiler.log does not start with {"
  [ "$(tail -n 1 $f)" = "}" ] || fail "profiler.log does not end with }"
  [ "$(grep -B1 -x '\*\*\*' $f | head -n 1)" = "}" ] || fail "no } before ***"
  # An existing directory is reported as the X5 tool does (sic).
  nv12_frame frame.bin
  run ok perf --model_file="$DATA/nv12_classifier.bin" --frame_count=10 --profile_path=prof \
    --input_file=frame.bin
  has out.txt '^profile_path: prof exsit!$'
  lacks err.txt 'random input data'
  PERF_SUMMARY_OK 1 10
  ;;

perf_progress)
  # A progress line every 200 frames and one for the remainder.
  run ok perf --model_file="$DATA/tiny_cnn.bin" --frame_count=401 --core_id=2
  count out.txt '^Frame count: (200|400|401),  Thread Average: ' 3
  PERF_SUMMARY_OK 1 401
  run ok perf --model_file="$DATA/tiny_cnn.bin" --frame_count=16 --thread_num=9
  has err.txt 'thread_num 9 is larger than 8'
  PERF_SUMMARY_OK 8 16
  ;;

gflags)
  # Stray tokens are ignored, the last occurrence wins, "--flag value" works.
  run ok model_info --model_file="$DATA/tiny_cnn.bin" "$DATA/packed.bin"
  has out.txt '^This model file has 1 model:$'
  run ok model_info --model_file=nope.bin --model_file "$DATA/tiny_cnn.bin"
  has out.txt '^\[model name\]: tiny_cnn$'
  run ok infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --frame_count 2 --noenable_dump
  count out.txt '^Infer time: ' 2
  ;;

errors)
  nv12_frame frame.bin
  run error model_info --model_file=missing.bin
  error_is "model file 'missing.bin' does not exist"
  printf 'not a model' >junk.bin
  run error model_info --model_file=junk.bin
  has err.txt "hbDNNInitializeFromFiles failed for 'junk.bin'"
  run error infer --model_file="$DATA/packed.bin" --model_name=foo --input_file=frame.bin
  error_is "model_name 'foo' is not in the model file\(s\); available models: \
\[tiny_cnn\] \[tiny_cnn_b\] \[nv12_classifier\]"
  run error infer --model_file="$DATA/packed.bin" --input_file=frame.bin
  error_is "3 models are loaded .*: choose one with --model_name"
  run error perf --model_file="$DATA/tiny_cnn.bin" --frame_count=abc
  error_is "^ERROR: illegal value 'abc' specified for int32 flag 'frame_count'$"
  run error perf --model_file="$DATA/tiny_cnn.bin" --thread_num=0
  error_is "flag 'thread_num'"
  run error perf --model_file="$DATA/tiny_cnn.bin" --core_id=3
  error_is "flag 'core_id': 3; model 'tiny_cnn' \(march bernoulli2, 2 BPU cores\)"
  run error perf --model_file="$DATA/tiny_cnn.bin" --unknown_flag=1
  error_is "^ERROR: unknown command line flag 'unknown_flag'$"
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=frame.bin
  error_is "input file 'frame.bin' has 1536 bytes but input\[0\] 'data' \
\(HB_DNN_TENSOR_TYPE_F32, valid shape \(1,3,8,8,\)\) needs 768 bytes"
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=frame.bin,frame.bin
  error_is "--input_file has 2 file\(s\) but model 'tiny_cnn' has 1 input\(s\) \(data\)"
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=nope.bin
  error_is "cannot open input file 'nope.bin'"
  echo "1 2 3" >short.txt
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=short.txt
  error_is "input file 'short.txt' holds 3 numbers but input\[0\] 'data' .* needs 192"
  run error infer --model_file="$DATA/tiny_cnn.bin"
  error_is "flag 'input_file' is required"
  run error perf --model_file="$DATA/tiny_cnn.bin" --dump_intermediate=1
  error_is "per-layer dumps are written by infer"
  run error infer --model_file="$DATA/nv12_classifier.bin" --input_file=frame.bin \
    --input_img_properties=Y,UV
  error_is "flag 'input_img_properties'"
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file=x.npy
  error_is "input file 'x.npy' has an unsupported suffix"
  run error infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
    --roi_infer --roi=1,2,3,4
  error_is "model 'tiny_cnn' has 0 resizer input"
  run error bogus_mode --model_file="$DATA/tiny_cnn.bin"
  error_is "unknown mode 'bogus_mode'"
  ;;

hbm_model_info)
  # Gen-B layout (TOOLS.md 1.4): no input source, aligned shape or layout;
  # NV12 is two U8 inputs (Y, UV) with dynamic (-1) strides.
  run ok model_info --model_file="$DATA/nv12_classifier.hbm"
  has out.txt '^\[UCP\]: UCP version = [0-9]+\.[0-9]+\.[0-9]+$'
  count out.txt '^input\[[01]\]: $' 2
  has out.txt '^name: data_y$'
  has out.txt '^valid shape: \(1,32,32,1,\)$'
  has out.txt '^stride: \(-1,-1,1,1,\)$'
  has out.txt '^valid shape: \(1,16,16,2,\)$'
  has out.txt '^stride: \(-1,-1,2,1,\)$'
  count out.txt '^aligned byte size: -1$' 2
  lacks out.txt 'input source|aligned shape|tensor layout'
  # A .bin model is not this generation's.
  run error model_info --model_file="$DATA/tiny_cnn.bin"
  has err.txt 'hrt_model_exec|\.hbm|INCOMPATIBLE|incompatible'
  ;;

hbm_infer)
  # The same integer program as tiny_cnn.bin: the dumped output equals the
  # independently computed expectation, with tight and with caller strides.
  run ok infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" --enable_dump \
    --frame_count=2
  count out.txt '^-+Frame [01] begin-+$' 2
  count out.txt '^Infer time: [0-9]+\.[0-9]+ ms$' 2
  count out.txt '^-+Frame [01] end-+$' 2
  same model_infer_output_0_output.bin "$DATA/tiny_cnn_expected.bin"
  same model_infer_input_0_data.bin "$DATA/tiny_cnn_input.bin"
  mkdir strided
  run ok infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" --enable_dump \
    --dump_path=strided --input_stride="1536,512,64,4" --input_valid_shape="1,3,8,8"
  same strided/model_infer_output_0_output.bin "$DATA/tiny_cnn_expected.bin"
  # Options checked against the model.
  run error infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" --input_stride="4,4"
  has err.txt "flag 'input_stride'"
  run error infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" \
    --input_stride="768,256,32,4;1,1,1,1"
  has err.txt "2 item\(s\) given, model 'tiny_cnn' has 1 input"
  run error infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" \
    --input_valid_shape="1,3,8,9"
  has err.txt "flag 'input_valid_shape'.*dimension 3 is 8, not 9"
  run error infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" \
    --input_img_properties=Y,UV
  has err.txt "the image inputs of model 'tiny_cnn' are none"
  # Per-layer dumps (obpuInferWithLayerOutputs of the UCP runtime): the
  # subgraph's output, whose file is the model output's bytes.
  run ok infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" \
    --dump_intermediate=1 --enable_dump=true
  has intermediate/layer_mapping.txt "BPU"
  last=$(tail -n 1 intermediate/execution_order.txt)
  cmp -s "intermediate/$last" model_infer_output_0_*.bin || fail "last layer of the .hbm dump is not the output"
  ;;

hbm_infer_nv12)
  # NV12 as two inputs (Y then UV plane files); the output equals the
  # 1.x runtime's on the same frame and classifier (nv12_classifier.bin).
  nv12_frame frame.bin
  head -c 1024 frame.bin >y.bin
  tail -c 512 frame.bin >uv.bin
  run ok infer --model_file="$DATA/nv12_classifier.hbm" --input_file=y.bin,uv.bin \
    --input_img_properties=Y,UV --enable_dump --enable_cls_post_process
  count out.txt '^class result: \[id\][0-9], \[score\][0-9]+\.[0-9]+$' 5
  same model_infer_input_0_data_y.bin y.bin
  same model_infer_input_1_data_uv.bin uv.bin
  mkdir a
  TOOL_B=$TOOL TOOL="$(dirname "$TOOL")/hrt_model_exec"
  run ok infer --model_file="$DATA/nv12_classifier.bin" --input_file=frame.bin --enable_dump --dump_path=a
  TOOL=$TOOL_B
  same a/model_infer_output_0_prob.bin model_infer_output_0_prob.bin
  run error infer --model_file="$DATA/nv12_classifier.hbm" --input_file=y.bin,uv.bin --input_img_properties=UV,Y
  has err.txt "the image inputs of model 'nv12_classifier' are 'Y,UV'"
  # One image file per plane input: converted to NV12 as the 1.x path does.
  if [ "$PNG_HELPER" != none ]; then
    $EMU "$PNG_HELPER" img.png nv12.bin 32 32 32 32 || fail "hrt_make_test_image failed"
    head -c 1024 nv12.bin >img_y.bin
    tail -c 512 nv12.bin >img_uv.bin
    mkdir png
    run ok infer --model_file="$DATA/nv12_classifier.hbm" --input_file=img.png,img.png --enable_dump \
      --dump_path=png
    same png/model_infer_input_0_data_y.bin img_y.bin
    same png/model_infer_input_1_data_uv.bin img_uv.bin
  fi
  ;;

hbm_perf)
  run ok perf --model_file="$DATA/nv12_classifier.hbm" --frame_count=20 --thread_num=2 --profile_path=prof
  PERF_SUMMARY_OK 2 20
  f=prof/profiler.log
  count $f '^\*\*\*$' 1
  has $f '"model_name": "nv12_classifier"'
  has $f '"frame_count": 20'
  has $f '"TaskRunningTime"'
  ;;

hbm_handoff)
  # hrt_model_exec hands .hbm models to hrt_model_exec_ucp next to it, with
  # the gen-B options (not runnable through a cross emulator: skipped).
  if [ -n "$EMU" ]; then
    echo "hbm_handoff: skipped under an emulator"
    exit 0
  fi
  run ok infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" --enable_dump \
    --input_stride="1536,512,64,4"
  has out.txt '^\[UCP\]: UCP version = '
  same model_infer_output_0_output.bin "$DATA/tiny_cnn_expected.bin"
  ;;

*)
  echo "unknown case '$CASE'" >&2
  exit 2
  ;;
esac

if [ $FAILS -ne 0 ]; then
  echo "$CASE: $FAILS check(s) failed" >&2
  exit 1
fi
echo "$CASE: passed"
