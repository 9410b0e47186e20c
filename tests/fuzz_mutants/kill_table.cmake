# The harness-mutant kill table (cmake -DEXE=<test_fuzz_mutants> -P kill_table.cmake). Each row: a
# mutant and the GoogleTest filter of the fast tests that must kill it (fail with the mutant on).
# The union of the filters must pass with no mutant (else a "kill" means nothing); every mutant the
# library lists must have a row and be killed. A row ending in `|only` also requires every other
# row's tests to pass with its mutant on: that guard, and no other, sees the defect. Prints the
# table; FATAL_ERROR on any miss.
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
  # A last-bit fp64 error in the oracle's fast path: the rule, the replay and the cancelling unit test
  # cannot see it (the rule's bound contains the oracle's own error); only the oracle property holding
  # the fast oracle against its long-accumulator evaluation does (issue 25).
  "oracle-fast-path-inexact|OracleProperty.*|only"
)
# Run (and required to pass) with the mutant of every `only` row, beside the other rows' tests, and
# with no mutant: the guards that are no row's killers (the self-test, the controls).
set(other_guards "OtherGuards.*")

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
execute_process(COMMAND ${CMAKE_COMMAND} -E env KPARITY_HARNESS_MUTANT=none ${EXE} --gtest_brief=1 "--gtest_filter=${all_filters}:${other_guards}"
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
  list(LENGTH parts nparts)
  set(only OFF)
  if(nparts GREATER 2)
    list(GET parts 2 flag)
    if(flag STREQUAL "only")
      set(only ON)
    endif()
  endif()
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
    set(verdict "killed by ${n}: ${names}")
    if(only)
      # Every other row's tests and the other guards, with this mutant on, must pass.
      set(others "${other_guards}")
      foreach(other IN LISTS rows)
        string(REPLACE "|" ";" oparts "${other}")
        list(GET oparts 1 ofilter)
        if(NOT ofilter STREQUAL filter)
          string(APPEND others ":${ofilter}")
        endif()
      endforeach()
      execute_process(COMMAND ${CMAKE_COMMAND} -E env KPARITY_HARNESS_MUTANT=${mutant} ${EXE} --gtest_brief=1 "--gtest_filter=${others}"
                      OUTPUT_VARIABLE oout ERROR_VARIABLE oout RESULT_VARIABLE orc)
      if(orc EQUAL 0)
        string(APPEND verdict "; every other row's tests and ${other_guards} pass with it (only this guard sees it)")
      else()
        string(REGEX MATCHALL "\\[  FAILED  \\] [A-Za-z0-9_]+\\.[A-Za-z0-9_/]+" also "${oout}")
        list(TRANSFORM also REPLACE "\\[  FAILED  \\] " "")
        list(REMOVE_DUPLICATES also)
        list(JOIN also ", " anames)
        string(APPEND verdict "; NOT ONLY: also killed by ${anames}")
        list(APPEND failed ${mutant})
      endif()
    endif()
    string(APPEND table "| ${mutant} | ${filter} | ${verdict} |\n")
  endif()
endforeach()

message("${table}")
list(LENGTH listed total)
list(LENGTH failed bad)
if(bad GREATER 0)
  message(FATAL_ERROR "harness mutants: ${bad} problem(s): ${failed}")
endif()
message("harness mutants: all ${total} killed")
