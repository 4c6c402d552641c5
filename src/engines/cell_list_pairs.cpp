// cell_list (cell_list.hpp): every pair once (half stencil), to a sink, to a resizable output in
// one search, or to a fixed-size output counted first; with distances from a sorted copy.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../simd/pair_fold.hpp"
#include "../threads.hpp"
#include "cell_list.hpp"
#include "estimate_room.hpp"
#include "row_distances.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
void CellList<Dim, T>::pairs(double radius, PairSink& sink) const {
  pairs_into<false>(radius, ImageFold{}, sink);
}

template <int Dim, class T>
void CellList<Dim, T>::pairs_folded(double radius, const ImageFold& fold, PairSink& sink) const {
  pairs_into<true>(radius, fold, sink);
}

template <int Dim, class T>
template <bool kFold>
void CellList<Dim, T>::pairs_into(double radius, const ImageFold& fold, PairSink& sink) const {
  // Rows of sorted positions, each pair's distance measured from a copy of the points in sorted
  // order, where a row's neighbors lie side by side (the same values, so the same doubles),
  // instead of at the caller's indices, a cache miss each in a shuffled order.
  WorkVector<std::uint32_t> identity;
  const Search search = for_positions(Search{band_for(radius), radius * radius}, identity);
  const WorkVector<T> sorted_coords = sorted_copy();
  const PointsView<Dim, T> sorted(sorted_coords.data(), layout_.size());
  const index_t* order = layout_.order.data();
  CellWork<Dim> work;
  const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
  for (std::int64_t b = 0; b < blocks; ++b) {
    search_block(b, Stencil::half, Ids::sorted_position, search, work,
                 [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                   const index_t a = order[s];
                   for (std::uint32_t k = 0; k < count; ++k) {
                     const index_t other = order[ids[k]];
                     const index_t low = std::min(a, other), high = std::max(a, other);
                     if (kFold && high >= fold.first) {
                       // An image: kept as (low, its origin) where that lies above low (ImageFold;
                       // two images never are), measured only then.
                       const index_t image = high - fold.first;
                       if (low < fold.origin[image]) {
                         sink.emplace(low, fold.origin[image], distance_squared(sorted, s, ids[k]),
                                      fold.shift[image]);
                       }
                       continue;
                     }
                     sink.emplace(low, high, distance_squared(sorted, s, ids[k]));
                   }
                 });
  }
}

template <int Dim, class T>
void CellList<Dim, T>::pair_output(double radius, PairOutput& out) const {
  const Search search{band_for(radius), radius * radius};
  if (out.resizable()) {
    pairs_in_one_search(search, out);
  } else {
    pairs_counted_first(search, out);
  }
}

template <int Dim, class T>
PairList CellList<Dim, T>::pair_list(double radius, bool with_distances) const {
  PairList list;
  PairListOutput output(list);
  if (with_distances) {
    pairs_in_one_search(Search{band_for(radius), radius * radius}, output, &list.distances);
  } else {
    pair_output(radius, output);
  }
  return list;
}

template <int Dim, class T>
void CellList<Dim, T>::pair_output_folded(double radius, const ImageFold& fold, PairOutput& out,
                                          ResultVector<double>* distances) const {
  if (!out.resizable()) throw std::logic_error("spatialhash: folded pairs need a resizable output");
  pairs_in_one_search(Search{band_for(radius), radius * radius}, out, distances, &fold);
}

template <int Dim, class T>
void CellList<Dim, T>::pairs_in_one_search(const Search& asked, PairOutput& out,
                                           ResultVector<double>* distances,
                                           const ImageFold* fold) const {
  const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
  const int threads = own_search_threads();
  // Room for the estimate plus a margin, at most kMaxCapacity pairs: pages never written cost
  // nothing, but a request beyond the machine's memory could fail outright.
  constexpr std::size_t kMaxCapacity = std::size_t{1} << 28;
  const std::size_t estimate =
      estimated_entries(asked, Stencil::half, layout_.size(), EstimateUse::room);
  const std::size_t capacity = std::min(kMaxCapacity, room_for_estimate(estimate));
  out.allocate(capacity);
  // With `distances` (pair_list()): rows of sorted positions, measured from the sorted copy.
  const bool measure = distances != nullptr;
  WorkVector<T> sorted_coords;
  PointsView<Dim, T> sorted;
  if (measure) {
    sorted_coords = sorted_copy();
    sorted = PointsView<Dim, T>(sorted_coords.data(), layout_.size());
    sized_for_overwrite(*distances, capacity);
  }
  WorkVector<std::uint32_t> identity;
  const Search search = measure ? for_positions(asked, identity) : asked;
  const RowDistancesFn<Dim, T> row_distances = best_row_distances<Dim, T>();
  const PairFoldFn pair_fold = best_pair_fold(this->context_.simd);
  const index_t* order = measure ? layout_.order.data() : nullptr;
  std::atomic<std::size_t> cursor = 0;
  struct Late {
    std::size_t at;
    std::vector<Pair> pairs;
    std::vector<double> distances;
  };
  std::vector<std::vector<Late>> late(static_cast<std::size_t>(threads));
  parallel_region(threads, [&] {
    CellWork<Dim> work;
    Buffer<Pair> block_pairs;
    Buffer<double> block_distances;
    std::vector<Late>& my_late = late[static_cast<std::size_t>(thread_id())];
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      block_pairs.clear();
      block_distances.clear();
      search_block(b, Stencil::half, measure ? Ids::sorted_position : Ids::original, search, work,
                   [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                     if (measure) {
                       measure_row_distances(row_distances, sorted, s, ids, count,
                                             block_distances.reserve_more(count));
                       block_distances.grow(count);
                     }
                     append_pairs(layout_.order[s], ids, count, order, block_pairs);
                   });
      if (fold != nullptr) {
        // In cache, before the pairs are written out (pair_fold.hpp).
        const std::size_t kept =
            pair_fold(block_pairs.data(), measure ? block_distances.data() : nullptr,
                      block_pairs.size(), fold->first, fold->origin);
        block_pairs.truncate(kept);
        if (measure) block_distances.truncate(kept);
      }
      const std::span<const Pair> found(block_pairs.data(), block_pairs.size());
      const std::span<const double> measured(block_distances.data(), block_distances.size());
      const std::size_t at = cursor.fetch_add(found.size(), std::memory_order_relaxed);
      if (at + found.size() <= capacity) {
        out.write(at, found);
        if (measure) std::copy(measured.begin(), measured.end(), distances->begin() + at);
      } else {
        my_late.push_back(Late{at, std::vector<Pair>(found.begin(), found.end()),
                               std::vector<double>(measured.begin(), measured.end())});
      }
    }
  });
  out.resize(cursor.load());
  if (measure) distances->resize(cursor.load());
  for (const auto& per_thread : late) {
    for (const Late& block : per_thread) {
      out.write(block.at, block.pairs);
      if (measure) {
        std::copy(block.distances.begin(), block.distances.end(), distances->begin() + block.at);
      }
    }
  }
}

template <int Dim, class T>
void CellList<Dim, T>::append_pairs(index_t a, const std::uint32_t* ids, std::uint32_t count,
                                    const index_t* order, Buffer<Pair>& pairs) {
  Pair* row = pairs.reserve_more(count);
  for (std::uint32_t k = 0; k < count; ++k) {
    const index_t b = order == nullptr ? ids[k] : order[ids[k]];
    row[k] = Pair{std::min(a, b), std::max(a, b)};
  }
  pairs.grow(count);
}

template <int Dim, class T>
void CellList<Dim, T>::pairs_counted_first(const Search& search, PairOutput& out) const {
  const auto blocks = static_cast<std::int64_t>(blocks_.size() - 1);
  const int threads = own_search_threads();
  std::vector<std::size_t> start(static_cast<std::size_t>(blocks) + 1, 0);
  parallel_region(threads, [&] {
    CellWork<Dim> work;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::size_t count = 0;
      search_block(
          b, Stencil::half, Ids::none, search, work,
          [&](std::uint32_t, const std::uint32_t*, std::uint32_t found) { count += found; });
      start[b + 1] = count;
    }
  });
  for (std::int64_t b = 0; b < blocks; ++b) start[b + 1] += start[b];
  out.allocate(start.back());
  std::atomic<bool> repeated = true;
  parallel_region(threads, [&] {
    CellWork<Dim> work;
    Buffer<Pair> row_pairs;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::size_t at = start[b];
      search_block(b, Stencil::half, Ids::original, search, work,
                   [&](std::uint32_t s, const std::uint32_t* ids, std::uint32_t count) {
                     // The second search repeats the first exactly; never write past the
                     // block's share even so.
                     if (at + count > start[b + 1]) {
                       repeated = false;
                       return;
                     }
                     row_pairs.clear();
                     append_pairs(layout_.order[s], ids, count, nullptr, row_pairs);
                     out.write(at, std::span<const Pair>(row_pairs.data(), count));
                     at += count;
                   });
    }
  });
  if (!repeated) throw std::logic_error("spatialhash: the pair search was not repeatable");
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                     \
  template void CellList<D, T>::pairs(double, PairSink&) const;                           \
  template void CellList<D, T>::pairs_folded(double, const ImageFold&, PairSink&) const;  \
  template void CellList<D, T>::pair_output(double, PairOutput&) const;                   \
  template PairList CellList<D, T>::pair_list(double, bool) const;                        \
  template void CellList<D, T>::pair_output_folded(double, const ImageFold&, PairOutput&, \
                                                   ResultVector<double>*) const;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
