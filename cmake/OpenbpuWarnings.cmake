# SPDX-License-Identifier: Apache-2.0
# Warning flags for OpenBPU's own targets (third-party headers are -isystem).
function(openbpu_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
endfunction()

# Libraries that run on the board (libdnn and what it links) build without
# exceptions and RTTI-free code paths must not depend on exceptions.
function(openbpu_no_exceptions target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions>)
  target_compile_definitions(${target} PRIVATE SPDLOG_NO_EXCEPTIONS FMT_EXCEPTIONS=0 JSON_NOEXCEPTION)
endfunction()
