// SizedIndex: levels of Index by size class, candidate search per level and across levels, and
// the exact size rule deciding every candidate (see sized_particles.hpp).
#include "spatialhash/sized_particles.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "engine_base.hpp"
#include "shortest.hpp"
#include "sinks.hpp"
#include "sort_rows.hpp"
#include "spatialhash/index.hpp"
#include "threads.hpp"

namespace spatialhash {

namespace detail {

namespace {

/// At most this many size classes: a wider spread of radii coarsens the classes instead.
constexpr double kMaxLevels = 64.0;

const char* axis_name(int k) {
  return k == 0 ? "x" : (k == 1 ? "y" : "z");
}

/// Throws InvalidArgument for a null or too-narrow view, or a non-finite coordinate (naming the
/// first bad point and axis).
template <int Dim, class T>
void check_points(const PointsView<Dim, T>& points) {
  if (points.count > 0 && points.data == nullptr) {
    throw InvalidArgument("spatialhash: null point data with a non-zero count");
  }
  if (points.stride < static_cast<std::size_t>(Dim)) {
    throw InvalidArgument("spatialhash: stride " + std::to_string(points.stride) +
                          " is smaller than the dimension " + std::to_string(Dim));
  }
  for (std::size_t i = 0; i < points.count; ++i) {
    for (int k = 0; k < Dim; ++k) {
      if (!std::isfinite(points.coord(i, k))) {
        throw InvalidArgument("spatialhash: point " + std::to_string(i) + " has a non-finite " +
                              axis_name(k) + " coordinate");
      }
    }
  }
}

/// The radii widened to double; throws InvalidArgument naming the first radius that is not
/// finite and > 0, or a count that differs from the point count.
template <class T>
std::vector<double> checked_radii(std::span<const T> radii, std::size_t points) {
  if (radii.size() != points) {
    throw InvalidArgument("spatialhash: got " + std::to_string(radii.size()) + " radii for " +
                          std::to_string(points) + " points");
  }
  std::vector<double> result(radii.begin(), radii.end());
  for (std::size_t i = 0; i < result.size(); ++i) {
    if (!std::isfinite(result[i]) || !(result[i] > 0.0)) {
      throw InvalidArgument("spatialhash: radius " + std::to_string(i) +
                            " must be finite and > 0, got " + shortest(result[i]));
    }
    // Two radii add up to an index radius (SizeRule::sum): half the Index's upper limit.
    if (result[i] < kMinRadius || result[i] > kMaxRadius / 2) {
      throw InvalidArgument("spatialhash: radius " + std::to_string(i) + " is " +
                            shortest(result[i]) + ", outside the supported range [" +
                            shortest(kMinRadius) + ", " + shortest(kMaxRadius / 2) + "]");
    }
  }
  return result;
}

/// The squared distance two particles may be apart and still be neighbors (the exact rule).
inline double limit_squared(SizeRule rule, double ri, double rj) {
  const double reach = rule == SizeRule::sum ? ri + rj : std::max(ri, rj);
  return reach * reach;
}

}  // namespace

/// The points of one level sorted by cell of a dense lattice (cells numbered x fastest), for the
/// cross-level searches: a query at p with reach w visits the rows of cells that meet the box
/// p +- w, each row a contiguous run of points, and decides every candidate with the exact rule.
/// The cell size only affects speed: candidates are never missed, see cells_of().
template <int Dim, class T>
struct SizedGrid {
  std::array<double, Dim> origin{};
  double edge = 1.0;
  std::array<std::int64_t, Dim> dims{};  ///< cells per axis (>= 1)
  std::vector<std::uint32_t> start;      ///< cell -> first sorted point; one past the last cell
  std::vector<T> coords;                 ///< Dim values per sorted point
  std::vector<double> radii;             ///< sorted point -> radius
  std::vector<index_t> original;         ///< sorted point -> index in the caller's array

  std::size_t size() const { return original.size(); }
  std::array<double, Dim> position(std::size_t s) const {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[s * Dim + k]);
    return p;
  }

  /// Cell of coordinate x on axis k, clamped into the lattice. Monotone in x (IEEE subtraction,
  /// division and floor are), which is all the box search relies on.
  std::int64_t cell(int k, double x) const {
    const double c = std::floor((x - origin[k]) / edge);
    return c <= 0.0 ? 0 : (c >= static_cast<double>(dims[k] - 1) ? dims[k] - 1 : std::int64_t(c));
  }

  /// Sorts `coords` (members in order, Dim values each) into cells of edge about `wanted`,
  /// coarser where the lattice would have many more cells than points.
  void build(const std::vector<T>& member_coords, const std::vector<double>& member_radii,
             const std::vector<index_t>& member_original, double wanted) {
    const std::size_t n = member_original.size();
    std::array<double, Dim> lo, hi;
    lo.fill(0.0);
    hi.fill(0.0);
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < Dim; ++k) {
        const double x = member_coords[i * Dim + k];
        lo[k] = i == 0 ? x : std::min(lo[k], x);
        hi[k] = i == 0 ? x : std::max(hi[k], x);
      }
    }
    double widest = 0.0;
    for (int k = 0; k < Dim; ++k) {
      const double extent = hi[k] - lo[k];
      if (!std::isfinite(extent)) {
        throw InvalidArgument(std::string("spatialhash: the extent of the points along ") +
                              axis_name(k) + " overflows double precision");
      }
      widest = std::max(widest, extent);
    }
    origin = lo;
    edge = wanted;
    // Invariant: edge stays finite and > 0, so (x - origin) / edge in cell() is never NaN.
    // The count may overflow to infinity (an extent far beyond the edge); a coarsening that
    // would pass the widest extent stops there, at 2^Dim cells at most.
    const double limit = 2.0 * static_cast<double>(n) + 64.0;
    for (;;) {
      double cells = 1.0;
      for (int k = 0; k < Dim; ++k) cells *= std::floor((hi[k] - lo[k]) / edge) + 1.0;
      if (cells <= limit) break;
      const double coarser = edge * std::pow(cells / limit, 1.0 / Dim) * 1.01;
      if (!(coarser < widest)) {
        edge = widest;
        break;
      }
      edge = coarser;
    }
    std::size_t cells = 1;
    for (int k = 0; k < Dim; ++k) {
      dims[k] = static_cast<std::int64_t>(std::floor((hi[k] - lo[k]) / edge)) + 1;
      cells *= static_cast<std::size_t>(dims[k]);
    }
    std::vector<std::uint32_t> cell_of(n);
    start.assign(cells + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t id = 0;
      for (int k = Dim - 1; k >= 0; --k) id = id * dims[k] + cell(k, member_coords[i * Dim + k]);
      cell_of[i] = static_cast<std::uint32_t>(id);
      ++start[cell_of[i] + 1];
    }
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<std::uint32_t> cursor(start.begin(), start.end() - 1);
    coords.resize(n * Dim);
    radii.resize(n);
    original.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t s = cursor[cell_of[i]]++;
      for (int k = 0; k < Dim; ++k) coords[s * Dim + k] = member_coords[i * Dim + k];
      radii[s] = member_radii[i];
      original[s] = member_original[i];
    }
  }

  /// Cell range [lo, hi] per axis that holds every point whose exact d2 to p can be <= w * w.
  /// Such a point has |x - p| <= w (1 + 2^-50) on each axis (fl(dx * dx) <= d2, then the
  /// rounding of dx and of the square); the margin 2^-30 (w + |p|) also covers the rounding of
  /// p -+ w', and cell() is monotone, so the point's cell lies in the range.
  void cells_of(const std::array<double, Dim>& p, double w, std::array<std::int64_t, Dim>& lo,
                std::array<std::int64_t, Dim>& hi) const {
    constexpr double kMargin = 0x1p-30;
    for (int k = 0; k < Dim; ++k) {
      const double wide = w + kMargin * (w + std::abs(p[k]));
      lo[k] = cell(k, p[k] - wide);
      hi[k] = cell(k, p[k] + wide);
    }
  }

  /// Calls f(sorted point, d2) for every point in the cells that meet the box p +- w (a
  /// superset of the points with d2 <= w * w), d2 exact as in the rule.
  /// Only sorted points >= `first` are visited.
  template <class F>
  void visit_box(const std::array<double, Dim>& p, double w, F&& f, std::uint32_t first = 0) const {
    if (original.empty()) return;
    std::array<std::int64_t, Dim> lo, hi;
    cells_of(p, w, lo, hi);
    const auto row = [&](std::int64_t first_cell, std::int64_t last_cell) {
      for (std::uint32_t s = std::max(start[first_cell], first); s < start[last_cell + 1]; ++s) {
        double d2 = 0.0;
        for (int k = 0; k < Dim; ++k) {
          const double d = static_cast<double>(coords[std::size_t{s} * Dim + k]) - p[k];
          d2 += d * d;
        }
        f(s, d2);
      }
    };
    if constexpr (Dim == 2) {
      for (std::int64_t y = lo[1]; y <= hi[1]; ++y) row(y * dims[0] + lo[0], y * dims[0] + hi[0]);
    } else {
      for (std::int64_t z = lo[2]; z <= hi[2]; ++z) {
        for (std::int64_t y = lo[1]; y <= hi[1]; ++y) {
          const std::int64_t base = (z * dims[1] + y) * dims[0];
          row(base + lo[0], base + hi[0]);
        }
      }
    }
  }

  /// Rough cost of one query with reach w: rows visited plus expected candidates.
  double query_cost(double w) const {
    double rows = 1.0, fraction = 1.0;
    for (int k = 0; k < Dim; ++k) {
      const double span = std::min(static_cast<double>(dims[k]), 2.0 * w / edge + 2.0);
      if (k > 0) rows *= span;
      fraction *= span / static_cast<double>(dims[k]);
    }
    return 8.0 + rows + fraction * static_cast<double>(size());
  }
};

/// One size class: an owned copy of its points (the Index borrows it; moving a std::vector keeps
/// its buffer, so moving a Level keeps the Index valid), their radii and original indices.
template <int Dim, class T>
struct SizedLevel {
  double max_radius = 0.0;             ///< largest radius in the class (R)
  std::vector<T> coords;               ///< Dim values per member, in member order
  std::vector<index_t> original;       ///< member -> index in the caller's array
  std::vector<double> radii;           ///< member radii, in double
  std::optional<Index<Dim, T>> index;  ///< built at index_radius(), for the pairs inside
  SizedGrid<Dim, T> grid;              ///< the members by cell of edge R, for cross-level pairs

  std::size_t size() const { return original.size(); }
  PointsView<Dim, T> view() const { return PointsView<Dim, T>(coords.data(), original.size()); }
  std::array<double, Dim> position(std::size_t member) const {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = static_cast<double>(coords[member * Dim + k]);
    return p;
  }
};

/// A unit of candidate search: the pairs inside level `from` (when to == from), or box queries
/// of members [begin, end) of level `from` into the grid of level `to` (smaller or larger: each
/// pair of levels is searched once, from the side with the cheaper estimate).
struct SizedTask {
  enum Kind { index_pairs, grid_pairs, cross };
  Kind kind;
  std::size_t from, to, begin, end;
};

template <int Dim, class T>
struct SizedLevels {
  SizeRule rule = SizeRule::sum;
  std::size_t count = 0;
  int threads = 1;                         ///< for the array queries
  std::vector<SizedLevel<Dim, T>> levels;  ///< ascending radii
  std::vector<SizedTask> tasks;            ///< in-level tasks first (the largest), then cross

  /// Reach of a box query from a member of radius r into a level of largest radius R.
  double cross_reach(double r, double R) const {
    return rule == SizeRule::sum ? r + R : std::max(r, R);
  }

  /// Splits the cross-level searches into tasks: for each pair of levels, the members of the
  /// side whose queries are estimated cheaper go into the other side's grid.
  void make_cross_tasks() {
    constexpr double kTaskWork = 1 << 18;  // estimated candidates + rows per task
    std::vector<SizedTask> cross;
    for (std::size_t a = 0; a < levels.size(); ++a) {
      for (std::size_t b = a + 1; b < levels.size(); ++b) {
        const double reach = cross_reach(levels[a].max_radius, levels[b].max_radius);
        const double a_into_b = levels[b].grid.query_cost(reach);
        const double b_into_a = levels[a].grid.query_cost(reach);
        const bool from_a = static_cast<double>(levels[a].size()) * a_into_b <=
                            static_cast<double>(levels[b].size()) * b_into_a;
        const std::size_t from = from_a ? a : b, to = from_a ? b : a;
        const double per_query = from_a ? a_into_b : b_into_a;
        const auto block = static_cast<std::size_t>(std::clamp(kTaskWork / per_query, 1.0, 4096.0));
        for (std::size_t q = 0; q < levels[from].size(); q += block) {
          cross.push_back(
              {SizedTask::cross, from, to, q, std::min(levels[from].size(), q + block)});
        }
      }
    }
    std::vector<SizedTask> all;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      if (levels[l].index) {
        all.push_back({SizedTask::index_pairs, l, l, 0, 0});
        continue;
      }
      const double per_query =
          0.5 * levels[l].grid.query_cost(cross_reach(levels[l].max_radius, levels[l].max_radius));
      const auto block = static_cast<std::size_t>(std::clamp(kTaskWork / per_query, 1.0, 4096.0));
      for (std::size_t q = 0; q < levels[l].size(); q += block) {
        all.push_back({SizedTask::grid_pairs, l, l, q, std::min(levels[l].size(), q + block)});
      }
    }
    all.insert(all.end(), cross.begin(), cross.end());
    tasks = std::move(all);
  }

  double index_radius(const SizedLevel<Dim, T>& level) const {
    return rule == SizeRule::sum ? level.max_radius + level.max_radius : level.max_radius;
  }

  /// Gathers each level's points out of `points` into `out` (one buffer per level).
  std::vector<std::vector<T>> gather(const PointsView<Dim, T>& points) const {
    std::vector<std::vector<T>> out(levels.size());
    for (std::size_t l = 0; l < levels.size(); ++l) {
      out[l].reserve(levels[l].original.size() * Dim);
      for (index_t i : levels[l].original) {
        for (int k = 0; k < Dim; ++k) out[l].push_back(points.data[i * points.stride + k]);
      }
    }
    return out;
  }

  /// Runs one task, calling emit(PairHit) for each neighbor pair (first < second, caller's
  /// indices, exact d2).
  template <class Emit>
  void run(const SizedTask& task, Emit&& emit) const {
    const SizedLevel<Dim, T>& from = levels[task.from];
    const auto decide = [&](const SizedLevel<Dim, T>& other, std::size_t a, std::size_t b,
                            double d2) {
      if (d2 > limit_squared(rule, from.radii[a], other.radii[b])) return;
      const index_t i = from.original[a], j = other.original[b];
      emit(i < j ? PairHit{i, j, d2} : PairHit{j, i, d2});
    };
    if (task.kind == SizedTask::index_pairs) {
      from.index->for_each_pair([&](index_t a, index_t b, double d2) { decide(from, a, b, d2); });
      return;
    }
    if (task.kind == SizedTask::grid_pairs) {
      // Sorted points [begin, end) of the level against the sorted points after them: each
      // pair once. Same reach argument as below, with R the level's own largest radius.
      const SizedGrid<Dim, T>& g = from.grid;
      for (std::size_t s = task.begin; s < task.end; ++s) {
        const double rs = g.radii[s];
        const index_t i = g.original[s];
        g.visit_box(
            g.position(s), cross_reach(rs, from.max_radius),
            [&](std::uint32_t t, double d2) {
              if (d2 > limit_squared(rule, rs, g.radii[t])) return;
              const index_t j = g.original[t];
              emit(i < j ? PairHit{i, j, d2} : PairHit{j, i, d2});
            },
            static_cast<std::uint32_t>(s + 1));
      }
      return;
    }
    // rj <= R for every member j of `to`, and rounding is monotone, so the rule's reach of a
    // pair (a, j) is <= reach(ra, R): the box query with that reach sees every neighbor.
    const SizedGrid<Dim, T>& to = levels[task.to].grid;
    for (std::size_t a = task.begin; a < task.end; ++a) {
      const double ra = from.radii[a];
      const double reach = cross_reach(ra, levels[task.to].max_radius);
      const index_t i = from.original[a];
      to.visit_box(from.position(a), reach, [&](std::uint32_t s, double d2) {
        if (d2 > limit_squared(rule, ra, to.radii[s])) return;
        const index_t j = to.original[s];
        emit(i < j ? PairHit{i, j, d2} : PairHit{j, i, d2});
      });
    }
  }

  /// Runs every task on `threads` threads; per_task(task number, task) does the work.
  template <class PerTask>
  void run_all(int threads, PerTask&& per_task) const {
    const auto n = static_cast<std::int64_t>(tasks.size());
    detail::parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 1) nowait
      for (std::int64_t t = 0; t < n; ++t) per_task(static_cast<std::size_t>(t), tasks[t]);
    });
  }

  /// Every neighbor pair once, in task order (deterministic for a given input and options).
  std::vector<PairHit> collect(int threads) const {
    std::vector<std::vector<PairHit>> parts(tasks.size());
    run_all(threads, [&](std::size_t t, const SizedTask& task) {
      run(task, [&](const PairHit& h) { parts[t].push_back(h); });
    });
    std::vector<std::size_t> start(parts.size() + 1, 0);
    for (std::size_t t = 0; t < parts.size(); ++t) start[t + 1] = start[t] + parts[t].size();
    std::vector<PairHit> all(start.back());
    const auto n = static_cast<std::int64_t>(parts.size());
    detail::parallel_region(threads, [&] {
#pragma omp for schedule(dynamic, 1) nowait
      for (std::int64_t t = 0; t < n; ++t) {
        std::copy(parts[t].begin(), parts[t].end(), all.begin() + start[t]);
        std::vector<PairHit>().swap(parts[t]);
      }
    });
    return all;
  }
};

namespace {

/// Splits the points into size classes (one class when `levels` is off) and builds their Index.
template <int Dim, class T>
void build_levels(SizedLevels<Dim, T>& s, const PointsView<Dim, T>& points,
                  const std::vector<double>& radii, const SizedOptions& options) {
  const std::size_t n = radii.size();
  std::vector<std::size_t> class_of(n, 0);
  if (options.levels && n > 0) {
    const auto [lo, hi] = std::minmax_element(radii.begin(), radii.end());
    const double spread = *hi / *lo;
    double ratio = options.level_ratio;
    if (std::log(spread) / std::log(ratio) > kMaxLevels) ratio = std::pow(spread, 1.0 / kMaxLevels);
    // Class k holds radii in (bound[k-1], bound[k]]; only the order of classes matters for
    // correctness (each level's own largest radius sizes its search).
    std::vector<double> bound{*lo * ratio};
    while (bound.back() < *hi) bound.push_back(bound.back() * ratio);
    for (std::size_t i = 0; i < n; ++i) {
      class_of[i] = static_cast<std::size_t>(
          std::lower_bound(bound.begin(), bound.end(), radii[i]) - bound.begin());
    }
  }
  const std::size_t classes = n == 0 ? 0 : *std::max_element(class_of.begin(), class_of.end()) + 1;
  std::vector<std::size_t> level_of_class(classes, classes);
  for (std::size_t i = 0; i < n; ++i) level_of_class[class_of[i]] = 0;  // mark non-empty
  std::size_t used = 0;
  for (std::size_t& l : level_of_class) l = l == 0 ? used++ : l;
  s.levels.resize(used);
  for (std::size_t i = 0; i < n; ++i) {
    SizedLevel<Dim, T>& level = s.levels[level_of_class[class_of[i]]];
    level.original.push_back(static_cast<index_t>(i));
    level.radii.push_back(radii[i]);
    level.max_radius = std::max(level.max_radius, radii[i]);
  }
  auto buffers = s.gather(points);
  for (std::size_t l = 0; l < used; ++l) {
    SizedLevel<Dim, T>& level = s.levels[l];
    level.coords = std::move(buffers[l]);
    const double radius = s.index_radius(level);
    // With several levels the grids below find every pair, in-level ones too; a single level
    // (equal radii, or levels off) is searched by its Index.
    if (used == 1) {
      try {
        level.index.emplace(level.view(), radius, options.index);
      } catch (const InvalidArgument& e) {
        // The Index's message names its radius, which the caller never passed.
        throw InvalidArgument(std::string(e.what()) + " (with one size class, the particles are " +
                              "searched by an Index of radius " + shortest(radius) +
                              ", the largest distance at which two of them can touch)");
      }
    }
  }
  if (used > 1) {
    for (SizedLevel<Dim, T>& level : s.levels) {
      level.grid.build(level.coords, level.radii, level.original, level.max_radius);
    }
  }
  s.make_cross_tasks();
}

}  // namespace
}  // namespace detail

template <int Dim, class T>
SizedIndex<Dim, T>::SizedIndex(PointsView<Dim, T> points, std::span<const T> radii, SizeRule rule,
                               SizedOptions options) {
  if (!std::isfinite(options.level_ratio) || !(options.level_ratio > 1.0)) {
    throw InvalidArgument("spatialhash: level_ratio must be finite and > 1, got " +
                          detail::shortest(options.level_ratio));
  }
  if (rule != SizeRule::sum && rule != SizeRule::max) {
    throw InvalidArgument("spatialhash: unknown SizeRule");
  }
  detail::check_points(points);
  if (points.count >= std::numeric_limits<index_t>::max()) {
    throw InvalidArgument("spatialhash: " + std::to_string(points.count) +
                          " points exceed the 32-bit index limit");
  }
  const std::vector<double> widened = detail::checked_radii(radii, points.count);
  levels_ = std::make_unique<detail::SizedLevels<Dim, T>>();
  levels_->rule = rule;
  levels_->count = points.count;
  levels_->threads = detail::checked_threads(options.index.threads);
  detail::build_levels(*levels_, points, widened, options);
}

template <int Dim, class T>
SizedIndex<Dim, T>::SizedIndex(std::span<const T> coords, std::span<const T> radii, SizeRule rule,
                               SizedOptions options)
    : SizedIndex(interleaved<Dim, T>(coords), radii, rule, options) {}

template <int Dim, class T>
SizedIndex<Dim, T>::SizedIndex(SizedIndex&&) noexcept = default;
template <int Dim, class T>
SizedIndex<Dim, T>& SizedIndex<Dim, T>::operator=(SizedIndex&&) noexcept = default;
template <int Dim, class T>
SizedIndex<Dim, T>::~SizedIndex() = default;

template <int Dim, class T>
std::size_t SizedIndex<Dim, T>::size() const {
  return levels_->count;
}
template <int Dim, class T>
SizeRule SizedIndex<Dim, T>::rule() const {
  return levels_->rule;
}
template <int Dim, class T>
std::size_t SizedIndex<Dim, T>::levels() const {
  return levels_->levels.size();
}

template <int Dim, class T>
void SizedIndex<Dim, T>::update(PointsView<Dim, T> points) {
  if (points.size() != size()) {
    throw InvalidArgument("spatialhash: update() got " + std::to_string(points.size()) +
                          " points, the index holds " + std::to_string(size()));
  }
  detail::check_points(points);
  auto& levels = levels_->levels;
  auto fresh = levels_->gather(points);
  std::vector<detail::SizedGrid<Dim, T>> grids(levels.size());
  for (std::size_t l = 0; levels.size() > 1 && l < levels.size(); ++l) {
    grids[l].build(fresh[l], levels[l].radii, levels[l].original, levels[l].max_radius);
  }
  std::size_t done = 0;
  try {
    for (; done < levels.size(); ++done) {
      if (!levels[done].index) continue;
      levels[done].index->update(PointsView<Dim, T>(fresh[done].data(), levels[done].size()));
    }
  } catch (...) {
    // Put the levels already moved back on their old points: all or nothing.
    for (std::size_t l = 0; l < done; ++l) {
      if (levels[l].index) levels[l].index->update(levels[l].view());
    }
    throw;
  }
  for (std::size_t l = 0; l < levels.size(); ++l) {
    levels[l].coords.swap(fresh[l]);
    levels[l].grid = std::move(grids[l]);
  }
  levels_->make_cross_tasks();
}

template <int Dim, class T>
void SizedIndex<Dim, T>::update(std::span<const T> coords) {
  update(interleaved<Dim, T>(coords));
}

template <int Dim, class T>
void SizedIndex<Dim, T>::for_each_pair_batch(
    FunctionRef<void(std::span<const PairHit>)> visit) const {
  detail::PairSink sink(visit);
  for (const detail::SizedTask& task : levels_->tasks) {
    levels_->run(task, [&](const PairHit& h) { sink.push(h); });
  }
  sink.flush();
}

template <int Dim, class T>
PairList SizedIndex<Dim, T>::pairs(const SizedListOptions& options) const {
  std::vector<PairHit> hits = levels_->collect(levels_->threads);
  if (options.sorted) {
    std::sort(hits.begin(), hits.end(), [](const PairHit& a, const PairHit& b) {
      return Pair{a.first, a.second} < Pair{b.first, b.second};
    });
  }
  PairList list;
  list.pairs.resize(hits.size());
  if (options.with_distances) list.distances.resize(hits.size());
  const auto m = static_cast<std::int64_t>(hits.size());
  detail::parallel_region(levels_->threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t k = 0; k < m; ++k) {
      list.pairs[k] = Pair{hits[k].first, hits[k].second};
      if (options.with_distances) list.distances[k] = std::sqrt(hits[k].distance_squared);
    }
  });
  return list;
}

template <int Dim, class T>
NeighborLists SizedIndex<Dim, T>::neighbor_lists(const SizedListOptions& options) const {
  const std::vector<PairHit> hits = levels_->collect(levels_->threads);
  const auto m = static_cast<std::int64_t>(hits.size());
  NeighborLists lists;
  lists.offsets.assign(size() + 1, 0);
  // Count, prefix sums, fill: atomic counters and cursors, no locks.
  detail::parallel_region(levels_->threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t k = 0; k < m; ++k) {
      std::atomic_ref<std::size_t>(lists.offsets[hits[k].first + 1])
          .fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref<std::size_t>(lists.offsets[hits[k].second + 1])
          .fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::partial_sum(lists.offsets.begin(), lists.offsets.end(), lists.offsets.begin());
  lists.indices.resize(lists.offsets.back());
  if (options.with_distances) lists.distances.resize(lists.offsets.back());
  std::vector<std::size_t> cursor(lists.offsets.begin(), lists.offsets.end() - 1);
  const auto put = [&](index_t row, index_t neighbor, double d2) {
    const std::size_t at =
        std::atomic_ref<std::size_t>(cursor[row]).fetch_add(1, std::memory_order_relaxed);
    lists.indices[at] = neighbor;
    if (options.with_distances) lists.distances[at] = std::sqrt(d2);
  };
  detail::parallel_region(levels_->threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t k = 0; k < m; ++k) {
      put(hits[k].first, hits[k].second, hits[k].distance_squared);
      put(hits[k].second, hits[k].first, hits[k].distance_squared);
    }
  });
  if (options.sorted) detail::sort_rows(lists, levels_->threads);
  return lists;
}

template <int Dim, class T>
std::vector<index_t> SizedIndex<Dim, T>::neighbor_counts() const {
  std::vector<index_t> counts(size(), 0);
  levels_->run_all(levels_->threads, [&](std::size_t, const detail::SizedTask& task) {
    levels_->run(task, [&](const PairHit& h) {
      std::atomic_ref<index_t>(counts[h.first]).fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref<index_t>(counts[h.second]).fetch_add(1, std::memory_order_relaxed);
    });
  });
  return counts;
}

#define SPATIALHASH_INSTANTIATE(D, T) template class SizedIndex<D, T>;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash
