// Basic vocabulary of spatialhash: index type, engine names, options, errors and result
// containers. Everything here is a plain value type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mapped_blocks.hpp"

namespace spatialhash {

/// Index of a point in the caller's array. 32 bits keep neighbor lists compact (memory bandwidth
/// is what limits neighbor search); an index refuses more than 2^32 - 2 points.
using index_t = std::uint32_t;

/// The search schemes behind one interface. Every engine returns exactly the same neighbor sets;
/// they differ in speed, memory and in what input they suit (see README "Choosing an engine").
enum class Engine {
  automatic,   ///< the default: currently `cell_list`, chosen by measurement (docs/benchmarks.md)
  cell_list,   ///< points reordered by cell (Morton order), whole cells against their stencil, SIMD
  dense_grid,  ///< Müller's dense grid over the bounding box, built by counting sort
  hashed_grid,   ///< Müller's hashed grid: counting sort into a power-of-two hash table
  cell_hash,     ///< grid-cell-based hash: buckets -> cells -> points, incremental update
  sorted_index,  ///< implicit index: points sorted by packed cell key, binary search per row
  multimap,      ///< insert-then-query into an unordered multimap (reference scheme)
  brute_force,   ///< all pairs; the oracle, and fine for tiny inputs
};

/// Canonical lower-case name of an engine ("cell_list", "dense_grid", ...).
std::string_view engine_name(Engine engine);
/// Parses a name produced by engine_name(); throws InvalidArgument naming the valid choices.
Engine parse_engine(std::string_view name);
/// All concrete engines (every value but `automatic`), in declaration order.
std::vector<Engine> all_engines();

/// The instruction set of the default engine's distance tests. `automatic` takes the best this
/// build and processor have; a level they lack falls back to the best one below it. Results are
/// the same at every level (the float tests are exact, see index.hpp); only speed differs.
enum class Simd {
  automatic,
  avx512,  ///< x86-64 AVX-512F
  avx2,    ///< x86-64 AVX2 + FMA
  scalar,  ///< portable C++
};
/// Whether this build and processor run `level` (automatic and scalar: always).
bool simd_available(Simd level);

/// The radii accepted, index and query radii alike: inside [kMinRadius, kMaxRadius] the square of
/// a radius and the rounding bands of the float tests are normal, finite doubles, so the rule
/// d^2 <= r^2 means what it says (a radius of 1e300 would square to infinity and make every pair
/// a neighbor). Coordinates may still be any finite doubles.
inline constexpr double kMinRadius = 0x1p-500;  // about 3.1e-151
inline constexpr double kMaxRadius = 0x1p+500;  // about 3.3e+150
/// The most worker threads Options::threads may ask for (OpenMP fails to start far more).
inline constexpr int kMaxThreads = 1024;

/// Construction options of an Index.
struct Options {
  Engine engine = Engine::automatic;
  /// Worker threads for building and for array-producing queries; 0 means all cores; at most
  /// kMaxThreads. An upper bound: a call from inside the caller's own OpenMP parallel region
  /// runs on the team OpenMP gives its nested region (one thread, unless the program enables
  /// nested parallelism), and a child forked after the library first ran on several threads runs
  /// on one (GNU libgomp's threads do not survive fork()), with the same results. The default
  /// engine builds and updates an index of fewer than 4096 points on one thread, and searches
  /// one of fewer than 256 points (its lists, pairs, counts) on one, where a team costs more than
  /// it shares out; cross queries use every thread asked for.
  int threads = 0;
  /// cell_list only: cells of edge r / cell_subdivision, searched with a stencil of
  /// (2 cell_subdivision + 1)^Dim cells. 1 or 2; 0 picks the measured default (1). Cells of
  /// edge r / 2 test fewer candidates, but each cell's 5^Dim stencil is looked up, sorted and
  /// gathered on its own: 1.1-12x slower neighbor lists and 3-28x slower counts on every
  /// benchmark workload (the benchmark's half_cells contender; docs/benchmarks.md). With 0,
  /// sparse data (fewer than 1.5 points per cell of a point's stencil) also get coarser cells, up
  /// to 64 r, chosen for about 3 points per stencil cell; 1 keeps cells of edge r whatever the
  /// data.
  int cell_subdivision = 0;
  /// cell_list only: the instruction set of its vector kernels (distance tests, key passes, and a
  /// periodic index's pair fold).
  Simd simd = Simd::automatic;
};

/// Thrown for every bad input (NaN coordinates, bad radius, bad sizes, ...). The message names
/// the problem and, where there is one, the first offending index.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An unordered pair of neighbors, reported once with first < second.
struct Pair {
  index_t first;
  index_t second;
  friend bool operator==(const Pair&, const Pair&) = default;
  friend auto operator<=>(const Pair&, const Pair&) = default;
};

/// A neighbor found by a callback query: the neighbor's index and its squared distance, computed in
/// double precision exactly as the neighbor rule defines it.
struct Hit {
  index_t index;
  double distance_squared;
};

/// A pair found by a callback query (first < second) with its squared distance.
struct PairHit {
  index_t first;
  index_t second;
  double distance_squared;
  /// The image of `second` that is the neighbor of `first`, in box edges per axis (axes beyond
  /// the dimension stay 0): distance_squared is the distance between w_first and
  /// w_second + shift * L, where w are the wrapped coordinates (wrap_into, box.hpp) and L the box
  /// edges. So in a simulation the difference vector is w_first - (w_second + shift * L). All
  /// zero for an index without a periodic box, and for pairs found inside the box.
  std::array<std::int8_t, 3> shift{};
};

/// The allocator of result arrays: std::allocator, except that resize() leaves new elements of
/// trivial types uninitialized instead of zeroing them, and that arrays of `MappedFrom` bytes or
/// more are mapped blocks (mapped_blocks.hpp: in huge pages, advised before their first touch).
/// Results are hundreds of megabytes that a search overwrites anyway; zeroing them first would
/// write them twice, on one thread (measured: a seventh of a 1M-point neighbor-list search).
/// Elements constructed with a value (assign, push_back, insert) are initialized as usual.
/// Results are mapped from 32 MiB (kMappedBlockBytes); the index's own arrays and its queries'
/// work arrays from 2 MiB (detail::IndexVector and detail::WorkVector, kIndexMappedBlockBytes),
/// the work arrays in whole huge pages (WholeHugePages; mapped_block_length()).
template <class T, std::size_t MappedFrom = detail::kMappedBlockBytes, bool WholeHugePages = false>
struct ResultAllocator : std::allocator<T> {
  using value_type = T;
  ResultAllocator() noexcept = default;
  template <class U>
  ResultAllocator(const ResultAllocator<U, MappedFrom, WholeHugePages>&) noexcept {}
  template <class U>
  struct rebind {
    using other = ResultAllocator<U, MappedFrom, WholeHugePages>;
  };
  T* allocate(std::size_t n) {
    if (n > std::allocator_traits<std::allocator<T>>::max_size(*this)) throw std::bad_alloc();
    const std::size_t length =
        detail::mapped_block_length(n * sizeof(T), MappedFrom, WholeHugePages);
    if (length == 0) return std::allocator<T>::allocate(n);
    return static_cast<T*>(detail::map_block(length));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t length =
        detail::mapped_block_length(n * sizeof(T), MappedFrom, WholeHugePages);
    if (length == 0) {
      std::allocator<T>::deallocate(p, n);
    } else {
      detail::unmap_block(p, length);
    }
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(p)) U;  // default-initialization: no write for trivial types
    } else {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  }
};

/// A result array: a std::vector whose resize() does not zero new elements (ResultAllocator).
/// Use it like any vector; copy into a std::vector with {v.begin(), v.end()} where one is needed.
template <class T>
using ResultVector = std::vector<T, ResultAllocator<T>>;

/// All pairs within the radius, each unordered pair once (first < second).
struct PairList {
  ResultVector<Pair> pairs;
  /// Euclidean distance of each pair; empty unless requested.
  ResultVector<double> distances;
};

/// Where Index::pairs(PairOutput&) writes: for pair formats other than PairList (the Python module
/// fills an (m, 2) int64 array this way), with no intermediate list. The index calls allocate()
/// once with the number of pairs, then write() for disjoint ranges that together cover
/// [0, count), from several threads at once; write() must not throw.
///
/// An output that can also change its size says so with resizable(). The index may then search
/// once instead of counting first: allocate() gets an estimate, write() fills disjoint ranges
/// below it, and a final resize(count) sets the true count, keeping what was written below both
/// sizes; writes after the resize fill whatever it added. The order of the pairs is then
/// unspecified (it depends on how the threads shared the work).
class PairOutput {
 public:
  virtual ~PairOutput() = default;
  /// Room for `count` pairs; called once, before any write().
  virtual void allocate(std::size_t count) = 0;
  /// Stores `pairs` at positions [at, at + pairs.size()).
  virtual void write(std::size_t at, std::span<const Pair> pairs) = 0;
  /// Whether resize() is supported (see above). Default: no.
  virtual bool resizable() const { return false; }
  /// The output now holds `count` pairs (only called when resizable()).
  virtual void resize(std::size_t count) { (void)count; }
};

namespace detail {
struct ListScratchData;
/// Frees a ListScratchData (defined where the type is complete).
struct ListScratchDelete {
  void operator()(ListScratchData* data) const noexcept;
};
struct ListScratchAccess;
}  // namespace detail

/// Memory that the default engine keeps in a NeighborLists refilled in place (lists whose indices
/// already have storage, passed to Index::neighbor_lists(NeighborLists&, ...)): its per-thread
/// row buffers and per-row work arrays, so that the next refill writes into pages it has touched
/// before instead of fresh pages the kernel must first zero (a simulation that refills its lists
/// every step, 1M points: 5-10% faster; docs/benchmarks.md). What it holds is about the size of
/// the lists' indices plus 12 bytes per point, no more than every refill holds at its peak anyway.
/// Not part of the lists' value: a copy starts empty, assignment keeps the target's own, lists
/// filled for the first time keep none, and a search without row buffers (ListOptions::low_memory,
/// or lists estimated above the buffer budget) frees it.
class ListScratch {
 public:
  ListScratch() noexcept = default;
  ListScratch(const ListScratch&) noexcept {}
  ListScratch& operator=(const ListScratch&) noexcept { return *this; }
  ListScratch(ListScratch&&) noexcept = default;
  ListScratch& operator=(ListScratch&&) noexcept = default;
  ~ListScratch() = default;

  /// Bytes reserved (0 when none; pages no search wrote take no memory).
  std::size_t bytes() const noexcept;
  /// Frees the memory kept.
  void release() noexcept { data_.reset(); }

 private:
  friend struct detail::ListScratchAccess;
  std::unique_ptr<detail::ListScratchData, detail::ListScratchDelete> data_;
};

/// Neighbor lists of many points in compressed sparse row form: the neighbors of point i are
/// indices[offsets[i] .. offsets[i+1]). offsets has one more entry than there are points.
struct NeighborLists {
  ResultVector<std::size_t> offsets{0};
  ResultVector<index_t> indices;
  /// Euclidean distance of each entry of `indices`; empty unless requested.
  ResultVector<double> distances;
  /// Not part of the lists: what the search keeps for the next refill (see ListScratch).
  ListScratch scratch;

  std::size_t size() const { return offsets.size() - 1; }
  std::size_t count(std::size_t i) const { return offsets[i + 1] - offsets[i]; }
};

/// The value of the entries of NeighborRows::indices that belong to no row.
inline constexpr index_t kNoNeighbor = 0xFFFFFFFFu;

/// Neighbor lists of many points, each row stored where the search happened to write it: the
/// neighbors of point i are indices[start[i] .. start[i] + count[i]). Rows are contiguous but not
/// in point order, and the space between them (a fraction of a percent) holds kNoNeighbor, with NaN
/// distances. Index::neighbor_rows() writes every row once, straight from the search, where
/// neighbor_lists() also moves every row into point order (CSR): for code that reads a point's
/// neighbors through start and count, the same lists sooner.
struct NeighborRows {
  ResultVector<std::size_t> start;
  ResultVector<index_t> count;
  ResultVector<index_t> indices;
  /// Euclidean distance of each entry of `indices`; empty unless requested.
  ResultVector<double> distances;

  std::size_t size() const { return start.size(); }
  /// The neighbors of point i.
  std::span<const index_t> row(std::size_t i) const {
    return {indices.data() + start[i], count[i]};
  }
};

/// Radius argument meaning "the radius the index was built with" (the default of every query).
inline constexpr double kIndexRadius = -1.0;

/// Options of the list-producing queries.
struct ListOptions {
  /// Query radius, in (0, index radius]; kIndexRadius means the index radius.
  double radius = kIndexRadius;
  /// Sort each point's list by neighbor index (otherwise the order is the engine's).
  bool sorted = false;
  /// Also return the distance of each neighbor. Unsorted, the default engine measures them from
  /// a copy of the points in its own order, held during the call (Dim values per point; on 3D
  /// lattices sorted by column, 4 bytes per point more: the positions its search reports).
  bool with_distances = false;
  /// Trade speed for memory. The default engine searches into per-thread buffers and then copies
  /// each row into place, so for a moment it holds the lists twice (up to 1 GiB of buffers).
  /// With low_memory, for lists estimated above that budget, and for lists of 1.25M points or more
  /// (where it is as fast or faster), it holds no row buffers:
  /// lists without distances (sorted or not) are written into the output itself, in regions
  /// with a sixteenth of slack, and compacted there (with low_memory the peak stays within about
  /// an eighth of the output plus 8 bytes per row); lists with distances, cross queries, and
  /// lists whose estimate proves far too low are searched twice (once to count, once writing
  /// each row in place), holding nothing beyond the output but about 12 bytes per row (and the
  /// copy of the points that with_distances mentions). low_memory also frees what refilled lists
  /// kept (ListScratch). Same lists either way. Measured at 1M points (docs/benchmarks.md):
  /// without distances as fast as the default on 30 neighbors per point and up to 1.3x slower on
  /// 130, for a third to 40% less peak memory; searched twice, 1.2-1.6x slower.
  bool low_memory = false;
  /// Half lists (neighbor_lists, neighbor_rows): each unordered pair once, in the row of one of
  /// its two points, as a force loop that applies Newton's third law wants them, instead of in
  /// both rows. Which row is the engine's choice: the default engine's rows hold the neighbors
  /// after the point in its cell order (a half-stencil search, about half the work and output of
  /// full lists); the other engines', the neighbors of larger index. Cross queries refuse it.
  bool half = false;
};

}  // namespace spatialhash
