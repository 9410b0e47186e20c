# The long tier (issue 32; ctest label `long`, run by CI with everything else, `ctest -L long` alone):
# the contract and hostile-input properties of test_fuzz (tests/fuzz/properties_test.cpp, every
# property as a GoogleTest case) at 20,000 cases each instead of the fixed-seed tier's 100, on another
# base seed. The filter picks up every property of those kinds, a new op's included; GoogleTest's
# sharding splits them over four ctests so that `ctest -j` spreads the work. A property's cases run
# in chunks of 100, each on its own chunk seed, and a failure prints its one-line repro. That depth is
# what a user's 90-second campaign reaches: issue 32's final_state NaN showed after ~400 cases of a
# property the fixed-seed tier ran 100 of. Time on the 2-core machine: bench/results/deep_contracts_2026-12-04.md.
if(TARGET test_fuzz)
  set(long_shards 4)
  math(EXPR last_shard "${long_shards} - 1")
  foreach(shard RANGE ${last_shard})
    add_test(NAME fuzz.contracts.long.${shard}
             COMMAND test_fuzz --gtest_filter=Fuzz_contracts.*:Fuzz_hostile.*)
    set_tests_properties(fuzz.contracts.long.${shard} PROPERTIES
                         LABELS "cpu;long" TIMEOUT 1800
                         ENVIRONMENT "KPARITY_FUZZ_CASES=20000;KPARITY_FUZZ_SEED=0x6c6f6e6774696572;GTEST_TOTAL_SHARDS=${long_shards};GTEST_SHARD_INDEX=${shard}")
  endforeach()
endif()
