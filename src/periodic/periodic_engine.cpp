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
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../exact.hpp"
#include "../gap_fills.hpp"
#include "../growable_buffer.hpp"
#include "../index_vector.hpp"
#include "../threads.hpp"
#include "periodic_images.hpp"
#include "periodic_rule.hpp"

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
    make_periodic_images(context.points, box_, context.radius, context.threads, images_);
    inner_ = make_engine(kind_, inner_context(images_, context));
  }

  Engine kind() const override { return inner_->kind(); }

  void update(const Context<Dim, T>& context) override {
    // The new image set is written into the spare one (the set before last: nothing reads it),
    // and everything that may throw happens before the state changes. Swapping the sets moves
    // their buffers, so the inner engine's view of the new coordinates stays valid.
    make_periodic_images(context.points, box_, context.radius, context.threads, spare_images_);
    const Context<Dim, double> inner = inner_context(spare_images_, context);
    if (spare_images_.size() == images_.size() || inner_->updates_any_size()) {
      inner_->update(inner);
    } else {
      // The ghost count changed (as it does at nearly every step of a simulation), and this inner
      // engine updates only same-size point sets.
      inner_ = make_engine(kind_, inner);
    }
    std::swap(images_, spare_images_);
    this->context_ = context;
  }

  void pairs(double radius, PairSink& sink) const override {
    if (const std::optional<ImageFold> fold = image_fold()) {
      inner_->pairs_folded(radius, *fold, sink);
      return;
    }
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
          sink.emplace(h.first, origin[ghost], h.distance_squared, shift[ghost]);
        }
      }
    };
    PairSink inner_sink(forward);
    inner_->pairs(radius, inner_sink);
    inner_sink.flush();
  }

  /// Half lists by the rewrite of the inner engine's (neighbor_lists).
  bool searches_half_lists() const override { return true; }

  /// The inner engine's pairs cut to the rule (as pairs() forwards them), in the inner list's
  /// own arrays: each chunk moves its kept pairs to its front, in parallel, then the kept pairs
  /// at or past the final length fill the gaps below it (gap_fills.hpp). The pairs keep the
  /// inner order but for those. An inner engine that folds images (the default one) makes the
  /// same cut in its own search instead (image_fold()).
  PairList pair_list(double radius, bool with_distances) const override {
    if (const std::optional<ImageFold> fold = image_fold()) {
      PairList list;
      PairListOutput output(list);
      inner_->pair_output_folded(radius, *fold, output, with_distances ? &list.distances : nullptr);
      return list;
    }
    PairList list = inner_->pair_list(radius, with_distances);
    const std::size_t total = list.pairs.size();
    constexpr std::size_t kChunk = std::size_t{1} << 12;
    const std::size_t chunks = (total + kChunk - 1) / kChunk;
    const auto chunk_count = static_cast<std::int64_t>(chunks);
    const int threads = usable_threads(this->context_.threads);
    std::vector<std::size_t> kept(chunks);
    parallel_region(threads, [&] {
      // Locals, so the compiler need not reload them after every write.
      const auto reals = static_cast<index_t>(images_.reals);
      const index_t* origin = images_.origin.data();
      Pair* pairs = list.pairs.data();
      double* distances = list.distances.data();
#pragma omp for schedule(static) nowait
      for (std::int64_t c = 0; c < chunk_count; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * kChunk;
        const std::size_t end = std::min(total, begin + kChunk);
        // (real, real) is kept as it is; (real a, ghost b) as (a, origin(b)) when
        // a < origin(b). Branch-free: every pair is written, the cursor passes the kept ones.
        std::size_t at = begin;
        for (std::size_t k = begin; k < end; ++k) {
          const Pair p = pairs[k];
          const bool ghost = p.second >= reals;
          const index_t second = ghost ? origin[ghost ? p.second - reals : 0] : p.second;
          pairs[at] = Pair{p.first, second};
          if (with_distances) distances[at] = distances[k];
          at += !ghost || p.first < second;
        }
        kept[static_cast<std::size_t>(c)] = at - begin;
      }
    });
    std::size_t size = 0;
    for (const std::size_t k : kept) size += k;
    const std::vector<EntryMove> fills = gap_fills(kept, kChunk, size);
    const auto fill_count = static_cast<std::int64_t>(fills.size());
    parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 16) nowait
      for (std::int64_t f = 0; f < fill_count; ++f) {
        const EntryMove& fill = fills[static_cast<std::size_t>(f)];
        std::copy_n(list.pairs.begin() + fill.from, fill.count, list.pairs.begin() + fill.to);
        if (with_distances) {
          std::copy_n(list.distances.begin() + fill.from, fill.count,
                      list.distances.begin() + fill.to);
        }
      }
    });
    list.pairs.resize(size);
    if (with_distances) list.distances.resize(size);
    return list;
  }

  /// Resizable outputs straight from the inner engine's folded search; the others take a copy
  /// of pair_list() (its size first, as they need).
  void pair_output(double radius, PairOutput& out) const override {
    if (const std::optional<ImageFold> fold = image_fold(); fold && out.resizable()) {
      inner_->pair_output_folded(radius, *fold, out, nullptr);
      return;
    }
    const PairList list = pair_list(radius, false);
    out.allocate(list.pairs.size());
    out.write(0, list.pairs);
  }

  /// The inner engine's lists, written straight into `lists` (a refill keeps its storage), cut
  /// to the rule: the rows of the reals (the first rows) are kept and the ghosts' rows dropped.
  /// Only the rows of imaged points hold ghosts (periodic_images.hpp), so only they are
  /// rewritten: row j keeps its real neighbors and its ghosts of larger indices i (as i), exactly
  /// the pairs pairs() reports, and takes each i < j whose row kept a ghost of j. Those are read
  /// from the rows of j's own ghosts (the inner lists are symmetric: a distance is the same
  /// double from either side), so row j needs no other row's writes. Rewritten rows list their
  /// real neighbors first, then ghosts of larger indices, then smaller ones.
  ///
  /// Full lists of an inner engine that takes a pair rule (the default one) come from its search
  /// by the periodic rule instead, rows mapped in place (full_lists_by_rule).
  ///
  /// Half lists by the same rewrite of the inner engine's half lists, which hold each inner pair
  /// once, in one of its two rows: a kept (real a, ghost of j) pair, a < j, lands in row a when
  /// the inner row of a held it and in row j when the ghost's row did; so each pair of the rule
  /// is in exactly one of its two rows.
  void neighbor_lists(const ListRequest& request, NeighborLists& lists) const override {
    if (!request.half && rule_searches(request.radius)) {
      full_lists_by_rule(request, lists);
      return;
    }
    // Rows are sorted after this (sorts_rows() is false): the inner engine's order is not kept.
    ListRequest inner_request = request;
    inner_request.sorted = false;
    if (request.half && !inner_->searches_half_lists()) {
      inner_->half_lists_from_pairs(inner_request, lists);
    } else {
      inner_->neighbor_lists(inner_request, lists);
    }
    const PeriodicImages<Dim>& images = images_;
    const std::size_t n = images.reals;
    const auto imaged = static_cast<std::int64_t>(images.imaged.size());
    const int threads = usable_threads(this->context_.threads);
    constexpr std::int64_t kRowsAhead = 8;
    // Each imaged row staged, then written over its own slots while they are in cache (row j
    // reads only itself and ghost rows, which nothing writes). A row whose length changes is set
    // aside, and the rows then move (move_rows): in full lists only where a pair at exactly the
    // radius rounds differently from its two sides, in half lists wherever a ghost's row held a
    // pair.
    std::vector<StagedRows> changed(static_cast<std::size_t>(threads));
    parallel_region(threads, [&] {
      StagedRows& mine = changed[static_cast<std::size_t>(thread_id())];
      std::vector<RuleEntry> row;
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t m = 0; m < imaged; ++m) {
        // The imaged points' own rows lie far apart (their ghosts' rows follow one another):
        // their offsets, then their first entries, are prefetched a few rows ahead.
        if (m + 2 * kRowsAhead < imaged) {
          __builtin_prefetch(lists.offsets.data() + images.imaged[m + 2 * kRowsAhead]);
        }
        if (m + kRowsAhead < imaged) {
          __builtin_prefetch(lists.indices.data() + lists.offsets[images.imaged[m + kRowsAhead]]);
        }
        const std::size_t length =
            stage_rule_row(lists, rule_rows_in_lists(static_cast<std::size_t>(m)),
                           static_cast<std::size_t>(m), request.with_distances, row);
        const index_t j = images.imaged[m];
        if (length != lists.count(j)) {
          mine.rows.push_back(j);
          mine.first.push_back(mine.entries.size());
          mine.entries.insert(mine.entries.end(), row.begin(), row.begin() + length);
          continue;
        }
        std::size_t slot = lists.offsets[j];
        for (std::size_t e = 0; e < length; ++e, ++slot) {
          lists.indices[slot] = row[e].id;
          if (request.with_distances) lists.distances[slot] = row[e].distance;
        }
      }
    });
    if (std::any_of(changed.begin(), changed.end(),
                    [](const StagedRows& s) { return !s.rows.empty(); })) {
      move_rows(changed, request.with_distances, threads, n, lists);
    }
    // The reals' rows come first: the ghosts' rows are dropped.
    lists.offsets.resize(n + 1);
    lists.indices.resize(lists.offsets[n]);
    if (request.with_distances) lists.distances.resize(lists.offsets[n]);
  }

  /// Counts: the inner engine's, corrected across the faces. The inner count of real j holds
  /// every i whose ghost lies within r of w_j, a pair the rule measures from w_j only when j < i;
  /// for i < j it measures w_i against j's ghost. So j's count gains the reals i < j within r of
  /// j's ghosts and loses the ghosts of points i < j within r of w_j, found in the rows of i's
  /// ghosts instead (a distance is the same double from either side). One cross query at the
  /// ghosts yields both: in the row of a ghost of x, a real y < x adds one to x's count and a
  /// real y > x takes one from y's. The two cancel except for a pair at the radius that rounds
  /// differently from its two sides.
  ///
  /// An inner engine that takes a pair rule (the default one) counts by the periodic rule
  /// instead (counts_by_rule): one count search, no cross query.
  void neighbor_counts(double radius, std::span<index_t> counts) const override {
    const PeriodicImages<Dim>& images = images_;
    const std::size_t n = images.reals;
    if (n == 0) return;
    if (counts_by_rule(radius, counts)) return;
    const int threads = usable_threads(this->context_.threads);
    WorkVector<index_t> inner_counts;
    sized_for_overwrite(inner_counts, images.size());
    inner_->neighbor_counts(radius, inner_counts);
    std::copy_n(inner_counts.begin(), n, counts.begin());
    // The ghosts' coordinates follow the reals' (ids n onwards); a point's ghosts are
    // consecutive, so are their rows.
    NeighborLists found;
    inner_->cross_lists(Queries(images.coords.data() + n * Dim, images.ghosts()),
                        ListRequest{.radius = radius}, found);
    // The losses land after the gains, without atomics: each thread files the ids that lose one
    // in a bucket per range of ids, and then each bucket is applied by one thread.
    const auto buckets = static_cast<std::size_t>(threads);
    // An id's bucket is id * bucket_scale >> 32: below `buckets` for every id < n.
    const std::uint64_t bucket_scale = (std::uint64_t{buckets} << 32) / n;
    std::vector<std::vector<index_t>> losses(buckets * buckets);  // [thread][bucket]
    const auto imaged = static_cast<std::int64_t>(images.imaged.size());
    parallel_region(threads, [&] {
      // Locals, so the compiler need not reload them after every push_back.
      const auto reals = static_cast<index_t>(n);
      const index_t* ids = found.indices.data();
      const std::size_t* offsets = found.offsets.data();
      const index_t* first_ghost = images.first_ghost.data();
      std::vector<index_t>* mine = losses.data() + static_cast<std::size_t>(thread_id()) * buckets;
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t m = 0; m < imaged; ++m) {
        const index_t x = images.imaged[m];
        index_t smaller = 0;
        const std::size_t end = offsets[first_ghost[m + 1]];
        for (std::size_t k = offsets[first_ghost[m]]; k < end; ++k) {
          const index_t y = ids[k];
          if (y >= reals) continue;  // a ghost: (ghost, ghost) is no pair of the rule
          if (y < x) {
            ++smaller;
          } else {
            mine[(std::uint64_t{y} * bucket_scale) >> 32].push_back(y);
          }
        }
        counts[x] += smaller;
      }
#pragma omp for schedule(static) nowait
      for (std::int64_t b = 0; b < static_cast<std::int64_t>(buckets); ++b) {
        for (std::size_t t = 0; t < buckets; ++t) {
          for (const index_t y : losses[t * buckets + static_cast<std::size_t>(b)]) --counts[y];
        }
      }
    });
  }

  /// The ghosts as an ImageFold, for an inner engine that folds them in its pair search: it then
  /// keeps exactly the pairs pair_list()'s rewrite keeps (the same test, made on each block's
  /// pairs while they are in cache), with no list of the inner pairs. None without ghosts
  /// (nothing to fold).
  std::optional<ImageFold> image_fold() const {
    if (!inner_->folds_images() || images_.ghosts() == 0) return std::nullopt;
    return ImageFold{static_cast<index_t>(images_.reals), images_.origin.data(),
                     images_.shift.data()};
  }

  /// Whether the inner engine's searches may take the rule (periodic_rule.hpp) at `radius`.
  bool rule_searches(double radius) const {
    return inner_->takes_pair_rule() && PeriodicPairRule<Dim>::sound(box_, radius);
  }

  /// The inner count search with the periodic rule deciding the pairs its float band leaves
  /// undecided (periodic_rule.hpp): the inner counts of the reals are then the counts, and only
  /// theirs are asked for (the reals come first).
  bool counts_by_rule(double radius, std::span<index_t> counts) const {
    if (!rule_searches(radius)) return false;
    const PeriodicPairRule<Dim> rule(images_, box_, radius);
    inner_->neighbor_counts_by_rule(radius, rule, counts.first(images_.reals));
    return true;
  }

  /// Full lists by the inner engine's search with the periodic rule (periodic_rule.hpp): the
  /// reals' rows then hold exactly the rule's neighbors, the ghosts as ghosts. Each imaged row
  /// maps its ghosts to their points in place (a row never changes length), with the rule's
  /// distance where the point's index is the smaller (the inner search measured the pair from
  /// the other side); the ghosts' rows are dropped.
  void full_lists_by_rule(const ListRequest& request, NeighborLists& lists) const {
    const PeriodicPairRule<Dim> rule_of_pairs(images_, box_, request.radius);
    const PairRule rule(rule_of_pairs);
    ListRequest inner_request = request;
    inner_request.sorted = false;  // rows are sorted after this (sorts_rows() is false)
    inner_request.rule = &rule;
    inner_request.rows_wanted = images_.reals;  // the ghosts' rows are dropped
    inner_->neighbor_lists(inner_request, lists);
    const PeriodicImages<Dim>& images = images_;
    const std::size_t n = images.reals;
    const auto imaged = static_cast<std::int64_t>(images.imaged.size());
    constexpr std::int64_t kRowsAhead = 8;
    parallel_region(usable_threads(this->context_.threads), [&] {
      // Locals, so the compiler need not reload them after every write.
      const auto reals = static_cast<index_t>(n);
      const index_t* origin = images.origin.data();
      const std::size_t* offsets = lists.offsets.data();
      index_t* ids = lists.indices.data();
      double* distances = lists.distances.data();
      const bool with_distances = request.with_distances;
#pragma omp for schedule(dynamic, 256) nowait
      for (std::int64_t m = 0; m < imaged; ++m) {
        // The imaged rows lie far apart: offsets, then first entries, prefetched ahead.
        if (m + 2 * kRowsAhead < imaged) {
          __builtin_prefetch(offsets + images.imaged[m + 2 * kRowsAhead]);
        }
        if (m + kRowsAhead < imaged) {
          // A row of 30 neighbors spans two or three lines. (An empty row may have no storage
          // at all: the pointer is only formed for entries that exist.)
          const index_t ahead = images.imaged[m + kRowsAhead];
          const std::size_t length = offsets[ahead + 1] - offsets[ahead];
          if (length > 0) __builtin_prefetch(ids + offsets[ahead]);
          if (length > 16) __builtin_prefetch(ids + offsets[ahead] + 16);
        }
        const index_t j = images.imaged[m];
        const std::size_t first = offsets[j], end = offsets[j + 1];
        if (with_distances) {
          for (std::size_t slot = first; slot < end; ++slot) {
            if (ids[slot] < reals) continue;
            const index_t ghost = ids[slot] - reals;
            ids[slot] = origin[ghost];
            if (origin[ghost] < j) distances[slot] = std::sqrt(rule_of_pairs.across(j, ghost));
          }
          continue;
        }
        for (std::size_t slot = first; slot < end; ++slot) {  // without branches: ghosts at random
          const index_t id = ids[slot];
          const bool ghost = id >= reals;
          ids[slot] = ghost ? origin[ghost ? id - reals : 0] : id;
        }
      }
    });
    lists.offsets.resize(n + 1);
    lists.indices.resize(lists.offsets[n]);
    if (request.with_distances) lists.distances.resize(lists.offsets[n]);
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    const PeriodicImages<Dim>& images = images_;
    auto forward = [&](std::span<const Hit> batch) {
      for (const Hit& h : batch) sink.emplace(images.original(h.index), h.distance_squared);
    };
    HitSink inner_sink(forward);
    // With r < L / 2 at most one image of a point lies within r of the wrapped center.
    inner_->ball(wrap_into(box_, center), radius, inner_sink);
    inner_sink.flush();
  }

  /// Cross queries: the inner engine's at the wrapped positions, ghosts mapped to their points.
  /// With r < L / 2 at most one image of a point lies within r of a wrapped position, so no
  /// point is listed twice. Rows are sorted after this, when asked (sorts_rows() is false).
  void cross_lists(Queries queries, const ListRequest& request, NeighborLists& out) const override {
    const PeriodicImages<Dim>& images = images_;
    const WorkVector<double> wrapped = wrapped_positions(queries);
    ListRequest inner_request = request;
    inner_request.sorted = false;
    inner_->cross_lists(Queries(wrapped.data(), queries.size()), inner_request, out);
    const auto entries = static_cast<std::int64_t>(out.indices.size());
    parallel_region(this->context_.threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t e = 0; e < entries; ++e) out.indices[e] = images.original(out.indices[e]);
    });
  }

  /// Distances across the box, to the nearest image: from the wrapped position to the entry's
  /// point and to each of its ghosts, as the inner search measured them, the nearest kept (the
  /// image within the radius, which the search found).
  void cross_distances(Queries queries, double /*radius*/, RowRange row_range, index_t* indices,
                       double* distances) const override {
    const PeriodicImages<Dim>& images = images_;
    const PointsView<Dim, double> stored(images.coords.data(), images.size());
    const auto m = static_cast<std::int64_t>(queries.size());
    parallel_region(this->context_.threads, [&] {
#pragma omp for schedule(dynamic, 1024) nowait
      for (std::int64_t q = 0; q < m; ++q) {
        const std::array<double, Dim> w =
            wrap_into(box_, position_at(queries, static_cast<std::size_t>(q)));
        const std::pair<std::size_t, std::size_t> row = row_range(static_cast<std::size_t>(q));
        for (std::size_t e = row.first; e < row.second; ++e) {
          double nearest = distance_squared(stored, indices[e], w);
          const auto at = std::lower_bound(images.imaged.begin(), images.imaged.end(), indices[e]);
          if (at != images.imaged.end() && *at == indices[e]) {
            const auto slot = static_cast<std::size_t>(at - images.imaged.begin());
            for (index_t g = images.first_ghost[slot]; g < images.first_ghost[slot + 1]; ++g) {
              nearest = std::min(nearest, distance_squared(stored, images.reals + g, w));
            }
          }
          distances[e] = std::sqrt(nearest);
        }
      }
    });
  }

 private:
  /// The queries wrapped into the box (wrap_into), packed.
  WorkVector<double> wrapped_positions(Queries queries) const {
    WorkVector<double> wrapped;
    sized_for_overwrite(wrapped, queries.size() * Dim);
    const auto m = static_cast<std::int64_t>(queries.size());
    parallel_region(this->context_.threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t q = 0; q < m; ++q) {
        const std::array<double, Dim> w =
            wrap_into(box_, position_at(queries, static_cast<std::size_t>(q)));
        std::copy(w.begin(), w.end(), wrapped.begin() + q * Dim);
      }
    });
    return wrapped;
  }

  struct RuleEntry {
    index_t id;
    double distance;
  };

  /// Where the inner rows that imaged point m's row is made of lie in the inner engine's lists:
  /// the point's own row, then one row per ghost of the point, consecutive.
  struct RuleRows {
    std::size_t own;
    std::size_t first_ghost;
    std::size_t ghosts;
  };

  /// The rows of imaged point m in the inner engine's lists of every id (reals, then ghosts).
  RuleRows rule_rows_in_lists(std::size_t m) const {
    const PeriodicImages<Dim>& images = images_;
    return {images.imaged[m], images.reals + images.first_ghost[m],
            std::size_t{images.first_ghost[m + 1]} - images.first_ghost[m]};
  }

  /// Writes imaged point m's row under the rule, made of the inner `rows`, to the start of `out`
  /// (grown as needed, never shrunk) and returns its length: real neighbors, ghosts of larger
  /// indices as those indices, then the smaller indices found in the rows of m's own ghosts,
  /// with the inner entries' distances. Branch-free: every entry of the inner rows is written,
  /// the cursor advances past the kept ones.
  std::size_t stage_rule_row(const NeighborLists& inner, const RuleRows& rows, std::size_t m,
                             bool with_distances, std::vector<RuleEntry>& staged) const {
    const std::size_t last_row = rows.first_ghost + rows.ghosts;
    const std::size_t bound =
        inner.count(rows.own) + inner.offsets[last_row] - inner.offsets[rows.first_ghost];
    if (staged.size() < bound) staged.resize(2 * bound);
    RuleEntry* out = staged.data();
    const PeriodicImages<Dim>& images = images_;
    const auto n = static_cast<index_t>(images.reals);
    const index_t* origin = images.origin.data();
    const index_t j = images.imaged[m];
    std::size_t count = 0;
    for (std::size_t k = inner.offsets[rows.own]; k < inner.offsets[rows.own + 1]; ++k) {
      const index_t id = inner.indices[k];
      const bool ghost = id >= n;
      const index_t original = ghost ? origin[ghost ? id - n : 0] : id;
      out[count] = {original, with_distances ? inner.distances[k] : 0.0};
      count += !ghost || j < original;
    }
    for (std::size_t k = inner.offsets[rows.first_ghost]; k < inner.offsets[last_row]; ++k) {
      out[count] = {inner.indices[k], with_distances ? inner.distances[k] : 0.0};
      count += inner.indices[k] < j;
    }
    return count;
  }

  /// Rewritten rows whose length differs from the inner engine's, in one thread's order.
  struct StagedRows {
    std::vector<index_t> rows;
    std::vector<std::size_t> first;  ///< per row: where its entries begin
    std::vector<RuleEntry> entries;
    /// Where row r's entries end.
    std::size_t end(std::size_t r) const {
      return r + 1 < rows.size() ? first[r + 1] : entries.size();
    }
  };

  /// A row set aside: StagedRows `thread`'s row `row`.
  struct SetAside {
    std::size_t thread;
    std::size_t row;
  };

  /// The rows set aside in `changed`, in ascending order of point: a merge of the threads' lists,
  /// each ascending (the imaged points are, and a thread takes its loop's chunks in order), with
  /// a sort should one not be.
  static std::vector<SetAside> set_aside_in_order(const std::vector<StagedRows>& changed) {
    std::size_t total = 0;
    for (const StagedRows& s : changed) total += s.rows.size();
    std::vector<SetAside> order;
    order.reserve(total);
    std::vector<std::size_t> next(changed.size(), 0);
    while (order.size() < total) {
      std::size_t best = changed.size();
      for (std::size_t t = 0; t < changed.size(); ++t) {
        if (next[t] == changed[t].rows.size()) continue;
        if (best == changed.size() || changed[t].rows[next[t]] < changed[best].rows[next[best]]) {
          best = t;
        }
      }
      order.push_back(SetAside{best, next[best]++});
    }
    const auto row_of = [&](const SetAside& a) { return changed[a.thread].rows[a.row]; };
    const auto before = [&](const SetAside& a, const SetAside& b) { return row_of(a) < row_of(b); };
    if (!std::is_sorted(order.begin(), order.end(), before)) {
      std::sort(order.begin(), order.end(), before);
    }
    return order;
  }

  /// Gives the first n rows of `lists` (the reals') the lengths of the rows set aside in
  /// `changed`, in place, and writes those rows. The other rows keep their entries and move in
  /// runs (the rows between two set-aside ones move together, by the same distance), one after
  /// the other in an order that never writes over a run not yet moved (move_runs_in_place), in
  /// segments the threads take at once (independent_segments). In place: a few bytes per entry,
  /// where new arrays cost page faults that took ten times as long. The entries of `lists` past row
  /// n (the ghosts' rows, read already) are room: each entry of the new rows was an entry of
  /// `lists`, so they need no more than it holds.
  static void move_rows(const std::vector<StagedRows>& changed, bool with_distances, int threads,
                        std::size_t n, NeighborLists& lists) {
    const std::vector<SetAside> order = set_aside_in_order(changed);
    // The new offsets, in place, and the runs' moves.
    std::vector<EntryMove> moves;
    std::size_t* offsets = lists.offsets.data();
    // In the current run, new offset = old offset + shift_up - shift_down (unsigned, so in two
    // parts): the new and the old lengths of the rows set aside before it.
    std::size_t shift_up = 0;
    std::size_t shift_down = 0;
    std::size_t run = 0;  // the first row of the current run
    std::size_t old_offset = offsets[0];
    for (std::size_t k = 0; k <= order.size(); ++k) {
      const std::size_t end = k < order.size() ? changed[order[k].thread].rows[order[k].row] : n;
      // Rows [run, end) keep their entries.
      const std::size_t from = old_offset;
      for (std::size_t i = run; i < end; ++i) {
        old_offset = offsets[i + 1];
        offsets[i] = offsets[i] + shift_up - shift_down;
      }
      const std::size_t count = old_offset - from;
      const std::size_t to = from + shift_up - shift_down;
      if (count != 0 && to != from) moves.push_back(EntryMove{from, to, count});
      if (k == order.size()) {
        offsets[n] = old_offset + shift_up - shift_down;
        break;
      }
      // Row `end` is set aside: its new length replaces its old one.
      const StagedRows& s = changed[order[k].thread];
      const std::size_t length = s.end(order[k].row) - s.first[order[k].row];
      const std::size_t old_length = offsets[end + 1] - old_offset;
      offsets[end] = old_offset + shift_up - shift_down;
      old_offset = offsets[end + 1];
      shift_up += length;
      shift_down += old_length;
      run = end + 1;
    }
    const std::size_t total = offsets[n];
    if (lists.indices.size() < total) lists.indices.resize(total);  // not expected: see above
    if (with_distances && lists.distances.size() < total) lists.distances.resize(total);
    // In segments that may move at the same time, one per thread (gap_fills.hpp; serial, the
    // moves took 7.5 ms of a 1M-point periodic half list): the few runs between segments are
    // copied aside first and written last.
    const RunSegments cut = independent_segments(moves, threads);
    std::vector<RuleEntry> aside_entries;
    for (const std::size_t k : cut.aside) {
      const EntryMove& m = moves[k];
      for (std::size_t e = m.from; e < m.from + m.count; ++e) {
        aside_entries.push_back({lists.indices[e], with_distances ? lists.distances[e] : 0.0});
      }
    }
    const auto segments = static_cast<std::int64_t>(cut.segments.size());
    parallel_region(threads, [&] {
#pragma omp for schedule(static, 1) nowait
      for (std::int64_t s = 0; s < segments; ++s) {
        const auto [first, end] = cut.segments[static_cast<std::size_t>(s)];
        move_runs_in_place(std::span<const EntryMove>(moves).subspan(first, end - first),
                           [&](const EntryMove& m) { move_run(m, with_distances, lists); });
      }
    });
    std::size_t at = 0;
    for (const std::size_t k : cut.aside) {
      const EntryMove& m = moves[k];
      for (std::size_t e = m.to; e < m.to + m.count; ++e, ++at) {
        lists.indices[e] = aside_entries[at].id;
        if (with_distances) lists.distances[e] = aside_entries[at].distance;
      }
    }
    lists.indices.resize(total);
    if (with_distances) lists.distances.resize(total);
    const auto aside = static_cast<std::int64_t>(order.size());
    parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 256) nowait
      for (std::int64_t k = 0; k < aside; ++k) {
        const SetAside& a = order[static_cast<std::size_t>(k)];
        const StagedRows& s = changed[a.thread];
        std::size_t slot = lists.offsets[s.rows[a.row]];
        for (std::size_t e = s.first[a.row]; e < s.end(a.row); ++e, ++slot) {
          lists.indices[slot] = s.entries[e].id;
          if (with_distances) lists.distances[slot] = s.entries[e].distance;
        }
      }
    });
  }

  /// Moves a run's entries (its source and destination may overlap).
  static void move_run(const EntryMove& m, bool with_distances, NeighborLists& lists) {
    auto move = [&](auto& values) {
      const auto from = values.begin() + static_cast<std::ptrdiff_t>(m.from);
      const auto end = from + static_cast<std::ptrdiff_t>(m.count);
      const auto to = values.begin() + static_cast<std::ptrdiff_t>(m.to);
      if (m.to < m.from) {
        std::copy(from, end, to);
      } else {
        std::copy_backward(from, end, to + static_cast<std::ptrdiff_t>(m.count));
      }
    };
    move(lists.indices);
    if (with_distances) move(lists.distances);
  }

  static Context<Dim, double> inner_context(const PeriodicImages<Dim>& images,
                                            const Context<Dim, T>& outer) {
    // The lattice spans the box (the images of points near a periodic face lie an edge away):
    // a box too large for the radius is reported as such.
    // The images' bounds come with them; only where a ghost's coordinate overflowed (a box near
    // the largest doubles) are they not finite, and make_context then names the point.
    const PointsView<Dim, double> points(images.coords.data(), images.size());
    const bool bounded = std::all_of(images.lower.begin(), images.lower.end(),
                                     [](double x) { return std::isfinite(x); }) &&
                         std::all_of(images.upper.begin(), images.upper.end(),
                                     [](double x) { return std::isfinite(x); });
    Context<Dim, double> context;
    try {
      context = bounded ? make_context_in_bounds(points, outer.radius, outer.threads, images.lower,
                                                 images.upper)
                        : make_context(points, outer.radius, outer.threads);
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
  /// The image set before the current one, kept by update() as the storage of the next.
  PeriodicImages<Dim> spare_images_;
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
