#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian packages of a build folder (cpack, cmake/OpenbpuPackage.cmake),
# installs them with dpkg into a scratch root (its own dpkg database; unpack
# only: the ldconfig of the library package's postinst is the host's), and
# runs the installed tools from there: hrt_model_exec (both builds) and hrt_server on the
# x86 and the board build (through the emulator), hb_mapper, hb_compile, the Python
# package and hmct-debugger on the host build.
# Usage: run_package_test.sh <build dir> <testdata dir> <work dir> [emulator...]
set -eu
BUILD=$1 DATA=$2 WORK=$3
shift 3
EMU="$*"
rm -rf "$WORK"
mkdir -p "$WORK/root/var/lib/dpkg/info" "$WORK/root/var/lib/dpkg/updates"
touch "$WORK/root/var/lib/dpkg/status"
(cd "$BUILD" && cpack -G DEB -B "$WORK/debs" > "$WORK/cpack.log" 2>&1) || { cat "$WORK/cpack.log"; exit 1; }
ls "$WORK"/debs/*.deb
for deb in "$WORK"/debs/*.deb; do
  dpkg-deb --info "$deb" > /dev/null
done
# Dependencies on Debian's packages are checked against the real system, not
# the scratch root; the packages' own dependencies hold among themselves.
dpkg --root="$WORK/root" --force-not-root --force-depends --force-architecture --unpack \
  --log="$WORK/dpkg.log" "$WORK"/debs/*.deb > "$WORK/dpkg.out" 2>&1 || { cat "$WORK/dpkg.out"; exit 1; }
R="$WORK/root/usr"
for f in bin/hrt_model_exec bin/hrt_server include/dnn/hb_dnn.h lib/libdnn.a; do
  [ -e "$R/$f" ] || { echo "missing installed file /usr/$f"; exit 1; }
done
ls "$R"/lib/libdnn.so.* > /dev/null
# The installed tools, found through their RPATH (no LD_LIBRARY_PATH).
$EMU "$R/bin/hrt_model_exec" model_info --model_file="$DATA/tiny_cnn.bin" > "$WORK/model_info.txt"
grep -q '^\[model name\]: tiny_cnn' "$WORK/model_info.txt"
$EMU "$R/bin/hrt_model_exec" infer --model_file="$DATA/tiny_cnn.bin" --input_file="$DATA/tiny_cnn_input.bin" \
  --enable_dump --hybrid_dequantize_process --dump_path="$WORK/dump" > /dev/null
cmp "$WORK/dump/model_infer_output_0_output.bin" "$DATA/tiny_cnn_expected.bin"
# The UCP generation's tool and libraries (lib/hobot) on the .hbm model.
$EMU "$R/bin/hrt_model_exec_ucp" infer --model_file="$DATA/tiny_cnn.hbm" --input_file="$DATA/tiny_cnn_input.bin" \
  --enable_dump --dump_path="$WORK/dump_hbm" > /dev/null
cmp "$WORK/dump_hbm/model_infer_output_0_output.bin" "$DATA/tiny_cnn_expected.bin"
$EMU "$R/bin/hrt_server" --version | grep -q '^hrt_server '
if [ -z "$EMU" ]; then
  dpkg-deb --field "$WORK"/debs/openbpu-tools_*.deb Depends | grep -q libevent
  "$R/bin/hb_mapper" --version > /dev/null
  "$R/bin/hb_compile" --version > /dev/null
  PY=${OPENBPU_PYTHON:-/usr/bin/python3}
  PYTHONPATH="$R/lib/python3/dist-packages" "$PY" -c "
import sys, openbpu
assert openbpu.__file__.startswith('$R'), openbpu.__file__
m = openbpu.load_model('$DATA/tiny_cnn.bin')
import numpy as np
x = np.fromfile('$DATA/tiny_cnn_input.bin', dtype=m.inputs[0].dtype)
out = m.infer([x], dequantize=True)[0]
assert out.tobytes() == open('$DATA/tiny_cnn_expected.bin', 'rb').read()
h = openbpu.load_model('$DATA/tiny_cnn.hbm')  # _openbpu_ucp: libhbucp.so from lib/hobot
assert h.infer([x], dequantize=True)[0].tobytes() == out.tobytes()
"
  "$R/bin/hmct-debugger" --help | grep -q get-sensitivity-of-nodes
fi
echo "package test passed: $(cd "$WORK/debs" && ls *.deb | tr '\n' ' ')"
