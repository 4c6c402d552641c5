# spatialhash_gtest_entries(TARGET [PREFIX text] [SHARDS n] [TIMEOUT seconds] [LABELS label...])
#
# Registers the GoogleTest program TARGET with CTest, in one of two ways:
# - by default every test becomes a CTest entry of its own (gtest_discover_tests), so that
#   `ctest -R` picks single tests and a failure names its test;
# - with SPATIALHASH_TEST_SHARDS=ON (scripts/test.sh) the program runs as SHARDS entries through
#   GoogleTest's own sharding (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX: test i runs in shard
#   i mod SHARDS), each printing only its failures. A process start costs about 0.11 s under
#   AddressSanitizer (relocations, shadow memory, the leak scan at exit), and the 700-odd tests
#   spent about 40 s of CI's wall time on 2 cores just starting processes.
# SHARDS is the program's weight: about one shard per 15 s of its tests in the sanitizer build, so
# that no shard holds one core long after the other has finished; the heavier programs' shards
# start first (COST). TIMEOUT bounds one test (default 600 s); a shard, which runs many, gets
# 1200 s: a guard against a hang, within CI's 25 minutes.
function(spatialhash_gtest_entries target)
  cmake_parse_arguments(ARG "" "PREFIX;SHARDS;TIMEOUT" "LABELS" ${ARGN})
  if(NOT ARG_SHARDS)
    set(ARG_SHARDS 1)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set(labels "")
  if(ARG_LABELS)
    set(labels LABELS "${ARG_LABELS}")
  endif()
  if(NOT SPATIALHASH_TEST_SHARDS)
    gtest_discover_tests(${target} TEST_PREFIX "${ARG_PREFIX}" DISCOVERY_TIMEOUT 60
                         PROPERTIES ${labels} TIMEOUT ${ARG_TIMEOUT})
    return()
  endif()
  math(EXPR last "${ARG_SHARDS} - 1")
  foreach(index RANGE ${last})
    set(entry "${ARG_PREFIX}${target}:${index}/${ARG_SHARDS}")
    add_test(NAME ${entry} COMMAND ${target} --gtest_brief=1)
    set_tests_properties(${entry} PROPERTIES
      ENVIRONMENT "GTEST_TOTAL_SHARDS=${ARG_SHARDS};GTEST_SHARD_INDEX=${index}"
      COST ${ARG_SHARDS} TIMEOUT 1200 ${labels})
  endforeach()
endfunction()
