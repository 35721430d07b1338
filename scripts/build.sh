#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds OpenBPU for this machine into build/ (executables in
# build/bin, libraries in build/lib). Extra arguments go to cmake.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${OPENBPU_BUILD_DIR:-$ROOT/build}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD" -j "${OPENBPU_JOBS:-2}"
