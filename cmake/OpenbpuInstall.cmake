# SPDX-License-Identifier: Apache-2.0
# Installation: headers, libdnn.so (exported target openbpu::dnn), libdnn.a
# (one merged archive, imported as openbpu::dnn_static), the UCP generation
# (hobot/ headers, lib/hobot/libdnn.so + libhbucp.so, target openbpu::ucp),
# the tools, the CMake package (find_package(openbpu)) and pkg-config files
# (openbpu, openbpu-ucp).
include(CMakePackageConfigHelpers)

# Components (Debian packages, cmake/OpenbpuPackage.cmake): runtime (the
# libraries and the board tools), dev (headers, libdnn.a, CMake and pkg-config
# files); the converter and the Python package install their own.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dnn ${PROJECT_SOURCE_DIR}/include/hobot
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/openbpu/openbpu.h ${PROJECT_BINARY_DIR}/include/openbpu/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/openbpu COMPONENT dev)

install(TARGETS dnn openbpu_headers EXPORT openbpuTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS hbucp dnn_ucp ucp openbpu_ucp_headers EXPORT openbpuTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/hobot COMPONENT runtime NAMELINK_COMPONENT dev)
install(EXPORT openbpuTargets NAMESPACE openbpu:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/openbpu COMPONENT dev)

# libdnn.a: the C API plus every internal archive it needs, merged so that a
# static link needs no other OpenBPU library.
set(OPENBPU_MERGED_A ${PROJECT_BINARY_DIR}/merged/libdnn.a)
set(OPENBPU_MRI ${PROJECT_BINARY_DIR}/merged/libdnn.mri)
file(GENERATE OUTPUT ${OPENBPU_MRI} CONTENT
"CREATE ${OPENBPU_MERGED_A}
ADDLIB $<TARGET_FILE:dnn_static>
ADDLIB $<TARGET_FILE:dnn_core>
ADDLIB $<TARGET_FILE:dnn_cpu_ops>
ADDLIB $<TARGET_FILE:dnn_base>
ADDLIB $<TARGET_FILE:bpu_driver>
ADDLIB $<TARGET_FILE:bpu_sim>
ADDLIB $<TARGET_FILE:bpu_isa>
ADDLIB $<TARGET_FILE:bpu_model>
SAVE
END
")
add_custom_command(OUTPUT ${OPENBPU_MERGED_A}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/merged
  COMMAND ${CMAKE_COMMAND} -E rm -f ${OPENBPU_MERGED_A}
  COMMAND ${CMAKE_AR} -M < ${OPENBPU_MRI}
  DEPENDS dnn_static dnn_core dnn_cpu_ops dnn_base bpu_driver bpu_sim bpu_isa bpu_model ${OPENBPU_MRI}
  COMMENT "Merging libdnn.a")
add_custom_target(dnn_merged_static ALL DEPENDS ${OPENBPU_MERGED_A})
install(FILES ${OPENBPU_MERGED_A} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/openbpuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/openbpuConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/openbpu)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/openbpuConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/openbpuConfig.cmake ${PROJECT_BINARY_DIR}/openbpuConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/openbpu COMPONENT dev)

configure_file(${PROJECT_SOURCE_DIR}/cmake/openbpu.pc.in ${PROJECT_BINARY_DIR}/openbpu.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/openbpu-ucp.pc.in ${PROJECT_BINARY_DIR}/openbpu-ucp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/openbpu.pc ${PROJECT_BINARY_DIR}/openbpu-ucp.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

include(cmake/OpenbpuPackage.cmake)
