// Cross-checking the contenders of one group (workload, n, order, operation): all our engine runs
// must report identical results; nanoflann's float distances may differ near r, which is
// reported as a mismatch count rather than an error.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "measure.hpp"
#include "report.hpp"

namespace bench {

/// Sorts the digests of a group into classes of identical results. The correct class is brute
/// force's when brute force ran (it is the oracle), otherwise the one most of our engine runs
/// fall in; every run of ours outside it is a failure, whoever ran first.
class Agreement {
 public:
  /// Records the digest of group[row] (the row's engine and `ours` must be filled in).
  void add(std::span<const Row> group, std::size_t row, Digest digest);
  /// Fills check, mismatch and failure of every recorded row and returns a note for the table
  /// header (neighbor statistics and what the reference was).
  std::string finish(std::span<Row> group, Op op);

 private:
  struct Class {
    Digest digest;
    std::vector<std::size_t> rows;
    bool oracle = false;  // brute force is in it
  };
  std::vector<Class> classes_;                             // our runs
  std::vector<std::pair<std::size_t, Digest>> outsiders_;  // nanoflann runs
};

}  // namespace bench
