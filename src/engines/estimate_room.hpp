// Room reserved for an output whose size was estimated from a sample of cells.
#pragma once

#include <algorithm>
#include <cstddef>

namespace spatialhash::detail {

/// Entries to reserve for an output estimated at `estimate` entries (estimated_entries(), from a
/// sample of cells): a quarter more, plus a margin for the sample's error, larger in proportion on
/// small outputs: 1024 entries and half the estimate, at most 2^16. An output past its room takes
/// a slower path, never a wrong one. The margin follows the estimate so that a search of a few
/// points reserves kilobytes, not 2^16 entries (it once did: 512 KiB of pairs for 10 points).
inline std::size_t room_for_estimate(std::size_t estimate) {
  constexpr std::size_t kMaxMargin = std::size_t{1} << 16;
  return estimate + estimate / 4 + std::min(kMaxMargin, std::size_t{1024} + estimate / 2);
}

}  // namespace spatialhash::detail
