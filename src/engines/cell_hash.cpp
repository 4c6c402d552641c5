// Grid-cell-based spatial hash (seed 002): three contiguous lists.
//   buckets: hash bucket -> range of cell records
//   cells:   the non-empty cells grouped by bucket, each with its full lattice coordinates and the
//            range of its points
//   slots:   point indices grouped by cell
// A lookup hashes a cell, scans only that bucket's cell records comparing full coordinates, and
// then scans the points of the matching cell only: points of other cells that share the bucket
// are never touched. A fresh build sorts (a counting sort by bucket, then by cell within the
// rare shared bucket).
//
// Incremental construction (the seed's second method): every cell region and bucket region is
// preallocated with slack, so after the points move only those whose cell changed are taken out
// of their old cell and put into their new one. The lattice is kept (GridGeometry::rebound), so a
// point that moved a little keeps its cell. A region that overflows moves to the end of its list
// with at least twice the room. update() first finds the movers and works out all the room they
// need without changing anything, reserves it, then patches without allocating: a throw leaves
// the engine as it was. It rebuilds from scratch instead when more than 1/8 of the points changed
// cell, the lattice cannot hold the new box, or relocations left too much dead room.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "../engine_base.hpp"
#include "../exact.hpp"

namespace spatialhash::detail {
namespace {

/// Lattice coordinates of a cell. They fit 32 bits: points stay within 2^30 cells of the lattice
/// origin (GridGeometry::make and rebound), positions queried within one cell of the box.
template <int Dim>
using CellKey = std::array<std::int32_t, Dim>;

/// Equality and lexicographic order of cells, inline (std::array's operators may become a
/// memcmp call, which costs more than the comparison on these hot paths).
template <int Dim>
bool same(const CellKey<Dim>& a, const CellKey<Dim>& b) {
  bool equal = a[0] == b[0];
  for (int k = 1; k < Dim; ++k) equal &= a[k] == b[k];
  return equal;
}
template <int Dim>
bool before(const CellKey<Dim>& a, const CellKey<Dim>& b) {
  for (int k = 0; k < Dim; ++k) {
    if (a[k] != b[k]) return a[k] < b[k];
  }
  return false;
}

/// Hash of the row (y[,z]) of a cell: a 64-bit mixer (murmur3's finalizer), so rows scatter
/// over the table. The bucket of a cell is row_hash + x: the cells of a row fall into
/// consecutive buckets, and a fresh build lays their points out next to each other.
template <int Dim>
std::uint32_t row_hash(std::int32_t y, std::int32_t z) {
  std::uint64_t u = static_cast<std::uint32_t>(y);
  if constexpr (Dim == 3) u |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(z)) << 32;
  u ^= u >> 33;
  u *= 0xff51afd7ed558ccdULL;
  u ^= u >> 33;
  u *= 0xc4ceb9fe1a85ec53ULL;
  u ^= u >> 33;
  return static_cast<std::uint32_t>(u);
}

template <int Dim>
std::uint32_t cell_hash_of(const CellKey<Dim>& c) {
  return row_hash<Dim>(c[1], Dim == 3 ? c[Dim - 1] : 0) + static_cast<std::uint32_t>(c[0]);
}

/// One non-empty (or emptied, see update) cell: its points are slots[begin, begin + count), and
/// slots[begin + count, begin + capacity) is room reserved for points moving in.
template <int Dim>
struct CellRecord {
  CellKey<Dim> cell;
  std::uint32_t begin;
  std::uint32_t count;
  std::uint32_t capacity;
};

/// The cell records of a bucket are cells[begin, begin + count); up to `capacity` fit in place.
struct Bucket {
  std::uint32_t begin;
  std::uint32_t count;
  std::uint32_t capacity;
};

/// Region sizes are 32-bit: a list that would outgrow them is rebuilt without slack instead.
constexpr std::size_t kMaxListSize = std::numeric_limits<std::uint32_t>::max();

/// Room of a fresh cell region: its points, a quarter more and one (64-bit: callers check the
/// totals against kMaxListSize before storing them).
constexpr std::uint64_t slack_capacity(std::uint64_t count) {
  return count + 1 + count / 4;
}

template <int Dim>
struct State {
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  std::vector<Bucket> buckets;  ///< size is a power of two
  std::vector<CellRecord<Dim>> cells;
  std::vector<index_t> slots;
  /// Per point, the update's bookkeeping (queries need only the three lists above): the cell
  /// point i is listed in and its slot. Invariant: slots[slot_of[i]] == i, within the used range
  /// of the record of key_of[i].
  std::vector<CellKey<Dim>> key_of;
  std::vector<std::uint32_t> slot_of;
  std::size_t records = 0;  ///< cell records in all buckets, emptied ones included

  std::uint32_t mask() const { return static_cast<std::uint32_t>(buckets.size() - 1); }

  /// Index of the record of cell `c`, whose hash is `h`, or kNone.
  std::uint32_t find(const CellKey<Dim>& c, std::uint32_t h) const {
    const Bucket& bucket = buckets[h & mask()];
    for (std::uint32_t k = bucket.begin; k < bucket.begin + bucket.count; ++k) {
      if (same<Dim>(cells[k].cell, c)) return k;
    }
    return kNone;
  }
  const CellRecord<Dim>* find_record(const CellKey<Dim>& c, std::uint32_t h) const {
    const std::uint32_t k = find(c, h);
    return k == kNone ? nullptr : &cells[k];
  }
};

/// Room for a region (of points or of records) that must move to hold `need` entries: at least
/// double the old room, so a cell that keeps growing moves a logarithmic number of times.
constexpr std::uint64_t grown(std::uint64_t capacity, std::uint64_t need) {
  return std::max(2 * capacity + 2, slack_capacity(need));
}

/// Grows `v`'s capacity to at least `need` (by a quarter at least, to amortize), or throws with
/// `v` unchanged.
template <class V>
void reserve_for(V& v, std::size_t need) {
  if (need > v.capacity()) v.reserve(std::max(need, v.size() + v.size() / 4));
}

template <int Dim, class T>
class CellHash final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using typename Base::Position;

  explicit CellHash(const Context<Dim, T>& context) : Base(context), state_(build(context)) {}

  Engine kind() const override { return Engine::cell_hash; }

  void update(const Context<Dim, T>& context) override;

  void pairs(double radius, PairSink& sink) const override;
  void ball(const Position& center, double radius, HitSink& sink) const override;

 private:
  static constexpr std::uint32_t kNone = State<Dim>::kNone;

  /// A point whose cell changed: its new cell, the record it is listed in, and its new cell's
  /// record before the update (kNone for a cell not in the table).
  struct Mover {
    CellKey<Dim> to;
    index_t id;
    std::uint32_t from;
    std::uint32_t target;
  };
  /// The room a patch needs beyond what is free, worked out before anything changes.
  struct Plan {
    /// Existing records that must move to a larger region to take their arrivals: (record, room).
    std::vector<std::pair<std::uint32_t, std::uint64_t>> grow;
    /// Movers into cells new to the table, sorted by bucket, then cell.
    std::vector<Mover> fresh;
    std::size_t extra_slots = 0, extra_cells = 0, extra_records = 0;
  };

  /// The cell of point i: GridGeometry::cell_along's arithmetic, with floor done by truncation
  /// and a correction (exactly std::floor for |u| < 2^31, which the lattice guarantees, without
  /// a libm call on baseline x86-64; this runs once per point per update).
  static CellKey<Dim> cell_key(const GridGeometry<Dim>& grid, const PointsView<Dim, T>& points,
                               std::size_t i) {
    CellKey<Dim> c;
    for (int k = 0; k < Dim; ++k) {
      const double u = (points.coord(i, k) - grid.origin[k]) * grid.inv_cell;
      const auto t = static_cast<std::int32_t>(u);
      c[k] = t - static_cast<std::int32_t>(static_cast<double>(t) > u);
    }
    return c;
  }

  static State<Dim> build(const Context<Dim, T>& context);
  /// Collects the points whose cell on `grid` differs from the one they are listed in. False
  /// (stopping early) once there are more than `limit`.
  bool find_movers(const GridGeometry<Dim>& grid, const PointsView<Dim, T>& points,
                   std::size_t limit, std::vector<Mover>& movers) const;
  /// Works out the room the movers need. False when patching would leave too much dead room or
  /// too full a table, or outgrow 32-bit list positions: then rebuild.
  bool make_plan(std::vector<Mover>& movers, Plan& plan) const;
  /// Moves the movers to their new cells. Allocates nothing (the room was reserved beforehand),
  /// so it cannot fail halfway.
  void apply(const std::vector<Mover>& movers, const Plan& plan) noexcept;
  /// Calls f(first, last) for each run of `fresh` movers in the same bucket.
  template <class F>
  void for_each_bucket_run(const std::vector<Mover>& fresh, F f) const;

  State<Dim> state_;
};

template <int Dim, class T>
State<Dim> CellHash<Dim, T>::build(const Context<Dim, T>& context) {
  const PointsView<Dim, T>& points = context.points;
  const GridGeometry<Dim>& grid = context.grid;
  const std::size_t n = points.size();

  // 1. Counting sort of the points by a provisional bucket (table sized for at most one cell per
  //    point and no more than the lattice has), which groups them by cell up to collisions.
  std::vector<CellKey<Dim>> key(n);
  std::vector<std::uint32_t> hash(n);
  for (std::size_t i = 0; i < n; ++i) {
    key[i] = cell_key(grid, points, i);
    hash[i] = cell_hash_of<Dim>(key[i]);
  }
  const double estimate = std::min({static_cast<double>(n), grid.total_cells(), 0x1p30});
  const std::size_t wide = std::bit_ceil(static_cast<std::size_t>(std::max(estimate, 1.0)));
  std::vector<std::uint32_t> start(wide + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++start[(hash[i] & (wide - 1)) + 1];
  for (std::size_t b = 0; b < wide; ++b) start[b + 1] += start[b];
  std::vector<index_t> order(n);
  {
    std::vector<std::uint32_t> cursor(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) order[cursor[hash[i] & (wide - 1)]++] = index_t(i);
  }

  // 2. Split every provisional bucket into its cells. A bucket holding several cells (a
  //    collision) is sorted by cell; ids stay ascending within a cell.
  struct Run {
    CellKey<Dim> cell;
    std::uint32_t hash, first, count;
  };
  std::vector<Run> runs;
  for (std::size_t b = 0; b < wide; ++b) {
    const std::uint32_t lo = start[b], hi = start[b + 1];
    if (lo == hi) continue;
    bool mixed = false;
    for (std::uint32_t s = lo + 1; s < hi && !mixed; ++s)
      mixed = !same<Dim>(key[order[s]], key[order[lo]]);
    if (mixed) {
      std::sort(order.begin() + lo, order.begin() + hi, [&](index_t a, index_t c) {
        return same<Dim>(key[a], key[c]) ? a < c : before<Dim>(key[a], key[c]);
      });
    }
    for (std::uint32_t s = lo; s < hi;) {
      std::uint32_t e = s + 1;
      while (e < hi && same<Dim>(key[order[e]], key[order[s]])) ++e;
      runs.push_back({key[order[s]], hash[order[s]], s, e - s});
      s = e;
    }
  }

  // 3. The real table: a power of two >= the number of cells (load factor <= 1). Its buckets are
  //    the provisional ones folded, and the records of a bucket are laid out in run order.
  State<Dim> state;
  const std::size_t table = std::bit_ceil(std::max<std::size_t>(runs.size(), 1));
  state.buckets.assign(table, Bucket{0, 0, 0});
  const auto mask = static_cast<std::uint32_t>(table - 1);
  for (const Run& run : runs) ++state.buckets[run.hash & mask].count;
  // Room: one spare record per non-empty bucket and a quarter of spare slots per cell, unless the
  // lists would outgrow 32 bits (then none: they fit, as there are fewer than 2^32 points).
  std::size_t total_records = 0, total_slots = 0;
  for (const Bucket& bucket : state.buckets) total_records += bucket.count + (bucket.count > 0);
  for (const Run& run : runs) total_slots += slack_capacity(run.count);
  const bool roomy = total_records < kMaxListSize && total_slots < kMaxListSize;
  std::uint32_t next = 0;
  for (Bucket& bucket : state.buckets) {
    bucket.begin = next;
    bucket.capacity = bucket.count + (roomy && bucket.count > 0);
    next += bucket.capacity;
    bucket.count = 0;
  }
  state.cells.resize(next);
  state.records = runs.size();
  for (const Run& run : runs) {
    Bucket& bucket = state.buckets[run.hash & mask];
    state.cells[bucket.begin + bucket.count++] = {run.cell, 0, run.count, 0};
  }
  // Point regions in record order (so the points of a row of cells lie together).
  std::uint32_t slot = 0;
  for (const Bucket& bucket : state.buckets) {
    for (std::uint32_t r = bucket.begin; r < bucket.begin + bucket.count; ++r) {
      CellRecord<Dim>& record = state.cells[r];
      record.begin = slot;
      record.capacity =
          roomy ? static_cast<std::uint32_t>(slack_capacity(record.count)) : record.count;
      slot += record.capacity;
    }
  }
  state.slots.resize(slot);
  state.key_of = std::move(key);
  state.slot_of.resize(n);
  for (const Run& run : runs) {
    const std::uint32_t r = state.find(run.cell, run.hash);
    const std::uint32_t begin = state.cells[r].begin;
    for (std::uint32_t k = 0; k < run.count; ++k) {
      const index_t i = order[run.first + k];
      state.slots[begin + k] = i;
      state.slot_of[i] = begin + k;
    }
  }
  return state;
}

template <int Dim, class T>
bool CellHash<Dim, T>::find_movers(const GridGeometry<Dim>& grid, const PointsView<Dim, T>& points,
                                   std::size_t limit, std::vector<Mover>& movers) const {
  // In input order: the coordinates stream in, and the records looked at follow the input's
  // own locality.
  const State<Dim>& s = state_;
  const std::size_t n = points.size();
  // A strided sample first (1 point in 64): when it shows clearly more movers than the limit
  // allows, give up before paying for the whole scan.
  constexpr std::size_t kStride = 64;
  if (n >= 64 * kStride) {
    std::size_t sampled = 0, changed = 0;
    for (std::size_t i = 0; i < n; i += kStride, ++sampled) {
      changed += !same<Dim>(cell_key(grid, points, i), s.key_of[i]);
    }
    if (4 * changed * n > 5 * limit * sampled) return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const CellKey<Dim> c = cell_key(grid, points, i);
    const CellKey<Dim>& listed = s.key_of[i];
    if (same<Dim>(c, listed)) continue;
    if (movers.size() == limit) return false;
    movers.push_back({c, static_cast<index_t>(i), kNone, kNone});  // records: see make_plan
  }
  return true;
}

template <int Dim, class T>
template <class F>
void CellHash<Dim, T>::for_each_bucket_run(const std::vector<Mover>& fresh, F f) const {
  const std::uint32_t mask = state_.mask();
  for (std::size_t a = 0; a < fresh.size();) {
    const std::uint32_t b = cell_hash_of<Dim>(fresh[a].to) & mask;
    std::size_t e = a + 1;
    while (e < fresh.size() && (cell_hash_of<Dim>(fresh[e].to) & mask) == b) ++e;
    f(a, e);
    a = e;
  }
}

template <int Dim, class T>
bool CellHash<Dim, T>::make_plan(std::vector<Mover>& movers, Plan& plan) const {
  const State<Dim>& s = state_;
  const std::uint32_t mask = s.mask();
  // Each mover's old and new record, and the net change of every record.
  constexpr std::int32_t kDone = std::numeric_limits<std::int32_t>::min();
  std::vector<std::int32_t> net(s.cells.size(), 0);
  for (Mover& m : movers) {
    const CellKey<Dim>& listed = s.key_of[m.id];
    m.from = s.find(listed, cell_hash_of<Dim>(listed));
    m.target = s.find(m.to, cell_hash_of<Dim>(m.to));
    --net[m.from];
    if (m.target != kNone) {
      ++net[m.target];
    } else {
      plan.fresh.push_back(m);
    }
  }
  for (const Mover& m : movers) {
    if (m.target == kNone || net[m.target] == kDone) continue;
    const CellRecord<Dim>& record = s.cells[m.target];
    const auto need = static_cast<std::uint32_t>(std::int64_t{record.count} + net[m.target]);
    if (need > record.capacity) {
      const std::uint64_t room = grown(record.capacity, need);
      plan.grow.emplace_back(m.target, room);
      plan.extra_slots += room;
    }
    net[m.target] = kDone;
  }
  // Cells new to the table: a record each in their bucket (moving a full bucket's records), a
  // fresh region each.
  std::sort(plan.fresh.begin(), plan.fresh.end(), [mask](const Mover& a, const Mover& b) {
    const std::uint32_t ha = cell_hash_of<Dim>(a.to) & mask, hb = cell_hash_of<Dim>(b.to) & mask;
    return ha != hb ? ha < hb : before<Dim>(a.to, b.to);
  });
  for_each_bucket_run(plan.fresh, [&](std::size_t first, std::size_t last) {
    std::uint32_t added = 0;
    for (std::size_t a = first; a < last;) {
      std::size_t e = a + 1;
      while (e < last && same<Dim>(plan.fresh[e].to, plan.fresh[a].to)) ++e;
      plan.extra_slots += slack_capacity(e - a);
      ++added;
      a = e;
    }
    const Bucket& bucket = s.buckets[cell_hash_of<Dim>(plan.fresh[first].to) & mask];
    if (bucket.count + added > bucket.capacity) {
      plan.extra_cells += grown(bucket.capacity, bucket.count + added);
    }
    plan.extra_records += added;
  });
  // Rebuild rather than leave more dead room than live, or a table fuller than two cells per
  // bucket.
  const std::size_t n = s.key_of.size(), table = s.buckets.size();
  const std::size_t slots = s.slots.size() + plan.extra_slots;
  const std::size_t cells = s.cells.size() + plan.extra_cells;
  return slots < kMaxListSize && cells < kMaxListSize && slots <= 2 * n + 1024 &&
         cells <= 2 * table + 1024 && s.records + plan.extra_records <= 2 * table;
}

template <int Dim, class T>
void CellHash<Dim, T>::apply(const std::vector<Mover>& movers, const Plan& plan) noexcept {
  State<Dim>& s = state_;
  // Moves the used part of record r's region to a new one of `room` slots at the end.
  auto move_region = [&](std::uint32_t r, std::uint32_t room) {
    CellRecord<Dim>& record = s.cells[r];
    const auto base = static_cast<std::uint32_t>(s.slots.size());
    s.slots.resize(s.slots.size() + room);  // within the reserved capacity
    for (std::uint32_t k = 0; k < record.count; ++k) {
      const index_t i = s.slots[record.begin + k];
      s.slots[base + k] = i;
      s.slot_of[i] = base + k;
    }
    record.begin = base;
    record.capacity = room;
  };
  // 1. Removal first, so room freed by points leaving a cell serves points arriving: the last
  //    point of the cell takes the mover's slot. Emptied records stay in their bucket with their
  //    room (points often move back).
  for (const Mover& m : movers) {
    CellRecord<Dim>& record = s.cells[m.from];
    const std::uint32_t slot = s.slot_of[m.id];
    const index_t last = s.slots[record.begin + record.count - 1];
    s.slots[slot] = last;
    s.slot_of[last] = slot;
    --record.count;
  }
  // 2. Existing cells that overflow move to larger regions.
  for (const auto& [r, room] : plan.grow) move_region(r, static_cast<std::uint32_t>(room));
  // 3. New cells: records in their buckets, regions at the end of the slots.
  const std::uint32_t mask = s.mask();
  for_each_bucket_run(plan.fresh, [&](std::size_t first, std::size_t last) {
    Bucket& bucket = s.buckets[cell_hash_of<Dim>(plan.fresh[first].to) & mask];
    std::uint32_t added = 0;
    for (std::size_t a = first + 1; a < last; ++a)
      added += !same<Dim>(plan.fresh[a].to, plan.fresh[a - 1].to);
    ++added;
    if (bucket.count + added > bucket.capacity) {
      const auto room = static_cast<std::uint32_t>(grown(bucket.capacity, bucket.count + added));
      const auto base = static_cast<std::uint32_t>(s.cells.size());
      s.cells.resize(s.cells.size() + room);  // within the reserved capacity
      // The old copies get a cell no lookup can match, so step 4 sees targets that moved.
      for (std::uint32_t k = 0; k < bucket.count; ++k) {
        s.cells[base + k] = s.cells[bucket.begin + k];
        s.cells[bucket.begin + k].cell.fill(std::numeric_limits<std::int32_t>::min());
      }
      bucket.begin = base;
      bucket.capacity = room;
    }
    for (std::size_t a = first; a < last;) {
      std::size_t e = a + 1;
      while (e < last && same<Dim>(plan.fresh[e].to, plan.fresh[a].to)) ++e;
      const auto room = static_cast<std::uint32_t>(slack_capacity(e - a));
      const auto base = static_cast<std::uint32_t>(s.slots.size());
      s.slots.resize(s.slots.size() + room);
      s.cells[bucket.begin + bucket.count++] = {plan.fresh[a].to, base, 0, room};
      ++s.records;
      a = e;
    }
  });
  // 4. Every mover into its cell, which now has room (looked up again if it is new, or if its
  //    bucket moved in step 3).
  for (const Mover& m : movers) {
    std::uint32_t r = m.target;
    if (r == kNone || !same<Dim>(s.cells[r].cell, m.to)) r = s.find(m.to, cell_hash_of<Dim>(m.to));
    CellRecord<Dim>& record = s.cells[r];
    const std::uint32_t slot = record.begin + record.count++;
    s.slots[slot] = m.id;
    s.slot_of[m.id] = slot;
    s.key_of[m.id] = m.to;
  }
}

template <int Dim, class T>
void CellHash<Dim, T>::update(const Context<Dim, T>& context) {
  // Keep the lattice (origin and cell size) when it can hold the new bounding box, so a point
  // that moved a little keeps its cell. Patch when at most 1/8 of the points changed cell;
  // beyond that a fresh build is about as fast. Everything that allocates (and so may throw)
  // happens before the state changes.
  Context<Dim, T> kept = context;
  kept.grid = this->context_.grid;
  std::vector<Mover> movers;
  Plan plan;
  if (kept.grid.rebound(context.grid.lower, context.grid.upper) &&
      find_movers(kept.grid, context.points, context.points.size() / 8, movers) &&
      make_plan(movers, plan)) {
    reserve_for(state_.slots, state_.slots.size() + plan.extra_slots);
    reserve_for(state_.cells, state_.cells.size() + plan.extra_cells);
    apply(movers, plan);
    this->context_ = kept;
    return;
  }
  State<Dim> fresh = build(context);
  state_ = std::move(fresh);
  this->context_ = context;
}

template <int Dim, class T>
void CellHash<Dim, T>::pairs(double radius, PairSink& sink) const {
  const PointsView<Dim, T>& points = this->context_.points;
  const State<Dim>& s = state_;
  const double r2 = radius * radius;
  // The home cell's coordinates, gathered once (as doubles, the values distance_squared uses).
  std::vector<double> home;
  Position p;
  // Half stencil, by rows ahead of the home row: (dy[, dz]) with x - 1 .. x + 1 each. With the
  // home row's next cell that makes 4 of 8 neighbors in 2D and 13 of 26 in 3D.
  constexpr int kRows = Dim == 2 ? 1 : 4;
  static constexpr std::array<std::array<int, 2>, 4> kRowOffsets{{{1, 0}, {-1, 1}, {0, 1}, {1, 1}}};

  auto against = [&](const CellRecord<Dim>& self, const PointsView<Dim, double>& near,
                     const CellRecord<Dim>* other) {
    if (other == nullptr) return;
    for (std::uint32_t t = other->begin; t < other->begin + other->count; ++t) {
      const index_t j = s.slots[t];
      for (int k = 0; k < Dim; ++k) p[k] = points.coord(j, k);
      for (std::uint32_t a = 0; a < self.count; ++a) {
        const double d2 = distance_squared(near, a, p);
        if (d2 <= r2) {
          const index_t i = s.slots[self.begin + a];
          sink.emplace(std::min(i, j), std::max(i, j), d2);
        }
      }
    }
  };

  for (const Bucket& bucket : s.buckets) {
    for (std::uint32_t r = bucket.begin; r < bucket.begin + bucket.count; ++r) {
      const CellRecord<Dim>& self = s.cells[r];
      if (self.count == 0) continue;
      home.resize(std::size_t{self.count} * Dim);
      for (std::uint32_t a = 0; a < self.count; ++a) {
        for (int k = 0; k < Dim; ++k) home[a * Dim + k] = points.coord(s.slots[self.begin + a], k);
      }
      const PointsView<Dim, double> near(home.data(), self.count);
      for (std::uint32_t a = 0; a < self.count; ++a) {
        for (std::uint32_t b = a + 1; b < self.count; ++b) {
          const double d2 = distance_squared(near, a, b);
          if (d2 <= r2) {
            const index_t i = s.slots[self.begin + a], j = s.slots[self.begin + b];
            sink.emplace(std::min(i, j), std::max(i, j), d2);
          }
        }
      }
      const CellKey<Dim>& c = self.cell;
      CellKey<Dim> nc = c;
      nc[0] = c[0] + 1;
      against(self, near, s.find_record(nc, cell_hash_of<Dim>(nc)));
      for (int row = 0; row < kRows; ++row) {
        nc[1] = c[1] + kRowOffsets[row][0];
        if constexpr (Dim == 3) nc[2] = c[2] + kRowOffsets[row][1];
        const std::uint32_t h = row_hash<Dim>(nc[1], Dim == 3 ? nc[Dim - 1] : 0);
        for (int dx = -1; dx <= 1; ++dx) {
          nc[0] = c[0] + dx;
          against(self, near, s.find_record(nc, h + static_cast<std::uint32_t>(nc[0])));
        }
      }
    }
  }
}

template <int Dim, class T>
void CellHash<Dim, T>::ball(const Position& center, double radius, HitSink& sink) const {
  const GridGeometry<Dim>& grid = this->context_.grid;
  Cell<Dim> home;
  if (!grid.cell_of_position(center, home)) return;
  const PointsView<Dim, T>& points = this->context_.points;
  const State<Dim>& s = state_;
  const double r2 = radius * radius;
  // 3^Dim lookups, one row hash per row of three cells.
  auto scan_row = [&](CellKey<Dim> c) {
    const std::uint32_t h = row_hash<Dim>(c[1], Dim == 3 ? c[Dim - 1] : 0);
    const auto x = static_cast<std::int32_t>(home[0]);
    for (c[0] = x - 1; c[0] <= x + 1; ++c[0]) {
      const CellRecord<Dim>* record = s.find_record(c, h + static_cast<std::uint32_t>(c[0]));
      if (record == nullptr) continue;
      for (std::uint32_t t = record->begin; t < record->begin + record->count; ++t) {
        const index_t i = s.slots[t];
        const double d2 = distance_squared(points, i, center);
        if (d2 <= r2) sink.emplace(i, d2);
      }
    }
  };
  CellKey<Dim> c;
  const auto y = static_cast<std::int32_t>(home[1]);
  if constexpr (Dim == 2) {
    for (c[1] = y - 1; c[1] <= y + 1; ++c[1]) scan_row(c);
  } else {
    const auto z = static_cast<std::int32_t>(home[2]);
    for (c[2] = z - 1; c[2] <= z + 1; ++c[2]) {
      for (c[1] = y - 1; c[1] <= y + 1; ++c[1]) scan_row(c);
    }
  }
}

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_hash(const Context<Dim, T>& context) {
  return std::make_unique<CellHash<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_cell_hash(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
