# SPDX-License-Identifier: Apache-2.0
# Debian packages (`cpack -G DEB` in a build folder), one per install
# component, installed under /usr:
#   host build   openbpu-tools      libdnn.so, hrt_model_exec, hrt_server
#                openbpu-converter  hb_mapper                (needs openbpu-tools)
#                python3-openbpu    the Python package, hmct-debugger (needs openbpu-tools)
#                openbpu-dev        headers, libdnn.a, CMake and pkg-config files
#   board build  openbpu-board      libdnn.so, hrt_model_exec, hrt_server (arm64)
#                openbpu-board-dev  headers, libdnn.a, CMake and pkg-config files
# tests/install/run_package_test.sh builds them and installs them into a
# scratch root.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME openbpu)
set(CPACK_PACKAGE_VENDOR "OpenBPU")
set(CPACK_PACKAGE_CONTACT "OpenBPU maintainers <openbpu@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Open BPU software stack: libdnn, BPU simulator, board and host tools")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
else()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
endif()

if(OPENBPU_BOARD)
  set(CPACK_COMPONENTS_ALL runtime dev)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME openbpu-board)
  set(CPACK_DEBIAN_DEV_PACKAGE_NAME openbpu-board-dev)
  # libevent and libcrypto are linked statically on the board.
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libc6 (>= 2.31), libstdc++6 (>= 12)")
  set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "openbpu-board (= ${PROJECT_VERSION})")
else()
  set(CPACK_COMPONENTS_ALL runtime dev)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME openbpu-tools)
  set(CPACK_DEBIAN_DEV_PACKAGE_NAME openbpu-dev)
  # Debian's shared libraries: dependencies from dpkg-shlibdeps (libdnn
  # itself is in openbpu-tools, as libhbucp.so in lib/hobot, which the
  # Python package's _openbpu_ucp needs).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib ${CMAKE_BINARY_DIR}/lib/hobot)
  set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "openbpu-tools (= ${PROJECT_VERSION})")
  if(OPENBPU_BUILD_CONVERTER)
    list(APPEND CPACK_COMPONENTS_ALL converter)
    set(CPACK_DEBIAN_CONVERTER_PACKAGE_NAME openbpu-converter)
    set(CPACK_DEBIAN_CONVERTER_PACKAGE_DEPENDS "openbpu-tools (= ${PROJECT_VERSION})")
  endif()
  if(OPENBPU_BUILD_PYTHON)
    list(APPEND CPACK_COMPONENTS_ALL python)
    set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-openbpu)
    set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
        "openbpu-tools (= ${PROJECT_VERSION}), python3 (>= ${OPENBPU_PY_VERSION}), python3 (<< ${OPENBPU_PY_NEXT_VERSION}), python3-numpy, python3-onnx, python3-matplotlib")
  endif()
endif()
include(CPack)
