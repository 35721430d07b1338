# SPDX-License-Identifier: Apache-2.0
# The UCP generation's libraries export exactly the vendor's functions
# (HBUCP_API.md 2.6) under the version node CONFIG, plus libhbucp's profiler
# session (openbpu/openbpu.h) and private bridge entry point.
# cmake -DNM=<nm> -DDNN=<libdnn.so> -DHBUCP=<libhbucp.so> -P exported_symbols.cmake
function(exported lib out)
  execute_process(COMMAND ${NM} -D --defined-only ${lib} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${lib}")
  endif()
  string(REGEX MATCHALL "[^ \n]+@@CONFIG" syms "${text}")
  string(REGEX REPLACE "@@CONFIG" "" syms "${syms}")
  list(SORT syms)
  # Every other defined dynamic symbol is a failure too.
  string(REGEX MATCHALL "\n[0-9a-f]+ [A-Za-z] [^ \n]+" all "\n${text}")
  foreach(line IN LISTS all)
    if(NOT line MATCHES "@@CONFIG$" AND NOT line MATCHES " A CONFIG$")
      message(FATAL_ERROR "${lib} exports an unexpected symbol:${line}")
    endif()
  endforeach()
  set(${out} "${syms}" PARENT_SCOPE)
endfunction()

set(want_dnn hbDNNGetCompileBpuCoreNum hbDNNGetErrorDesc hbDNNGetHBMDesc hbDNNGetInputCount hbDNNGetInputDesc
    hbDNNGetInputName hbDNNGetInputTensorProperties hbDNNGetModelDesc hbDNNGetModelHandle hbDNNGetModelNameList
    hbDNNGetOutputCount hbDNNGetOutputDesc hbDNNGetOutputName hbDNNGetOutputTensorProperties
    hbDNNGetTaskOutputTensorProperties hbDNNGetVersion hbDNNInferV2 hbDNNInitializeFromDDR
    hbDNNInitializeFromFiles hbDNNRelease)
set(want_ucp hbUCPFree hbUCPGetErrorDesc hbUCPGetSocName hbUCPGetVersion hbUCPMalloc hbUCPMallocCached
    hbUCPMemFlush hbUCPReleaseTask hbUCPSetTaskDoneCb hbUCPSubmitTask hbUCPWaitTaskDone obpuInferWithLayerOutputs
    obpuProfilerSetRunningCondition
    obpuProfilerStart obpuProfilerStop openbpu_ucp_dnn_api)
exported(${DNN} got_dnn)
exported(${HBUCP} got_ucp)
if(NOT got_dnn STREQUAL want_dnn)
  message(FATAL_ERROR "libdnn.so exports\n  ${got_dnn}\nexpected\n  ${want_dnn}")
endif()
if(NOT got_ucp STREQUAL want_ucp)
  message(FATAL_ERROR "libhbucp.so exports\n  ${got_ucp}\nexpected\n  ${want_ucp}")
endif()
message(STATUS "exported symbols: libdnn.so ${DNN}, libhbucp.so ${HBUCP}: as specified")
