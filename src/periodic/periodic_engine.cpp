// PeriodicEngine: an inner engine over the wrapped points plus their ghost images, with its
// results mapped back to the caller's indices.
//
// Why pairs come out once and exactly by the rule (index.hpp). The inner engine numbers reals
// before ghosts and reports each of its pairs (a, b) once with a < b, with the double distance of
// the two stored coordinates. For caller indices i < j the rule evaluates w_i against the images
// w_j + s L, and with r < L / 2 at most one shift s qualifies. Those images are exactly what the
// inner engine sees as (real i, real j) for s = 0 and (real i, ghost of j with shift s)
// otherwise; the ghost is present whenever it is within r of w_i (periodic_images.hpp). So: keep
// (real, real); keep (real a, ghost b) when a < origin(b); drop (real a, ghost b) with
// a > origin(b) (that pair is evaluated from the other side, as (real origin(b), ghost of a)),
// a == origin(b) (a point's own image lies L > r away) and (ghost, ghost) (a copy of a pair of
// the other kinds, shifted). A distance is symmetric in double (x - y == -(y - x)), so the
// inner engine's argument order does not matter.
#include "periodic_engine.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../threads.hpp"
#include "periodic_images.hpp"

namespace spatialhash::detail {

namespace {

template <int Dim, class T>
class PeriodicEngine final : public EngineBase<Dim, T> {
 public:
  using Position = typename EngineBase<Dim, T>::Position;
  using Queries = typename EngineBase<Dim, T>::Queries;
  using RowRange = typename EngineBase<Dim, T>::RowRange;

  PeriodicEngine(Engine kind, const Context<Dim, T>& context, const PeriodicBox<Dim>& box)
      : EngineBase<Dim, T>(context), kind_(kind), box_(box) {
    images_ = make_periodic_images(context.points, box_, context.radius, context.threads);
    inner_ = make_engine(kind_, inner_context(images_, context));
  }

  Engine kind() const override { return inner_->kind(); }

  void update(const Context<Dim, T>& context) override {
    // Everything that may throw happens before the state changes. Moving a vector keeps its
    // buffer, so the inner engine's view of fresh.coords stays valid after the move.
    PeriodicImages<Dim> fresh =
        make_periodic_images(context.points, box_, context.radius, context.threads);
    const Context<Dim, double> inner = inner_context(fresh, context);
    if (fresh.size() == images_.size()) {
      inner_->update(inner);
    } else {
      // The ghost count changed: the inner engines update only same-size point sets.
      inner_ = make_engine(kind_, inner);
    }
    images_ = std::move(fresh);
    this->context_ = context;
  }

  void pairs(double radius, PairSink& sink) const override {
    // Locals, so the compiler need not reload them after every write into the sink.
    const index_t reals = static_cast<index_t>(images_.reals);
    const index_t* origin = images_.origin.data();
    const std::array<std::int8_t, 3>* shift = images_.shift.data();
    auto forward = [&](std::span<const PairHit> batch) {
      for (const PairHit& h : batch) {
        if (h.second < reals) {  // both real (reals come first, and first < second)
          sink.push(h);
          continue;
        }
        // (real a, ghost b) is kept when a < origin(b); a ghost's id is at least n, above every
        // caller index, so (ghost, ghost) always fails the same test.
        const index_t ghost = h.second - reals;
        if (h.first < origin[ghost]) {
          sink.push(PairHit{h.first, origin[ghost], h.distance_squared, shift[ghost]});
        }
      }
    };
    PairSink inner_sink(forward);
    inner_->pairs(radius, inner_sink);
    inner_sink.flush();
  }

  /// The inner engine's lists (parallel, and faster than the generic ones built from pairs),
  /// cut to the rule: row i keeps real neighbors (a distance is symmetric, so these rows are
  /// already symmetric) and ghosts of larger indices j, exactly the pairs pairs() reports; each
  /// such ghost entry is mirrored into row j, replacing row j's own view of the ghost of i
  /// (evaluated from the other side, it may round differently at a tie). Rows list kept entries
  /// first, mirrored ones after them in no fixed order.
  void neighbor_lists(const ListRequest& request, NeighborLists& lists) const override {
    NeighborLists inner;
    // Rows are mapped and mirrored below, so the inner engine's order is not kept: unsorted.
    ListRequest inner_request = request;
    inner_request.sorted = false;
    inner_->neighbor_lists(inner_request, inner);
    const PeriodicImages<Dim>& images = images_;
    const std::size_t n = images.reals;
    const auto rows = static_cast<std::int64_t>(n);
    const int threads = this->context_.threads;
    // Pass 1: per row, the entries it keeps; per point, the rows that keep one of its ghosts.
    std::vector<index_t> kept(n, 0), mirrored(n, 0);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(usable_threads(threads))
    for (std::int64_t i = 0; i < rows; ++i) {
      index_t count = 0;
      for (std::size_t k = inner.offsets[i]; k < inner.offsets[i + 1]; ++k) {
        const index_t j = images.original(inner.indices[k]);
        if (!images.is_ghost(inner.indices[k])) {
          ++count;
        } else if (static_cast<index_t>(i) < j) {
          ++count;
          std::atomic_ref<index_t>(mirrored[j]).fetch_add(1, std::memory_order_relaxed);
        }
      }
      kept[i] = count;
    }
    lists.offsets.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i)
      lists.offsets[i + 1] = lists.offsets[i] + kept[i] + mirrored[i];
    lists.indices.resize(lists.offsets[n]);
    lists.distances.resize(request.with_distances ? lists.offsets[n] : 0);
    // Pass 2: fill; mirrored[j] becomes the cursor of row j's mirrored part.
    std::fill(mirrored.begin(), mirrored.end(), index_t{0});
#pragma omp parallel for schedule(dynamic, 1024) num_threads(usable_threads(threads))
    for (std::int64_t i = 0; i < rows; ++i) {
      std::size_t slot = lists.offsets[i];
      for (std::size_t k = inner.offsets[i]; k < inner.offsets[i + 1]; ++k) {
        const index_t id = inner.indices[k];
        const index_t j = images.original(id);
        if (images.is_ghost(id) && !(static_cast<index_t>(i) < j)) continue;
        lists.indices[slot] = j;
        if (request.with_distances) lists.distances[slot] = inner.distances[k];
        ++slot;
        if (!images.is_ghost(id)) continue;
        const std::size_t mirror =
            lists.offsets[j] + kept[j] +
            std::atomic_ref<index_t>(mirrored[j]).fetch_add(1, std::memory_order_relaxed);
        lists.indices[mirror] = static_cast<index_t>(i);
        if (request.with_distances) lists.distances[mirror] = inner.distances[k];
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    const PeriodicImages<Dim>& images = images_;
    auto forward = [&](std::span<const Hit> batch) {
      for (const Hit& h : batch) sink.push(Hit{images.original(h.index), h.distance_squared});
    };
    HitSink inner_sink(forward);
    // With r < L / 2 at most one image of a point lies within r of the wrapped center.
    inner_->ball(wrap_into(box_, center), radius, inner_sink);
    inner_sink.flush();
  }

  /// Distances across the box, to the nearest image: each row from ball(), which measures them.
  void cross_distances(Queries queries, double radius, RowRange row_range, index_t* indices,
                       double* distances) const override {
    this->ball_cross_distances(queries, radius, row_range, indices, distances);
  }

 private:
  static Context<Dim, double> inner_context(const PeriodicImages<Dim>& images,
                                            const Context<Dim, T>& outer) {
    // The lattice spans the box (the images of points near a periodic face lie an edge away):
    // a box too large for the radius is reported as such.
    Context<Dim, double> context;
    try {
      context = make_context(PointsView<Dim, double>(images.coords.data(), images.size()),
                             outer.radius, outer.threads);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(e.what()) +
                            " (in a periodic box, the points include their images across the "
                            "periodic faces, so the extent can be the box's)");
    }
    context.cell_subdivision = outer.cell_subdivision;
    context.simd = outer.simd;
    return context;
  }

  Engine kind_;
  PeriodicBox<Dim> box_;
  PeriodicImages<Dim> images_;
  std::unique_ptr<EngineBase<Dim, double>> inner_;
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_periodic_engine(Engine kind,
                                                         const Context<Dim, T>& context,
                                                         const PeriodicBox<Dim>& box) {
  check_periodic_box(box, context.radius);
  return std::make_unique<PeriodicEngine<Dim, T>>(kind, context, box);
}

#define SPATIALHASH_INSTANTIATE(D, T)                                                           \
  template std::unique_ptr<EngineBase<D, T>> make_periodic_engine(Engine, const Context<D, T>&, \
                                                                  const PeriodicBox<D>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
