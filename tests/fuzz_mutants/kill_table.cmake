# The harness-mutant kill table (cmake -DEXE=<test_fuzz_mutants> -P kill_table.cmake). Each row: a
# mutant and the GoogleTest filter of the fast tests that must kill it (fail with the mutant on).
# The union of the filters must pass with no mutant (else a "kill" means nothing); every mutant the
# library lists must have a row and be killed. Prints the table; FATAL_ERROR on any miss.
cmake_minimum_required(VERSION 3.20)  # IN_LIST, empty list elements kept
set(rows
  "oracle-is-faithful|DifferentialRule.*:Oracle.*"
  "rule-factor-one|DifferentialRule.*"
  "rule-no-floor|DifferentialRule.*"
  "rule-floor-x100|DifferentialRule.*"
  "classes-merged|DifferentialRule.*"
  "classes-split|DifferentialRule.*"
  "guard-band-off|GuardBands.*"
  "write-set-off|GuardBands.*"
  "poison-off|DifferentialRule.*:PlantedCorpus.*"
  "shrink-returns-original|Campaign.AFailureIsShrunk*"
  "replay-ignores-expected|Corpus.*:PlantedCorpus.*"
  # Not the corpus's cancelling dumps: their expected.* are judged by the rule, whose a-priori term
  # admits any fp32 result there (fuzz/corpus/README.md), so a plain fp64 oracle passes their replay.
  "oracle-not-exact|Oracle.*"
)

execute_process(COMMAND ${EXE} --list-harness-mutants OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list-harness-mutants failed (${rc})")
endif()
string(REPLACE "\n" ";" listed "${listed}")
list(FILTER listed EXCLUDE REGEX "^$")

set(all_filters "")
set(covered "")
foreach(row IN LISTS rows)
  string(REPLACE "|" ";" parts "${row}")
  list(GET parts 0 mutant)
  list(GET parts 1 filter)
  list(APPEND covered ${mutant})
  string(APPEND all_filters ":${filter}")
endforeach()

set(failed "")
execute_process(COMMAND ${CMAKE_COMMAND} -E env KPARITY_HARNESS_MUTANT=none ${EXE} --gtest_brief=1 "--gtest_filter=${all_filters}"
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
set(table "| mutant | tests run against it | result |\n|---|---|---|\n")
if(rc EQUAL 0)
  string(APPEND table "| (none) | every row's tests | pass (baseline) |\n")
else()
  string(APPEND table "| (none) | every row's tests | FAIL: the tests fail without a mutant |\n")
  list(APPEND failed "baseline")
  message("${out}")
endif()

foreach(mutant IN LISTS listed)
  if(NOT mutant IN_LIST covered)
    string(APPEND table "| ${mutant} | (no row in kill_table.cmake) | NOT KILLED |\n")
    list(APPEND failed ${mutant})
  endif()
endforeach()

foreach(row IN LISTS rows)
  string(REPLACE "|" ";" parts "${row}")
  list(GET parts 0 mutant)
  list(GET parts 1 filter)
  if(NOT mutant IN_LIST listed)
    string(APPEND table "| ${mutant} | ${filter} | unknown to the library: remove the row |\n")
    list(APPEND failed ${mutant})
    continue()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env KPARITY_HARNESS_MUTANT=${mutant} ${EXE} --gtest_brief=1 "--gtest_filter=${filter}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  # The failing tests' names: gtest prints "[  FAILED  ] Suite.Name" once per failure and once in the summary.
  string(REGEX MATCHALL "\\[  FAILED  \\] [A-Za-z0-9_]+\\.[A-Za-z0-9_/]+" killers "${out}")
  list(TRANSFORM killers REPLACE "\\[  FAILED  \\] " "")
  list(REMOVE_DUPLICATES killers)
  list(LENGTH killers n)
  if(rc EQUAL 0)
    string(APPEND table "| ${mutant} | ${filter} | NOT KILLED |\n")
    list(APPEND failed ${mutant})
  elseif(n EQUAL 0)
    # A crash or abort is no kill: the tests must fail by an assertion.
    string(APPEND table "| ${mutant} | ${filter} | NOT KILLED (exit ${rc} without a failed test) |\n")
    list(APPEND failed ${mutant})
  else()
    list(JOIN killers ", " names)
    string(APPEND table "| ${mutant} | ${filter} | killed by ${n}: ${names} |\n")
  endif()
endforeach()

message("${table}")
list(LENGTH listed total)
list(LENGTH failed bad)
if(bad GREATER 0)
  message(FATAL_ERROR "harness mutants: ${bad} problem(s): ${failed}")
endif()
message("harness mutants: all ${total} killed")
