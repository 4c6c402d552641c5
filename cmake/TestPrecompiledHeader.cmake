# spatialhash_test_precompiled_header(TARGET GROUP)
#
# The test programs of one GROUP share one precompiled <gtest/gtest.h> (and the standard headers
# it brings in): parsing it took about 1.9 s of each test file's compile, a third of most. The
# first program of a group builds it, the others reuse it (CMake's REUSE_FROM), so every program
# of a group must be compiled with the same flags and definitions: tests/ links OpenMP into all
# of its programs for that, and tests/cli/ (uninstrumented under the sanitizers) is a group of its
# own. A mismatch is a build error, not a silent fallback: CMake adds -Winvalid-pch, and the
# builds here use -Werror. Only GoogleTest is in it, a header every test file includes itself, so
# a file that forgets one of its own includes still fails to compile.
function(spatialhash_test_precompiled_header target group)
  get_property(owner GLOBAL PROPERTY spatialhash_test_pch_owner_${group})
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    target_precompile_headers(${target} PRIVATE <gtest/gtest.h>)
    set_property(GLOBAL PROPERTY spatialhash_test_pch_owner_${group} ${target})
  endif()
endfunction()
