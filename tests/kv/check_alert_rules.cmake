# kv.alert_rules: the KV service's Prometheus rules (services/kv/alerts.yml) load
# (`promtool check rules`) and fire as their unit tests say (`promtool test rules alerts.test.yml`).
#   cmake -DPROMTOOL=/usr/bin/promtool -DDIR=services/kv -P check_alert_rules.cmake
if(NOT PROMTOOL)
  message("kv.alert_rules: SKIPPED, promtool not found (Debian package `prometheus`, which .ci/deps installs)")
  return()
endif()
foreach(step "check;rules;${DIR}/alerts.yml" "test;rules;${DIR}/alerts.test.yml")
  execute_process(COMMAND ${PROMTOOL} ${step} RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(failed)
    string(REPLACE ";" " " shown "${step}")
    message(FATAL_ERROR "promtool ${shown} failed")
  endif()
endforeach()
