# SPDX-License-Identifier: Apache-2.0
# Cross compilation for aarch64 boards with Debian's cross toolchain
# (g++-aarch64-linux-gnu). Tests run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Architecture-independent header-only libraries (flatbuffers, spdlog, fmt,
# nlohmann-json, CLI11) are used from the build machine's /usr/include.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
# The guest searches the cross sysroot first: when Debian's multiarch arm64
# libc (libc6:arm64, pulled in by any `<lib>-dev:arm64` package) is also
# installed, qemu's -L fallback would otherwise pair the sysroot's ld.so with
# /lib/aarch64-linux-gnu/libc.so.6 of another glibc build, and the first
# pthread_create spins forever in the loader's stack cache.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
