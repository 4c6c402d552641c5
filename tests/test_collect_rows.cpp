// The row collection of cell_list's neighbor lists (src/engines/collect_rows.hpp) driven by a
// synthetic search whose rows are known in advance: every way a unit's rows reach the CSR
// arrays (buffered, deferred because the estimate exceeds the buffer budget, deferred because a
// thread's buffer filled up although the estimate fit, low memory), on one and two threads, with
// distances, sorted on request, compared with the rows the search was asked to produce; the same
// for the rows written where the threads find room (src/engines/collect_rows_unordered.hpp), with
// estimates that fit and estimates so low that rows spill; and the streaming row copy
// (src/engines/chunk_copy.hpp) at every length and alignment; and the rows written into the
// output's own storage and compacted in place (src/engines/collect_rows_in_place.hpp), with
// regions sized well, regions some rows overflow (they spill), and estimates so low that it
// gives up.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../src/engines/collect_rows.hpp"
#include "../src/engines/collect_rows_in_place.hpp"
#include "../src/engines/collect_rows_unordered.hpp"

namespace {

using spatialhash::index_t;
using spatialhash::NeighborLists;
using spatialhash::PointsView;
using spatialhash::detail::collect_rows;
using spatialhash::detail::kFilterSlack;
using spatialhash::detail::ListRequest;

constexpr std::uint32_t kSlotsPerUnit = 37;

/// The rows of a synthetic search over n points: slot s has a row of 0 to 40 ids of points,
/// drawn from a seeded generator; slot s is row row_of[s] (a shuffle). As sorted positions
/// (RowPositions), slot s is position s and point p is at position position_of[p].
struct SyntheticSearch {
  std::vector<std::vector<std::uint32_t>> row_by_slot;
  std::vector<index_t> row_of;
  std::vector<index_t> position_of;
  std::size_t entries = 0;

  explicit SyntheticSearch(std::size_t n) : row_by_slot(n), row_of(n) {
    std::mt19937 rng(7);
    for (std::size_t s = 0; s < n; ++s) {
      row_of[s] = static_cast<index_t>(s);
      row_by_slot[s].resize(rng() % 41);
      for (auto& id : row_by_slot[s]) id = static_cast<std::uint32_t>(rng() % n);
      entries += row_by_slot[s].size();
    }
    std::shuffle(row_of.begin(), row_of.end(), rng);
    position_of.resize(n);
    for (std::size_t s = 0; s < n; ++s) position_of[row_of[s]] = static_cast<index_t>(s);
  }

  /// A row as the search hands it over: ids, or sorted positions.
  std::vector<std::uint32_t> emitted(std::size_t slot, bool by_position) const {
    std::vector<std::uint32_t> row = row_by_slot[slot];
    if (by_position) {
      for (auto& id : row) id = position_of[id];
    }
    return row;
  }

  std::int64_t units() const {
    return static_cast<std::int64_t>((row_by_slot.size() + kSlotsPerUnit - 1) / kSlotsPerUnit);
  }
  std::pair<std::uint32_t, std::uint32_t> slots_of(std::int64_t u) const {
    const auto first = static_cast<std::uint32_t>(u) * kSlotsPerUnit;
    const auto last = std::min<std::uint32_t>(first + kSlotsPerUnit,
                                              static_cast<std::uint32_t>(row_by_slot.size()));
    return {first, last};
  }
};

/// The caller's points in the search's sorted order (slot s at s), as RowPositions reads them.
struct SortedCopy {
  std::vector<double> coords;
  spatialhash::detail::RowPositions<3, double> positions;

  SortedCopy(const SyntheticSearch& search, const PointsView<3, double>& points) {
    for (const index_t p : search.row_of) {
      for (int k = 0; k < 3; ++k) coords.push_back(points.coord(p, k));
    }
    positions = {search.row_of.data(), PointsView<3, double>(coords.data(), search.row_of.size())};
  }
};

/// Coordinates of n points in 3D, uniform in [-5, 5), from a seeded generator.
std::vector<double> random_coords(std::size_t n, unsigned seed) {
  std::vector<double> coords(3 * n);
  std::mt19937 rng(seed);
  for (auto& c : coords) c = std::uniform_real_distribution<double>(-5, 5)(rng);
  return coords;
}

/// The search's scratch: rows are handed out from here with the filter's slack after them, as
/// the engine's filter rows are.
struct Work {
  std::vector<std::uint32_t> row;
};

/// How often the units ran: for counts only (deferred units), and with rows.
struct Runs {
  int count_only = 0, with_rows = 0;
};

NeighborLists collect(const SyntheticSearch& search, const PointsView<3, double>& points,
                      int threads, std::size_t estimate, const ListRequest& request, Runs& runs,
                      bool by_position) {
  NeighborLists lists;
  const SortedCopy sorted(search, points);
  collect_rows<Work>(
      threads, points, search.units(), search.row_of, search.row_of.size(), estimate,
      [&](std::int64_t u) { return search.slots_of(u); },
      [&](std::int64_t u, Work& work, bool count_only, auto&& emit) {
        if (count_only) {
#pragma omp atomic
          ++runs.count_only;
        } else {
#pragma omp atomic
          ++runs.with_rows;
        }
        const auto [first, last] = search.slots_of(u);
        for (std::uint32_t s = first; s < last; ++s) {
          const auto row = search.emitted(s, by_position);
          work.row.assign(row.size() + kFilterSlack, 0xFFFFFFFFu);
          std::copy(row.begin(), row.end(), work.row.begin());
          emit(s, count_only ? nullptr : work.row.data(), static_cast<std::uint32_t>(row.size()));
        }
      },
      request, lists,
      by_position ? sorted.positions : spatialhash::detail::RowPositions<3, double>{});
  return lists;
}

/// The row of `slot` that a collector should store: as the search emits it, or sorted.
std::vector<std::uint32_t> expected_row(const SyntheticSearch& search, std::size_t slot,
                                        bool sorted) {
  std::vector<std::uint32_t> row = search.row_by_slot[slot];
  if (sorted) std::sort(row.begin(), row.end());
  return row;
}

void expect_rows(const SyntheticSearch& search, const PointsView<3, double>& points,
                 const NeighborLists& lists, bool with_distances, bool sorted) {
  const std::size_t n = search.row_of.size();
  ASSERT_EQ(lists.offsets.size(), n + 1);
  ASSERT_EQ(lists.indices.size(), search.entries);
  ASSERT_EQ(lists.distances.size(), with_distances ? search.entries : 0);
  for (std::size_t s = 0; s < n; ++s) {
    const index_t row = search.row_of[s];
    const auto expected = expected_row(search, s, sorted);
    ASSERT_EQ(lists.offsets[row + 1] - lists.offsets[row], expected.size()) << "row " << row;
    for (std::size_t k = 0; k < expected.size(); ++k) {
      ASSERT_EQ(lists.indices[lists.offsets[row] + k], expected[k]) << "row " << row << " #" << k;
      if (!with_distances) continue;
      double d2 = 0;
      for (int a = 0; a < 3; ++a) {
        const double d = points.coord(row, a) - points.coord(expected[k], a);
        d2 += d * d;
      }
      ASSERT_EQ(lists.distances[lists.offsets[row] + k], std::sqrt(d2));
    }
  }
}

TEST(CollectRows, EveryPathGivesTheSearchsRows) {
  constexpr std::size_t n = 20000;
  const SyntheticSearch search(n);
  const std::vector<double> coords = random_coords(n, 3);
  const PointsView<3, double> points(coords.data(), n);
  const std::size_t all_bytes = search.entries * sizeof(index_t);
  struct Case {
    std::string name;
    std::size_t estimate, budget_bytes;
    bool low_memory;
    bool deferred_some, buffered_some;
  };
  const std::vector<Case> cases = {
      {"buffered", search.entries, 4 * all_bytes, false, false, true},
      // An estimate above the budget: every unit counted first, then searched into place.
      {"estimate over budget", search.entries, all_bytes / 2, false, true, false},
      // The estimate fits but the rows do not: the buffers fill, later units are deferred.
      {"buffers fill up", search.entries / 8, all_bytes / 4, false, true, true},
      {"low memory", search.entries, 4 * all_bytes, true, true, false},
  };
  for (const Case& c : cases) {
    for (const int threads : {1, 2}) {
      for (const bool with_distances : {false, true}) {
        for (const auto& [sorted, by_position] :
             {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
          SCOPED_TRACE(c.name + ", " + std::to_string(threads) + " threads" +
                       (with_distances ? ", distances" : "") + (sorted ? ", sorted" : "") +
                       (by_position ? ", sorted positions" : ""));
          const ListRequest request{.radius = 1.0,
                                    .with_distances = with_distances,
                                    .low_memory = c.low_memory,
                                    .row_buffer_bytes = c.budget_bytes,
                                    .sorted = sorted};
          Runs runs;
          const NeighborLists lists =
              collect(search, points, threads, c.estimate, request, runs, by_position);
          expect_rows(search, points, lists, with_distances, sorted);
          // Every unit ran with rows once, buffered or deferred; the deferred ones ran for counts
          // first.
          EXPECT_EQ(runs.with_rows, search.units());
          EXPECT_EQ(runs.count_only > 0, c.deferred_some) << runs.count_only;
          EXPECT_EQ(runs.count_only < search.units(), c.buffered_some) << runs.count_only;
        }
      }
    }
  }
}

TEST(CollectRows, ASecondSearchThatDiffersIsAnError) {
  constexpr std::size_t n = 500;
  const SyntheticSearch search(n);
  std::vector<double> coords(3 * n, 0.0);
  const PointsView<3, double> points(coords.data(), n);
  NeighborLists lists;
  int calls = 0;
  const auto run = [&](std::int64_t u, Work& work, bool count_only, auto&& emit) {
    const auto [first, last] = search.slots_of(u);
    work.row.assign(64, 0);
    for (std::uint32_t s = first; s < last; ++s) {
      // The counting search reports one more entry per row than the writing one.
      const auto length = static_cast<std::uint32_t>(search.row_by_slot[s].size()) + count_only;
      emit(s, count_only ? nullptr : work.row.data(), length);
    }
    ++calls;
  };
  const ListRequest request{.radius = 1.0, .low_memory = true};
  EXPECT_THROW(collect_rows<Work>(
                   1, points, search.units(), search.row_of, n, search.entries,
                   [&](std::int64_t u) { return search.slots_of(u); }, run, request, lists),
               std::logic_error);
  EXPECT_GT(calls, 0);
}

// Rows written where the threads find room: every row of the search, at a place of its own,
// the rest kNoNeighbor, with an estimate that fits, one far too low (most rows spill), and none;
// with rows that no slot covers (they stay empty).
TEST(CollectRowsUnordered, EveryRowOnceWhateverTheEstimate) {
  constexpr std::size_t n = 20000;
  const SyntheticSearch search(n);
  const std::vector<double> coords = random_coords(n, 5);
  const PointsView<3, double> points(coords.data(), n);
  const SortedCopy sorted_copy(search, points);
  for (const std::size_t estimate : {search.entries, search.entries / 50, std::size_t{0}}) {
    for (const int threads : {1, 2, 3}) {
      for (const bool with_distances : {false, true}) {
        for (const std::size_t extra_rows : {std::size_t{0}, std::size_t{17}}) {
          // Sorted with the rows without a slot (any combination would do); sorted positions
          // with distances, never sorted.
          const bool sorted = extra_rows > 0;
          const bool by_position = !sorted && with_distances;
          SCOPED_TRACE("estimate " + std::to_string(estimate) + ", " + std::to_string(threads) +
                       " threads" + (with_distances ? ", distances" : "") + ", " +
                       std::to_string(extra_rows) + " rows without a slot" +
                       (sorted ? ", sorted" : "") + (by_position ? ", sorted positions" : ""));
          spatialhash::NeighborRows rows;
          rows.indices.assign(5, 1);  // stale contents must not survive
          int runs = 0;
          collect_rows<Work>(
              threads, points, search.units(), search.row_of, n + extra_rows, estimate,
              [&](std::int64_t u) { return search.slots_of(u); },
              [&](std::int64_t u, Work& work, bool count_only, auto&& emit) {
                ASSERT_FALSE(count_only);
#pragma omp atomic
                ++runs;
                const auto [first, last] = search.slots_of(u);
                for (std::uint32_t s = first; s < last; ++s) {
                  const auto row = search.emitted(s, by_position);
                  work.row.assign(row.size() + kFilterSlack, 0xFFFFFFFEu);
                  std::copy(row.begin(), row.end(), work.row.begin());
                  emit(s, work.row.data(), static_cast<std::uint32_t>(row.size()));
                }
              },
              ListRequest{.radius = 1.0, .with_distances = with_distances, .sorted = sorted}, rows,
              by_position ? sorted_copy.positions : spatialhash::detail::RowPositions<3, double>{});
          EXPECT_EQ(runs, search.units());
          ASSERT_EQ(rows.size(), n + extra_rows);
          std::vector<char> covered(rows.indices.size(), 0);
          for (std::size_t s = 0; s < n; ++s) {
            const index_t row = search.row_of[s];
            const auto expected = expected_row(search, s, sorted);
            ASSERT_EQ(rows.count[row], expected.size()) << "row " << row;
            ASSERT_LE(rows.start[row] + rows.count[row], rows.indices.size()) << "row " << row;
            for (std::size_t k = 0; k < expected.size(); ++k) {
              const std::size_t at = rows.start[row] + k;
              ASSERT_EQ(covered[at], 0) << "entry " << at << " in two rows";
              covered[at] = 1;
              ASSERT_EQ(rows.indices[at], expected[k]) << "row " << row << " #" << k;
              if (!with_distances) continue;
              double d2 = 0;
              for (int a = 0; a < 3; ++a) {
                const double d = points.coord(row, a) - points.coord(expected[k], a);
                d2 += d * d;
              }
              ASSERT_EQ(rows.distances[at], std::sqrt(d2));
            }
          }
          for (std::size_t row = n; row < n + extra_rows; ++row) EXPECT_EQ(rows.count[row], 0u);
          ASSERT_EQ(rows.distances.size(), with_distances ? rows.indices.size() : 0);
          std::size_t unused = 0;
          for (std::size_t at = 0; at < covered.size(); ++at) {
            if (covered[at] != 0) continue;
            ++unused;
            ASSERT_EQ(rows.indices[at], spatialhash::kNoNeighbor) << "entry " << at;
            if (with_distances) {
              ASSERT_TRUE(std::isnan(rows.distances[at])) << "entry " << at;
            }
          }
          // The gaps are at most a row and a chunk of slack for each chunk claimed, and a chunk
          // per thread.
          EXPECT_LE(unused, static_cast<std::size_t>(threads) * spatialhash::detail::kRowChunk +
                                (rows.indices.size() / spatialhash::detail::kRowChunk + 1) * 60);
        }
      }
    }
  }
}

// Rows written into per-bucket regions of the output and compacted in place: every row in row
// order, whatever the threads; rows that overflow their bucket's region spill and still land in
// place; an estimate far too low, or a spill over its budget, gives up with the lists empty.
TEST(CollectRowsInPlace, EveryRowInPlaceOrAClearGiveUp) {
  using spatialhash::detail::collect_rows_in_place;
  using spatialhash::detail::InPlaceOutcome;
  using spatialhash::detail::InPlaceTuning;  // engine_base.hpp
  constexpr std::size_t n = 20000;
  const SyntheticSearch search(n);
  const std::vector<double> coords = random_coords(n, 11);
  const PointsView<3, double> points(coords.data(), n);
  enum class Weights { uniform, exact, skewed, mild };
  struct Case {
    std::string name;
    std::size_t estimate;
    Weights weights;
    std::size_t spill_entries;
    bool done, spills;
    bool low_memory = false;
    /// `done` holds on one thread; on more, a clear give-up is accepted too (see the case).
    bool done_on_one_thread_only = false;
  };
  const std::size_t unbounded = std::size_t{1} << 40;
  const std::vector<Case> cases = {
      {"uniform weights", search.entries, Weights::uniform, unbounded, true, false},
      {"weights by row length", search.entries, Weights::exact, unbounded, true, false},
      // Rows of odd buckets weigh a ninth of the even ones': their regions overflow.
      {"skewed weights", search.entries, Weights::skewed, unbounded, true, true},
      {"skewed weights, no room to spill", search.entries, Weights::skewed, 0, false, true},
      {"estimate far too low", search.entries / 4, Weights::uniform, unbounded, false, true},
      // low_memory: the spill may hold a sixteenth of the estimate, whatever spill_entries says.
      {"low_memory", search.entries, Weights::uniform, unbounded, true, false, true},
      {"low_memory, skewed weights", search.entries, Weights::skewed, unbounded, false, true, true},
      // Odd buckets weigh 0.65 of the even ones': a few of their rows spill, under the cap. Each
      // thread may spill its share of the cap, and which thread takes the rows that spill depends
      // on the schedule: on 2 or 3 threads a thread can meet its share first (under a busy
      // machine, as in an ASan run of CI), and then the in-place collection gives up cleanly.
      {"low_memory, mildly skewed weights", search.entries, Weights::mild, unbounded, true, true,
       true, /*done_on_one_thread_only=*/true},
  };
  for (const Case& c : cases) {
    for (const int threads : {1, 2, 3}) {
      // Rows sorted as they are written, with 2 threads (each case then has both).
      const bool sorted = threads == 2;
      SCOPED_TRACE(c.name + ", " + std::to_string(threads) + " threads" +
                   (sorted ? ", sorted rows" : ""));
      // Regions of about 4096 entries: buckets of 1024 rows (the smallest), about 20 of them.
      const InPlaceTuning tuning{
          .region_entries = 4096, .margin = 0.25, .chunk = 512, .spill_entries = c.spill_entries};
      NeighborLists lists;
      lists.indices.assign(3, 7);  // stale contents must not survive
      int runs = 0;
      const InPlaceOutcome outcome = collect_rows_in_place<Work>(
          threads, search.units(), search.row_of, n, c.estimate,
          [&](std::int64_t u, auto&& add) {
            const auto [first, last] = search.slots_of(u);
            for (std::uint32_t s = first; s < last; ++s) {
              const double length = static_cast<double>(search.row_by_slot[s].size());
              const bool odd_bucket = ((search.row_of[s] >> 10) & 1) != 0;
              add(s, c.weights == Weights::uniform ? 1.0
                     : c.weights == Weights::exact ? length
                     : c.weights == Weights::mild  ? (odd_bucket ? 0.65 : 1.0)
                                                   : (odd_bucket ? 1.0 : 9.0));
            }
          },
          [&](std::int64_t u, Work& work, bool count_only, auto&& emit) {
            ASSERT_FALSE(count_only);
#pragma omp atomic
            ++runs;
            const auto [first, last] = search.slots_of(u);
            for (std::uint32_t s = first; s < last; ++s) {
              const auto& row = search.row_by_slot[s];
              work.row.assign(row.size() + kFilterSlack, 0xFFFFFFFDu);
              std::copy(row.begin(), row.end(), work.row.begin());
              emit(s, work.row.data(), static_cast<std::uint32_t>(row.size()));
            }
          },
          spatialhash::detail::ListRequest{
              .low_memory = c.low_memory, .in_place = tuning, .sorted = sorted},
          lists);
      EXPECT_EQ(outcome.buckets, (n + 1023) / 1024);
      if (!(c.done_on_one_thread_only && threads > 1)) {
        ASSERT_EQ(outcome.done, c.done);
      }
      if (!outcome.done) {
        EXPECT_TRUE(lists.indices.empty());
        EXPECT_TRUE(lists.offsets.empty());
        continue;
      }
      EXPECT_EQ(runs, search.units());
      EXPECT_EQ(outcome.spilled_rows > 0, c.spills) << outcome.spilled_rows;
      expect_rows(search, points, lists, false, sorted);
    }
  }
}

// copy_streaming writes a row's whole cache lines with non-temporal stores and its partial first
// and last lines with ordinary ones: every length and every alignment of the target within a
// line must land exactly the row, and nothing beside it.
TEST(CopyStreaming, WritesExactlyTheRowAtEveryAlignment) {
  constexpr std::uint32_t kUntouched = 0xDEADBEEFu;
  constexpr std::size_t kMaxCount = 200;
  std::mt19937 rng(11);
  std::vector<std::uint32_t> source(kMaxCount + kFilterSlack);
  for (auto& id : source) id = static_cast<std::uint32_t>(rng());
  // Line-aligned, so that `shift` is the target's offset within a 64-byte line.
  alignas(64) std::array<std::uint32_t, kMaxCount + 64> target;
  for (std::size_t shift = 0; shift < 16; ++shift) {
    for (std::size_t count = 0; count <= kMaxCount; ++count) {
      std::fill(target.begin(), target.end(), kUntouched);
      spatialhash::detail::copy_streaming(target.data() + shift, source.data(), count);
      spatialhash::detail::streaming_done();
      for (std::size_t j = 0; j < target.size(); ++j) {
        const bool inside = j >= shift && j < shift + count;
        ASSERT_EQ(target[j], inside ? source[j - shift] : kUntouched)
            << "item " << j << ", " << count << " items copied to offset " << shift;
      }
    }
  }
}

}  // namespace
