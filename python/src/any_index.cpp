// TypedIndex<Dim, T>: AnyIndex implemented by forwarding to spatialhash::Index<Dim, T>, plus the
// per-position-radius ball queries that Index has no array form for.
#include "any_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "../../src/threads.hpp"
#include "shortest.hpp"

namespace spatialhash::python {

namespace {

template <int Dim, class T>
class TypedIndex final : public AnyIndex {
 public:
  TypedIndex(std::span<const T> coords, double radius, Options options,
             std::span<const double> boxsize)
      : index_(make_index(coords, radius, options, boxsize)) {}

  int dim() const override { return Dim; }
  std::size_t size() const override { return index_.size(); }
  double radius() const override { return index_.radius(); }
  Engine engine() const override { return index_.engine(); }
  int threads() const override { return index_.threads(); }

  PairList pairs(const ListOptions& options) const override { return index_.pairs(options); }
  void pairs(PairOutput& out, double radius) const override { index_.pairs(out, radius); }
  NeighborLists neighbor_lists(const ListOptions& options) const override {
    return index_.neighbor_lists(options);
  }
  NeighborRows neighbor_rows(const ListOptions& options) const override {
    return index_.neighbor_rows(options);
  }
  std::vector<index_t> neighbor_counts(double radius) const override {
    return index_.neighbor_counts(radius);
  }

  NeighborLists cross(std::span<const double> queries, const ListOptions& options) const override {
    return index_.cross(interleaved<Dim, double>(queries), options);
  }
  NeighborRows cross_rows(std::span<const double> queries,
                          const ListOptions& options) const override {
    return index_.cross_rows(interleaved<Dim, double>(queries), options);
  }

  NeighborLists balls(std::span<const double> queries, std::span<const double> radii,
                      bool sorted) const override {
    const PointsView<Dim, double> positions = interleaved<Dim, double>(queries);
    check_balls(positions, radii);
    if (batched(radii)) return index_.cross(positions, {.radius = radii[0], .sorted = sorted});
    std::vector<std::vector<index_t>> rows(positions.size());
    for_each_ball(positions, [&](std::int64_t q, const typename Index<Dim, T>::Position& center,
                                 std::vector<index_t>& found) {
      index_.ball(center, radii[q], found, sorted);
      rows[q].assign(found.begin(), found.end());
    });
    NeighborLists lists;
    lists.offsets.assign(rows.size() + 1, 0);
    for (std::size_t q = 0; q < rows.size(); ++q) {
      lists.offsets[q + 1] = lists.offsets[q] + rows[q].size();
    }
    lists.indices.reserve(lists.offsets.back());
    for (const auto& row : rows) lists.indices.insert(lists.indices.end(), row.begin(), row.end());
    return lists;
  }

  void ball(std::span<const double> position, double radius, bool sorted,
            std::vector<index_t>& out) const override {
    check_balls(interleaved<Dim, double>(position), std::span<const double>(&radius, 1));
    typename Index<Dim, T>::Position center;
    for (int k = 0; k < Dim; ++k) center[k] = position[static_cast<std::size_t>(k)];
    index_.ball(center, radius, out, sorted);
  }

  std::vector<index_t> ball_counts(std::span<const double> queries,
                                   std::span<const double> radii) const override {
    const PointsView<Dim, double> positions = interleaved<Dim, double>(queries);
    check_balls(positions, radii);
    std::vector<index_t> counts(positions.size());
    if (batched(radii)) {
      const NeighborLists lists = index_.cross(positions, {.radius = radii[0]});
      for (std::size_t q = 0; q < counts.size(); ++q) {
        counts[q] = static_cast<index_t>(lists.count(q));
      }
      return counts;
    }
    for_each_ball(positions, [&](std::int64_t q, const typename Index<Dim, T>::Position& center,
                                 std::vector<index_t>& found) {
      index_.ball(center, radii[q], found);
      counts[q] = static_cast<index_t>(found.size());
    });
    return counts;
  }

  void update(Coords coords) override {
    const auto* mine = std::get_if<std::span<const T>>(&coords);
    if (mine == nullptr) {
      throw InvalidArgument("spatialhash: update() needs coordinates of the index's precision");
    }
    index_.update(*mine);
  }

 private:
  /// Runs per_ball(q, center of query q, found) for every query on the index's threads, with
  /// `found` a vector of the thread's, reused from query to query. Exceptions must not leave an
  /// OpenMP region: the first is kept and rethrown after it.
  template <class PerBall>
  void for_each_ball(PointsView<Dim, double> positions, PerBall&& per_ball) const {
    const auto m = static_cast<std::int64_t>(positions.size());
    std::exception_ptr error;
    detail::parallel_region(m >= kBatchedFrom ? threads() : 1, [&] {
      std::vector<index_t> found;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t q = 0; q < m; ++q) {
        try {
          typename Index<Dim, T>::Position center;
          for (int k = 0; k < Dim; ++k) center[k] = positions.coord(q, k);
          per_ball(q, center, found);
        } catch (...) {
#pragma omp critical(spatialhash_python_balls)
          if (!error) error = std::current_exception();
        }
      }
    });
    if (error) std::rethrow_exception(error);
  }

  static Index<Dim, T> make_index(std::span<const T> coords, double radius, Options options,
                                  std::span<const double> boxsize) {
    if (boxsize.empty()) return Index<Dim, T>(coords, radius, options);
    if (boxsize.size() != static_cast<std::size_t>(Dim)) {
      throw InvalidArgument("spatialhash: boxsize has " + std::to_string(boxsize.size()) +
                            " entries for points of dimension " + std::to_string(Dim));
    }
    PeriodicBox<Dim> box;
    for (int k = 0; k < Dim; ++k) {
      box.periodic[k] = std::isfinite(boxsize[k]) && boxsize[k] > 0.0;
      box.upper[k] = box.periodic[k] ? boxsize[k] : 0.0;
    }
    return Index<Dim, T>(coords, radius, box, options);
  }

  /// Fewer queries than this are searched one by one on the calling thread (Index::ball): a
  /// batched search, or waking the other threads, costs more than they do (a single position:
  /// 73 us through Index::cross, 7 us for cKDTree; docs/python.md).
  static constexpr std::int64_t kBatchedFrom = 64;

  /// Whether the index's batched cross query serves the queries (sorted by cell, each cell's
  /// stencil gathered once): at least kBatchedFrom of them, all with the same radius.
  static bool batched(std::span<const double> radii) {
    return static_cast<std::int64_t>(radii.size()) >= kBatchedFrom &&
           std::all_of(radii.begin(), radii.end(), [&](double r) { return r == radii[0]; });
  }

  /// Names the first bad position or radius before any search starts.
  void check_balls(const PointsView<Dim, double>& positions, std::span<const double> radii) const {
    if (radii.size() != positions.size()) {
      throw InvalidArgument("spatialhash: " + std::to_string(radii.size()) + " radii for " +
                            std::to_string(positions.size()) + " query positions");
    }
    for (std::size_t q = 0; q < positions.size(); ++q) {
      for (int k = 0; k < Dim; ++k) {
        if (!std::isfinite(positions.coord(q, k))) {
          throw InvalidArgument("spatialhash: query position " + std::to_string(q) +
                                " has a non-finite coordinate " + std::to_string(k));
        }
      }
      const double r = radii[q];
      if (!std::isfinite(r) || !(r >= kMinRadius) || r > index_.radius()) {
        throw InvalidArgument("spatialhash: radius " + detail::shortest(r) + " of query position " +
                              std::to_string(q) + " must be finite, at least " +
                              detail::shortest(kMinRadius) + " and at most the index radius " +
                              detail::shortest(index_.radius()));
      }
    }
  }

  Index<Dim, T> index_;
};

template <class T>
std::unique_ptr<AnyIndex> make_typed(int dim, std::span<const T> coords, double radius,
                                     Options options, std::span<const double> boxsize) {
  if (dim == 2) return std::make_unique<TypedIndex<2, T>>(coords, radius, options, boxsize);
  if (dim == 3) return std::make_unique<TypedIndex<3, T>>(coords, radius, options, boxsize);
  throw InvalidArgument("spatialhash: points must have 2 or 3 coordinates, got " +
                        std::to_string(dim));
}

}  // namespace

std::unique_ptr<AnyIndex> make_any_index(int dim, Coords coords, double radius, Options options,
                                         std::span<const double> boxsize) {
  return std::visit([&](auto span) { return make_typed(dim, span, radius, options, boxsize); },
                    coords);
}

}  // namespace spatialhash::python
