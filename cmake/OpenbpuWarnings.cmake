# SPDX-License-Identifier: Apache-2.0
# Warning flags for OpenBPU's own targets (third-party headers are -isystem).
# -Wextra includes -Wmissing-field-initializers: a table entry (KernelTable,
# ConvIsa, MarchInfo, OpLimits, OpUnit, ...) that leaves out a field without a
# default member initializer is a warning, so a new field cannot silently
# become 0 or nullptr; tables use designated initializers where they can.
function(openbpu_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
endfunction()

# Libraries that run on the board (libdnn and what it links) build without
# exceptions and RTTI-free code paths must not depend on exceptions.
function(openbpu_no_exceptions target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions>)
  target_compile_definitions(${target} PRIVATE SPDLOG_NO_EXCEPTIONS FMT_EXCEPTIONS=0 JSON_NOEXCEPTION)
endfunction()
