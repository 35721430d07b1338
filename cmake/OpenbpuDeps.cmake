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
