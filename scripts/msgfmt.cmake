# Compile one catalog at build time: cmake -DMSGFMT=... -DPO=... -DMO=... -P msgfmt.cmake
# Fails the build unless msgfmt --check --statistics reports no fuzzy and no untranslated
# message (a translation that is missing would otherwise show English among Chinese).
execute_process(COMMAND ${MSGFMT} --check --statistics -o ${MO} ${PO}
                RESULT_VARIABLE code ERROR_VARIABLE stats OUTPUT_VARIABLE out)
string(STRIP "${stats}" stats)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "msgfmt failed on ${PO}: ${stats}")
endif()
if(stats MATCHES "fuzzy|untranslated")
  file(REMOVE ${MO})
  message(FATAL_ERROR "${PO}: ${stats} -- every message must be translated, none fuzzy (scripts/po.sh)")
endif()
message(STATUS "${PO}: ${stats}")
