#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary prefix, then builds a user project with
# find_package(openbpu) (shared and static libdnn) and with pkg-config, and
# runs each against a writer-built model.
# Usage: run_install_test.sh <build dir> <source dir> <testdata dir> <work dir> [toolchain file] [emulator...]
set -eu
BUILD=$1 SRC=$2 DATA=$3 WORK=$4
TOOLCHAIN=${5:-}
shift 4; [ $# -gt 0 ] && shift
EMU="$*"
rm -rf "$WORK"
mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
for f in include/dnn/hb_dnn.h include/dnn/hb_sys.h include/dnn/plugin/hb_dnn_plugin.h \
         include/openbpu/openbpu.h include/openbpu/version.h lib/libdnn.a lib/pkgconfig/openbpu.pc \
         lib/cmake/openbpu/openbpuConfig.cmake bin/hrt_model_exec \
         include/hobot/hb_ucp.h include/hobot/hb_ucp_sys.h include/hobot/hb_ucp_status.h \
         include/hobot/dnn/hb_dnn.h include/hobot/dnn/hb_dnn_status.h lib/pkgconfig/openbpu-ucp.pc; do
  [ -e "$WORK/prefix/$f" ] || { echo "missing installed file $f"; exit 1; }
done
ls "$WORK"/prefix/lib/libdnn.so* "$WORK"/prefix/lib/hobot/libdnn.so* "$WORK"/prefix/lib/hobot/libhbucp.so* > /dev/null
TC=""
[ -n "$TOOLCHAIN" ] && TC="-DCMAKE_TOOLCHAIN_FILE=$TOOLCHAIN"
# Cross builds search packages only under the target root: name the package
# directory explicitly.
cmake -S "$SRC/tests/install/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -Dopenbpu_DIR="$WORK/prefix/lib/cmake/openbpu" $TC > "$WORK/consumer.log"
cmake --build "$WORK/consumer" >> "$WORK/consumer.log"
ARGS="$DATA/tiny_cnn.bin $DATA/tiny_cnn_input.bin $DATA/tiny_cnn_expected.bin"
LD_LIBRARY_PATH="$WORK/prefix/lib" $EMU "$WORK/consumer/consumer" $ARGS
$EMU "$WORK/consumer/consumer_static" $ARGS
UCP_ARGS="$DATA/tiny_cnn.hbm $DATA/tiny_cnn_input.bin $DATA/tiny_cnn_expected.bin"
LD_LIBRARY_PATH="$WORK/prefix/lib/hobot" $EMU "$WORK/consumer/consumer_ucp" $UCP_ARGS
# pkg-config (native builds: the compiler is the host's cc)
if [ -z "$TOOLCHAIN" ]; then
  PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" cc -o "$WORK/consumer_pc" "$SRC/tests/install/consumer/main.c" \
    $(PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" pkg-config --cflags --libs openbpu)
  LD_LIBRARY_PATH="$WORK/prefix/lib" "$WORK/consumer_pc" $ARGS
  PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" cc -std=c99 -o "$WORK/consumer_ucp_pc" \
    "$SRC/tests/install/consumer/ucp_main.c" \
    $(PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" pkg-config --cflags --libs openbpu-ucp)
  LD_LIBRARY_PATH="$WORK/prefix/lib/hobot" "$WORK/consumer_ucp_pc" $UCP_ARGS
fi
echo "install test passed"
