// IndexVector: the array type of an index's own memory (the default engine's layout, and its
// build's and update's work arrays).
//
// A ResultVector (no zeroing on resize) whose blocks of 2 MiB or more are mapped blocks
// (kIndexMappedBlockBytes, spatialhash/mapped_blocks.hpp), where results are mapped from 32 MiB.
// An index's arrays are freed together when it dies, and glibc trims its heap's top then unless
// the process once freed a large block it had mapped: the next build then faulted its arrays in
// again, 4 KiB page by page (a plain loop of 1M builds: 76-85 ms a build against 18 in a process
// whose thresholds were raised; docs/benchmarks.md, sixty-ninth session). Mapped, they cost the
// same in every process.
#pragma once

#include <vector>

#include "spatialhash/mapped_blocks.hpp"
#include "spatialhash/types.hpp"

namespace spatialhash::detail {

template <class T>
using IndexVector = std::vector<T, ResultAllocator<T, kIndexMappedBlockBytes>>;

}  // namespace spatialhash::detail
