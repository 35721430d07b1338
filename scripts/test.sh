#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs every test suite:
#   1. x86-64 Release build, all tests;
#   2. the runtime's tests under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the aarch64 board build (cross-compiled), its tests under qemu-user;
#   4. with OPENBPU_TEST_TSAN=1, the scheduling and threading tests under
#      ThreadSanitizer (about 15 minutes more on 2 cores; not run by CI).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${OPENBPU_JOBS:-2}"
RUNTIME_TESTS='testgen|api_|runtime_|robust|loader|fuzz_replay|hrt|Sched|Threads|ucp|Ucp|CpuOpsErrors'

step() { printf '\n==== %s (%s, %ss) ====\n' "$*" "$(date +%T)" "$SECONDS"; }

step "x86-64 build"
"$ROOT/scripts/build.sh"
step "x86-64 tests"
ctest --test-dir "$ROOT/build" -j "$JOBS" --output-on-failure

# The ASan build at -O1 with line tables only (-g1: stack traces keep file
# and line): about half the compile time of RelWithDebInfo's -O2 -g.
SAN_FLAGS='-O1 -g1 -DNDEBUG'

step "ASan + UBSan build of the runtime"
cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$SAN_FLAGS" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$SAN_FLAGS" \
  -DOPENBPU_SANITIZE=address -DOPENBPU_BUILD_CONVERTER=OFF -DOPENBPU_BUILD_BENCH=OFF \
  -DOPENBPU_WITH_OPENCV=OFF -DOPENBPU_BUILD_SIM_TESTS=OFF
cmake --build "$ROOT/build-asan" -j "$JOBS"
step "ASan + UBSan runtime tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$ROOT/build-asan" -j "$JOBS" --output-on-failure -R "$RUNTIME_TESTS"

step "aarch64 board build (cross)"
cmake -S "$ROOT" -B "$ROOT/build-aarch64" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/aarch64-linux-gnu.cmake" -DOPENBPU_BOARD=ON
cmake --build "$ROOT/build-aarch64" -j "$JOBS"
step "aarch64 tests under qemu"
ctest --test-dir "$ROOT/build-aarch64" -j "$JOBS" --output-on-failure

if [ -n "${OPENBPU_TEST_TSAN:-}" ]; then
  step "ThreadSanitizer build of the scheduling tests"
  cmake -S "$ROOT" -B "$ROOT/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOPENBPU_SANITIZE=thread -DOPENBPU_BUILD_CONVERTER=OFF -DOPENBPU_BUILD_BENCH=OFF \
    -DOPENBPU_WITH_OPENCV=OFF -DOPENBPU_BUILD_SIM_TESTS=OFF
  cmake --build "$ROOT/build-tsan" -j "$JOBS"
  step "ThreadSanitizer scheduling and threading tests"
  OPENBPU_SCHED_STRESS_TASKS=500 TSAN_OPTIONS=halt_on_error=1 \
    ctest --test-dir "$ROOT/build-tsan" -j "$JOBS" --output-on-failure -R 'Sched|Threads|api_e2e|testgen|Misuse|fuzz_replay_capi'
fi

step "all test suites passed"
