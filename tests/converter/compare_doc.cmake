# SPDX-License-Identifier: Apache-2.0
# Fails when DOC differs from what TOOL prints.
execute_process(COMMAND ${TOOL} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} failed (${rc})")
endif()
file(READ ${DOC} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "${DOC} is out of date: regenerate it with ${TOOL} > ${DOC}")
endif()
