// IndexVector and WorkVector: the array types of the memory an index allocates and frees itself,
// everything but the results it hands to the caller.
//
// Both are ResultVectors (no zeroing on resize) whose blocks of 2 MiB or more are mapped blocks
// (kIndexMappedBlockBytes, spatialhash/mapped_blocks.hpp), where results are mapped from 32 MiB.
// Such arrays are freed together (when the index dies, when a query returns), and glibc trims
// its heap's top then unless the process once freed a large block it had mapped: the next build
// or query then faulted them in again, 4 KiB page by page (a plain loop of 1M builds: 76-85 ms a
// build against 18 in a process whose thresholds were raised, docs/benchmarks.md, sixty-ninth
// session; a plain program's 1M-point counts 39 against 21 ms, eighty-sixth session). Mapped,
// they cost the same in every process: one fault and one zeroing per 2 MiB page.
//
// IndexVector: the index's own arrays (the default engine's layout, a periodic index's images,
// its build's and update's work arrays); a block just over a whole number of huge pages ends in
// 4 KiB pages (mapped_block_length()), so that a long-lived array does not hold up to twice its
// size. WorkVector: a query's work arrays (a list search's per-row lengths and starts, counts by
// sorted position, a cross query's sorted keys), always in whole huge pages: mapped afresh by
// every call, a tail in 4 KiB pages would fault page by page every time.
#pragma once

#include <vector>

#include "spatialhash/mapped_blocks.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

template <class T>
using IndexVector = std::vector<T, ResultAllocator<T, kIndexMappedBlockBytes>>;

template <class T>
using WorkVector = std::vector<T, ResultAllocator<T, kIndexMappedBlockBytes, true>>;

}  // namespace spatialhash::detail
