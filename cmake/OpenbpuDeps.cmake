# SPDX-License-Identifier: Apache-2.0
# Third-party dependencies. All come from Debian packages installed by
# scripts/setup.sh. Header-only use (flatbuffers, spdlog+fmt, nlohmann-json,
# CLI11) keeps the board build free of target libraries other than libc and
# libstdc++, so a cross build needs no arm64 packages.
find_package(Threads REQUIRED)

# Debian's interpreter (numpy, onnx, torch, matplotlib): the Python package is
# built for it and the Python-driven tests run with it. The `python3` first on
# PATH may be another interpreter without Debian's modules.
set(OPENBPU_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with numpy, onnx, matplotlib, skimage and torch (Debian's)")

find_program(OPENBPU_FLATC flatc REQUIRED)
find_path(OPENBPU_FLATBUFFERS_INCLUDE flatbuffers/flatbuffers.h REQUIRED)
find_path(OPENBPU_SPDLOG_INCLUDE spdlog/spdlog.h REQUIRED)
find_path(OPENBPU_FMT_INCLUDE fmt/format.h REQUIRED)
find_path(OPENBPU_JSON_INCLUDE nlohmann/json.hpp REQUIRED)
find_path(OPENBPU_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)

add_library(openbpu_thirdparty_headers INTERFACE)
target_include_directories(openbpu_thirdparty_headers SYSTEM INTERFACE
  ${OPENBPU_FLATBUFFERS_INCLUDE} ${OPENBPU_SPDLOG_INCLUDE} ${OPENBPU_FMT_INCLUDE}
  ${OPENBPU_JSON_INCLUDE} ${OPENBPU_CLI11_INCLUDE})
target_compile_definitions(openbpu_thirdparty_headers INTERFACE
  SPDLOG_HEADER_ONLY FMT_HEADER_ONLY)

# libevent (hrt_server and its clients) and OpenSSL's libcrypto (SHA-256
# names of hrt_server's content-addressed cache). Host builds link Debian's
# shared libraries; cross builds the target's static archives (libcrypto.a
# of libssl-dev:arm64 and libevent_core.a of libevent-dev:arm64, unpacked
# into third_party/arm64 by scripts/setup.sh, never installed), so the board
# tools need no libraries beyond libc and libstdc++.
add_library(openbpu_net INTERFACE)
if(CMAKE_CROSSCOMPILING)
  set(_multiarch ${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
  set(OPENBPU_ARM64_ROOT ${PROJECT_SOURCE_DIR}/third_party/arm64/root CACHE PATH
      "Unpacked libevent-dev and libssl-dev of the target architecture (scripts/setup.sh)")
  find_library(OPENBPU_LIB_EVENT_CORE NAMES libevent_core.a PATHS ${OPENBPU_ARM64_ROOT}/usr/lib/${_multiarch}
               NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  find_path(OPENBPU_EVENT_INCLUDE event2/event.h PATHS ${OPENBPU_ARM64_ROOT}/usr/include
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  find_library(OPENBPU_LIB_CRYPTO NAMES libcrypto.a PATHS ${OPENBPU_ARM64_ROOT}/usr/lib/${_multiarch}
               NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  find_path(OPENBPU_OPENSSL_ARCH_INCLUDE openssl/configuration.h PATHS ${OPENBPU_ARM64_ROOT}/usr/include/${_multiarch}
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(NOT OPENBPU_LIB_EVENT_CORE OR NOT OPENBPU_EVENT_INCLUDE)
    message(FATAL_ERROR "libevent for ${_multiarch} not found in ${OPENBPU_ARM64_ROOT}: run scripts/setup.sh")
  endif()
  if(NOT OPENBPU_LIB_CRYPTO OR NOT OPENBPU_OPENSSL_ARCH_INCLUDE)
    message(FATAL_ERROR "libcrypto for ${_multiarch} not found in ${OPENBPU_ARM64_ROOT}: run scripts/setup.sh")
  endif()
  # The architecture's own headers before the shared OpenSSL ones of
  # /usr/include (openbpu_thirdparty_headers).
  target_include_directories(openbpu_net SYSTEM INTERFACE ${OPENBPU_OPENSSL_ARCH_INCLUDE} ${OPENBPU_EVENT_INCLUDE})
  target_link_libraries(openbpu_net INTERFACE ${OPENBPU_LIB_EVENT_CORE} ${OPENBPU_LIB_CRYPTO} ${CMAKE_DL_LIBS}
                        Threads::Threads)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(OPENBPU_LIBEVENT REQUIRED IMPORTED_TARGET libevent_core)
  find_package(OpenSSL REQUIRED COMPONENTS Crypto)
  target_link_libraries(openbpu_net INTERFACE PkgConfig::OPENBPU_LIBEVENT OpenSSL::Crypto)
endif()

if(OPENBPU_WITH_OPENCV)
  find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
endif()

if(OPENBPU_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND OR CMAKE_CROSSCOMPILING)
    # Debian's googletest ships the sources: build them for the target.
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/_googletest EXCLUDE_FROM_ALL)
    if(NOT TARGET GTest::gtest_main)
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
  include(GoogleTest)
endif()
