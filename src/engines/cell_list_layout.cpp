// Building the cell_list layout: Morton keys, or column keys for a layout in column order (SIMD
// key pass, simd/cell_keys.hpp), parallel radix
// sort (keys of up to 32 bits packed with their point's index in one 64-bit record) that carries
// the float coordinates of points in random order along, or a float gather in sorted order, cell
// table.
#include "cell_list_layout.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <span>

#include "../growable_buffer.hpp"
#include "../morton.hpp"
#include "../radix_sort.hpp"
#include "../simd/cell_keys.hpp"
#include "../threads.hpp"
#include "frame_origins.hpp"

namespace spatialhash::detail {
namespace {

/// The bitmap `bits` of a lattice of `dims` blocks (x fastest) dilated by `radius` blocks along
/// every axis, one axis after the other: each pass ORs the bitmap moved by up to `radius` rows
/// of that axis either way. Moving the bitmap as one line sets bits across the ends of rows too:
/// only in excess.
template <int Dim>
std::vector<std::uint64_t> dilated(std::span<const std::uint64_t> bits,
                                   const std::array<std::uint64_t, Dim>& dims, int radius,
                                   int threads) {
  const auto words = static_cast<std::int64_t>(bits.size());
  std::vector<std::uint64_t> current(bits.begin(), bits.end()), padded;
  std::uint64_t stride = 1;  // bits between neighbours along axis k
  const int pass_threads = threads_for_pass(bits.size(), threads);
  for (int k = 0; k < Dim; ++k) {
    // Zero words on both sides, as many as the farthest move reaches, so that the loop below
    // reads without bounds checks.
    const auto pad =
        static_cast<std::int64_t>((static_cast<std::uint64_t>(radius) * stride) >> 6) + 1;
    padded.assign(static_cast<std::size_t>(words + 2 * pad), 0);
    std::copy(current.begin(), current.end(), padded.begin() + pad);
    const std::uint64_t* from = padded.data() + pad;
    parallel_region(pass_threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t j = 0; j < words; ++j) {
        std::uint64_t word = from[j];
        for (int d = 1; d <= radius; ++d) {
          // Bit i of the word gets bits i - by and i + by; `x >> 1 >> (63 - b)` is x >> (64 - b)
          // for b > 0 and 0 for b = 0 (likewise for the left shift), without a branch.
          const std::uint64_t by = static_cast<std::uint64_t>(d) * stride;
          const auto w = static_cast<std::int64_t>(by >> 6);
          const auto b = static_cast<unsigned>(by & 63);
          word |= from[j - w] << b | from[j - w - 1] >> 1 >> (63 - b);
          word |= from[j + w] >> b | from[j + w + 1] << 1 << (63 - b);
        }
        current[j] = word;
      }
    });
    stride *= dims[k];
  }
  return current;
}

/// With coarse keys (a lattice wider than a Morton code holds: cell coordinates shifted right by
/// `shift`), the radix sort leaves the points of one key, a block of 2^shift cells per axis, in
/// any order. This sorts each run of equal `keys` by fine_of(order[s]), the Morton code of the
/// low `shift` bits of the point's cell coordinates (at most 27 bits), so that the cells come in
/// the Z-order of their full coordinates: that code's bits follow the coarse key's. Runs are
/// sorted in parallel, each by the thread whose chunk of positions it begins in. Returns the
/// fine code of each sorted position.
template <class FineOf>
IndexVector<std::uint32_t> sort_within_coarse_keys(const IndexVector<std::uint64_t>& keys,
                                                   IndexVector<index_t>& order, int threads,
                                                   FineOf fine_of) {
  const std::size_t n = keys.size();
  const auto signed_n = static_cast<std::int64_t>(n);
  // Computed in the caller's order first: its points are read in sequence, not at random.
  IndexVector<std::uint32_t> fine_of_index, fine;
  sized_for_overwrite(fine_of_index, n);
  sized_for_overwrite(fine, n);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < signed_n; ++i)
      fine_of_index[i] = fine_of(static_cast<std::size_t>(i));
  });
  constexpr std::size_t kChunk = 4096;
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
  parallel_region(threads, [&] {
    std::vector<std::uint64_t> run;  // (fine code, index) of one run, packed for the sort
#pragma omp for schedule(dynamic) nowait
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::size_t first = static_cast<std::size_t>(chunk) * kChunk;
      const std::size_t last = std::min(n, first + kChunk);
      std::size_t a = first;
      // The end of a run begun in an earlier chunk belongs to that chunk's thread.
      if (a > 0) {
        while (a < n && keys[a] == keys[first - 1]) ++a;
      }
      while (a < last) {
        std::size_t b = a + 1;
        while (b < n && keys[b] == keys[a]) ++b;
        run.clear();
        for (std::size_t s = a; s < b; ++s) {
          run.push_back(std::uint64_t{fine_of_index[order[s]]} << 32 | order[s]);
        }
        std::sort(run.begin(), run.end());
        for (std::size_t s = a; s < b; ++s) {
          order[s] = static_cast<index_t>(run[s - a]);
          fine[s] = static_cast<std::uint32_t>(run[s - a] >> 32);
        }
        a = b;
      }
    }
  });
  return fine;
}

/// Whether the points come in an order scattered over the lattice, judged from their packed
/// records (cell key << 32 | index, `key_bits` bits of key) in the caller's order: fewer than
/// half of 4096 evenly spaced pairs of neighbours in that order share the top 8 bits of their
/// key. In random order about 1 in 256 pairs do, in a spatial order nearly all.
bool scattered_order(const IndexVector<std::uint64_t>& records, int key_bits) {
  constexpr std::size_t kPairs = 4096;
  const std::size_t n = records.size();
  if (n < 2 || key_bits < 8) return false;
  const int drop = 32 + key_bits - 8;
  const std::size_t pairs = std::min(kPairs, n - 1);
  std::size_t shared = 0;
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::size_t i = p * (n - 1) / pairs;
    shared += ((records[i] ^ records[i + 1]) >> drop) == 0 ? 1 : 0;
  }
  return 2 * shared < pairs;
}

/// Writes points' float coordinates relative to their cell's frame, as every search reads them,
/// into the layout's axis arrays: the carrying sort's top-digit pass calls it for points in the
/// caller's order (the gather in sorted order has its own loop, gather_frame_run). Its addresses
/// are held by value: through captured references the compiler reloaded them after every store
/// (it must assume that a store of an index or a cursor may alias them). A copy per thread (the
/// frame decoded last is its own).
template <int Dim, class T>
class RelativeWriter {
 public:
  RelativeWriter(const PointsView<Dim, T>& points, std::array<IndexVector<float>, Dim>& axis,
                 const GridGeometry<Dim>& grid, int frame_shift)
      : data_(points.data), stride_(points.stride), frames_(grid, frame_shift) {
    for (int k = 0; k < Dim; ++k) axis_[k] = axis[k].data();
  }
  /// Point i's coordinates, of the cell whose key is `cell_key`, at position s.
  void write(std::uint64_t cell_key, index_t i, std::size_t s) {
    const std::array<double, Dim>& origin = frames_.of_key(cell_key);
    const T* point = at(i);
    for (int k = 0; k < Dim; ++k) {
      axis_[k][s] = static_cast<float>(static_cast<double>(point[k]) - origin[k]);
    }
  }
  const T* at(index_t i) const { return data_ + i * stride_; }

 private:
  const T* data_;
  std::size_t stride_;
  std::array<float*, Dim> axis_{};
  FrameOrigins<Dim> frames_;
};

/// What the build's gather in sorted order reads and writes (gather_sorted).
template <int Dim, class T>
struct SortedGather {
  const T* data;  ///< the caller's points: point i, axis k at data[i * stride + k]
  std::size_t stride;
  const std::uint64_t* keys;     ///< sorted: packed records (key << 32 | index), or bare keys
  int key_shift;                 ///< keys[s] >> key_shift: the cell's key (slab bits dropped)
  bool packed;                   ///< indices from the records (written to order), or from order
  index_t* order;                ///< the layout's order
  const std::uint32_t* fine;     ///< coarse keys: the rest of each position's cell code; or null
  std::array<float*, Dim> axis;  ///< the layout's float coordinates
  std::uint64_t* begins;         ///< the bitmap of cell beginnings (CellBegins), zeroed
  FrameOrigins<Dim> frames;      ///< the frame of a cell key (frame_shift its frame bits)
  int frame_shift;
};

/// The point index at sorted position s: packed records hold it in their low bits; otherwise the
/// sort permuted `order`.
template <bool kPacked>
index_t sorted_index([[maybe_unused]] const std::uint64_t* keys,
                     [[maybe_unused]] const index_t* order, std::size_t s) {
  if constexpr (kPacked) {
    return static_cast<index_t>(keys[s]);
  } else {
    return order[s];
  }
}

/// gather_sorted's loop over positions [first, last) of one float frame (`origin`), every operand
/// a local; `previous` is the cell key of the position before `first` (~0 for none) and becomes
/// that of last - 1.
template <int Dim, class T, bool kPacked>
void gather_frame_run(const T* data, std::size_t stride, const std::array<double, Dim> origin,
                      const std::uint64_t* keys, int key_shift, index_t* order,
                      const std::uint32_t* fine, const std::array<float*, Dim> axis,
                      std::uint64_t* begins, std::size_t first, std::size_t last,
                      std::uint64_t& previous) {
  // Prefetching a few points ahead keeps several cache misses in flight.
  constexpr std::size_t kAhead = 16;
  const auto index_at = [keys, order](std::size_t s) {
    return sorted_index<kPacked>(keys, order, s);
  };
  std::uint64_t key_before = previous;
  std::uint64_t pending = 0;  // the begin bits of the current word
  const std::size_t prefetch_end = last > kAhead ? last - kAhead : 0;
  for (std::size_t s = first; s < last; ++s) {
    if (s < prefetch_end) __builtin_prefetch(data + index_at(s + kAhead) * stride);
    const index_t i = index_at(s);
    if constexpr (kPacked) order[s] = i;
    const T* point = data + i * stride;
    for (int k = 0; k < Dim; ++k) {
      axis[k][s] = static_cast<float>(static_cast<double>(point[k]) - origin[k]);
    }
    const std::uint64_t key = keys[s] >> key_shift;
    const bool begins_cell =
        s == 0 || key != key_before || (fine != nullptr && fine[s] != fine[s - 1]);
    pending |= static_cast<std::uint64_t>(begins_cell) << (s % 64);
    key_before = key;
    if (s % 64 == 63) {
      CellBegins::add(begins, s / 64, pending);
      pending = 0;
    }
  }
  if (last > first) CellBegins::add(begins, (last - 1) / 64, pending);
  previous = key_before;
}

/// The build's gather in sorted order, for the positions [first, last) of one thread: each
/// position's point index (unpacked from its record into order, or read from order), its float
/// coordinates relative to its cell's frame, read from the caller's points in sorted order, and
/// a bit for each position that begins a cell (where the key, or with coarse keys the exact
/// cell, changes). Run by run of one float frame (keys ascend, and a frame is a prefix of the
/// key), each in a loop that holds its operands in registers. One loop over the whole range that
/// decided each point's frame and set its bit through objects (RelativeWriter, CellBegins) kept
/// its operands on the stack: 0.42-0.62 ms against 0.33 for the gather of a W2-like build of 100k
/// points on one thread (docs/benchmarks.md).
template <int Dim, class T>
void gather_sorted(SortedGather<Dim, T> gather, std::size_t first, std::size_t last) {
  const std::uint64_t* keys = gather.keys;
  const int key_shift = gather.key_shift;
  const int frame_shift = gather.frame_shift;
  const auto frame_of = [=](std::uint64_t key) { return (key >> key_shift) >> frame_shift; };
  std::uint64_t previous = first == 0 ? ~std::uint64_t{0} : keys[first - 1] >> key_shift;
  for (std::size_t s = first; s < last;) {
    const std::uint64_t frame = frame_of(keys[s]);
    const std::uint64_t* run_end =
        std::upper_bound(keys + s, keys + last, frame,
                         [&](std::uint64_t f, std::uint64_t key) { return f < frame_of(key); });
    const auto end = static_cast<std::size_t>(run_end - keys);
    const std::array<double, Dim> origin = gather.frames.of_key(keys[s] >> key_shift);
    if (gather.packed) {
      gather_frame_run<Dim, T, true>(gather.data, gather.stride, origin, keys, key_shift,
                                     gather.order, gather.fine, gather.axis, gather.begins, s, end,
                                     previous);
    } else {
      gather_frame_run<Dim, T, false>(gather.data, gather.stride, origin, keys, key_shift,
                                      gather.order, gather.fine, gather.axis, gather.begins, s, end,
                                      previous);
    }
    s = end;
  }
}

}  // namespace

template <int Dim>
template <class T>
CellListLayout<Dim> CellListLayout<Dim>::build(const Context<Dim, T>& context,
                                               const GridGeometry<Dim>& grid, int slab_bits,
                                               CellListSpare<Dim>* spare) {
  const auto& points = context.points;
  const std::size_t n = points.size();
  const int threads = context.threads;
  // The layout and the work arrays are written into the spare's storage (an update()'s: the
  // layout it replaced last time; grown here where it is empty or short), and the work arrays go
  // back to the spare when the build returns. If anything throws, the spare just loses them.
  CellListSpare<Dim> own;  // a new index's: empty, and its arrays die with the build
  CellListSpare<Dim>& storage = spare != nullptr ? *spare : own;
  CellListLayout layout = std::move(storage.layout);
  layout.clear();
  layout.dims = grid.dims;
  const int bits = axis_bits(grid);
  // Lattices wider than a Morton code can hold are ordered by a coarser Z-order first.
  const int shift = std::max(0, bits - kMortonBitsPerAxis<Dim>);
  const auto exact_cell = [&](std::size_t i) {
    CellCoord c;
    for (int k = 0; k < Dim; ++k) {
      c[k] = static_cast<std::uint32_t>(grid.cell_along(points.coord(i, k), k));
    }
    return c;
  };

  // Work arrays are left uninitialized on resize (IndexVector): each loop below writes every
  // element, in parallel, so no thread zeroes memory first.
  //
  // Keys that fit in 32 bits (full resolution, up to 2^10 cells per axis in 3D, 2^16 in 2D) are
  // sorted packed with their point's index (radix_sort.hpp): keys[s] = code << 32 | index.
  // Slabs only with full-resolution keys that still fit the packed sort.
  if (shift > 0) slab_bits = 0;
  slab_bits = std::clamp(32 - Dim * bits, 0, slab_bits);
  layout.slab_bits = slab_bits;
  const int key_bits = Dim * (bits - shift) + slab_bits;
  const bool packed = shift == 0 && key_bits <= 32;
  // Column order: the key pass computes column keys (cell_key(); one frame, 10 bits per axis at
  // most: a packed key).
  layout.columns = column_order_for(grid, n) && packed;
  if (layout.columns) {
    layout.z_bits =
        static_cast<int>(std::bit_width(static_cast<std::uint64_t>(grid.dims[Dim - 1] - 1)));
  }
  IndexVector<std::uint64_t> keys = std::move(storage.position_keys);
  IndexVector<std::uint64_t> scratch_keys = std::move(storage.sort_keys);
  std::vector<std::uint64_t> begins = std::move(storage.cell_begins);
  std::vector<CellCoord> coords = std::move(storage.cell_coords);
  // The sort's scratch, once the sort is done: kept for the next build in a spare, else released.
  const auto done_with_scratch = [&] {
    if (spare == nullptr) IndexVector<std::uint64_t>().swap(scratch_keys);
  };
  // keys[s] >> slab_shift: the slab bits and the cell key above them of sorted position s (a
  // packed record's index dropped); keys[s] >> key_shift: the cell key alone.
  const int slab_shift = packed ? 32 : 0;
  const int key_shift = slab_shift + slab_bits;
  // The slab of the point at sorted position s.
  const auto slab_at = [&](std::int64_t s) {
    return static_cast<int>((keys[s] >> slab_shift) & ((1u << slab_bits) - 1));
  };
  sized_for_overwrite(keys, n);
  sized_for_overwrite(layout.order, n);
  const auto signed_n = static_cast<std::int64_t>(n);
  {
    // SIMD where the processor has it (cell_keys.hpp), in chunks taken in parallel: small ones,
    // so that 10k points still make ten chunks to share between the threads.
    const CellKeysFn<Dim, T> cell_keys = best_cell_keys<Dim, T>(context.simd);
    CellKeyInput<Dim, T> input{points.data, points.stride, grid.origin, grid.inv_cell, shift};
    input.slab_bits = slab_bits;
    if (layout.columns) input.column_z_bits = layout.z_bits;
    constexpr std::int64_t kChunk = 1024;
    const std::int64_t chunks = (signed_n + kChunk - 1) / kChunk;
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t c = 0; c < chunks; ++c) {
        const auto first = static_cast<std::size_t>(c * kChunk);
        const std::size_t last = std::min(n, first + kChunk);
        cell_keys(input, first, last, keys.data(), packed ? nullptr : layout.order.data());
      }
    });
  }
  // Float coordinates in sorted order (relative to their frame's origin), and a bit for each
  // sorted position that begins a cell: where the key changes (or, with a coarse key, the exact
  // cell), turned into cell starts by index_cells.
  begins.assign((n + 63) / 64, 0);
  for (int k = 0; k < Dim; ++k) sized_for_overwrite(layout.axis[k], n);
  // A cell key without its low Dim * (kFrameBits - shift) bits is the Morton code of the cell's
  // float frame (shift < kFrameBits: a coarse key drops fewer bits per axis than a frame spans).
  static_assert(kMortonBitsPerAxis<Dim> + kFrameBits > 30, "coarse keys must hold frames");
  const int frame_shift = Dim * (kFrameBits - shift);
  const RelativeWriter<Dim, T> writer(points, layout.axis, grid, frame_shift);
  // With coarse keys, the low Dim * shift bits of each sorted position's cell code (fine[s]).
  IndexVector<std::uint32_t> fine;
  if (packed && n >= radix_detail::kCarryingFrom && scattered_order(keys, key_bits)) {
    // The points are read in the caller's order as the top-digit pass moves their records, their
    // float coordinates written straight to where that pass puts the record: into the bucket of
    // its top digit, which is where its sorted position lies too. Each bucket, once sorted in
    // cache, permutes its own coordinates into place. Against a gather in sorted order (below),
    // no read of the caller's points at random: shuffled, 2 threads, medians of five alternated
    // rounds, W2 1M 17.5 -> 16.0 ms, W1 4M 83.2 -> 66.8, W5 4M 107.5 -> 85.1; whatever the key's
    // width (W3 1M, 22 bits, had LSD passes and the gather: build 1.09-1.20x faster carried;
    // docs/benchmarks.md). Points already in spatial order (scattered_order false) keep the
    // gather, which then reads them in sequence, and so do fewer than kCarryingFrom points, which
    // stay in the caches.
    sized_for_overwrite(scratch_keys, n);
    const auto carry_for = [&](int) {
      return [mine = writer, records = keys.data(), key_shift](std::size_t i,
                                                               std::size_t dst) mutable {
        mine.write(records[i] >> key_shift, static_cast<index_t>(i), dst);
      };
    };
    const auto finish_for = [&](int) {
      return [&, bucket = std::array<std::vector<float>, Dim>{}](
                 std::size_t first, std::size_t count, const std::uint32_t* source) mutable {
        // Raw pointers: the compiler cannot keep a vector's data pointer in a register across
        // stores of floats and indices that it must assume may alias it.
        std::array<float*, Dim> axis;
        std::array<const float*, Dim> carried;
        for (int k = 0; k < Dim; ++k) {
          axis[k] = layout.axis[k].data() + first;
          bucket[k].assign(axis[k], axis[k] + count);
          carried[k] = bucket[k].data();
        }
        const std::uint64_t* sorted = keys.data() + first;
        index_t* order = layout.order.data() + first;
        CellBegins marks(begins);
        // A bucket's first point begins a cell: the bucket before has another top digit, of the
        // cell code's bits (the digit lies above the slab bits).
        std::uint64_t previous_cell = ~std::uint64_t{0};
        for (std::size_t j = 0; j < count; ++j) {
          const std::uint32_t from = source[j];
          order[j] = static_cast<index_t>(sorted[j]);
          for (int k = 0; k < Dim; ++k) axis[k][j] = carried[k][from];
          const std::uint64_t cell = sorted[j] >> key_shift;
          marks.set(first + j, cell != previous_cell);
          previous_cell = cell;
        }
      };
    };
    radix_detail::sort_top_digit_first_carrying(keys.data(), scratch_keys.data(), n, 32, key_bits,
                                                threads, carry_for, finish_for);
    done_with_scratch();
  } else {
    if (packed) {
      radix_sort_packed(keys, key_bits, threads, scratch_keys);
    } else {
      IndexVector<std::uint32_t> scratch_values;
      radix_sort_pairs(keys, layout.order, key_bits, threads, scratch_keys, scratch_values);
    }
    done_with_scratch();
    if (shift > 0) {
      const auto low_mask = (std::uint32_t{1} << shift) - 1;
      fine = sort_within_coarse_keys(keys, layout.order, threads, [&](std::size_t i) {
        CellCoord low = exact_cell(i);
        for (int k = 0; k < Dim; ++k) low[k] &= low_mask;
        return static_cast<std::uint32_t>(morton_code<Dim>(low));
      });
    }
    // The points are read in sorted order, which is random for shuffled input; an even share of
    // the positions per thread.
    SortedGather<Dim, T> gather{.data = points.data,
                                .stride = points.stride,
                                .keys = keys.data(),
                                .key_shift = key_shift,
                                .packed = packed,
                                .order = layout.order.data(),
                                .fine = shift > 0 ? fine.data() : nullptr,
                                .axis = {},
                                .begins = begins.data(),
                                .frames = FrameOrigins<Dim>(grid, frame_shift),
                                .frame_shift = frame_shift};
    for (int k = 0; k < Dim; ++k) gather.axis[k] = layout.axis[k].data();
    parallel_region(threads, [&] {
      const auto team = static_cast<std::size_t>(team_size());
      const auto t = static_cast<std::size_t>(thread_id());
      gather_sorted(gather, n * t / team, n * (t + 1) / team);
    });
  }
  // The cell coordinates are decoded from the keys (a full-resolution key is its cell's Morton
  // code; a coarse one its high bits, and fine[s] the rest), not recomputed from the caller's
  // points (read at random: a cache miss per cell at 4M points).
  // (Column keys lie below the frame bits: their frames decoded as frame 0, as they are.)
  layout.index_cells(
      begins, n, threads,
      [decode = typename CellListLayout::SortedKeyDecoder(layout), sorted_keys = keys.data(),
       key_shift, fine = fine.data(), shift](std::uint32_t s) mutable {
        CellCoord c = decode(sorted_keys[s] >> key_shift);
        if (shift > 0) {
          const CellCoord low = morton_decode<Dim>(fine[s]);
          for (int k = 0; k < Dim; ++k) c[k] = c[k] << shift | low[k];
        }
        return c;
      },
      coords);
  layout.index_slabs(threads, slab_at);
  layout.index_order(coords, threads);
  layout.index_lookup(grid, coords, threads);
  storage.position_keys = std::move(keys);
  storage.sort_keys = std::move(scratch_keys);
  storage.cell_begins = std::move(begins);
  storage.cell_coords = std::move(coords);
  return layout;
}

template <int Dim>
void CellListLayout<Dim>::clear() {
  // Every array moves into a default layout, emptied; an array left out here would only lose its
  // storage, never leave stale contents.
  CellListLayout empty;
  const auto keep = [](auto& from, auto& to) {
    from.clear();
    to.swap(from);
  };
  keep(order, empty.order);
  for (int k = 0; k < Dim; ++k) keep(axis[k], empty.axis[k]);
  keep(cell_start, empty.cell_start);
  keep(slab_start, empty.slab_start);
  keep(tiles, empty.tiles);
  keep(cell_z, empty.cell_z);
  keep(column_runs, empty.column_runs);
  keep(column_slots, empty.column_slots);
  keep(tile_slots, empty.tile_slots);
  keep(near_occupied, empty.near_occupied);
  keep(dense, empty.dense);
  *this = std::move(empty);
}

template <int Dim>
void CellListLayout<Dim>::index_order(std::span<const CellCoord> coords, int threads) {
  tiles.clear();
  cell_z.clear();
  column_runs.clear();
  if (!columns) {
    index_tiles(coords, threads);
    return;
  }
  const auto count = static_cast<std::int64_t>(coords.size());
  cell_z.resize(coords.size());
  parallel_region(threads_for_pass(coords.size(), threads), [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < count; ++c) {
      cell_z[c] = static_cast<std::uint16_t>(coords[c][Dim - 1]);
    }
  });
  for (std::int64_t c = 0; c < count; ++c) {
    if (c > 0 && column_of(coords[c - 1]) == column_of(coords[c])) continue;
    column_runs.push_back(ColumnRun{static_cast<std::uint32_t>(c),
                                    static_cast<std::uint16_t>(coords[c][0]),
                                    static_cast<std::uint16_t>(coords[c][1])});
  }
}

template <int Dim>
void CellListLayout<Dim>::index_tiles(std::span<const CellCoord> coords, int threads) {
  // Each tile is a run of consecutive cells (Z-order). In parallel: chunks of cells count the
  // tiles that begin in them, then each tile is written by the chunk it begins in, which reads
  // on past the chunk's end for the tile's last cells.
  const std::size_t count = coords.size();
  constexpr std::size_t kChunk = 8192;
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<std::size_t> tiles_before(chunks + 1, 0);
  const auto signed_chunks = static_cast<std::int64_t>(chunks);
  // The tile of the cell before c; before cell 0, all ones: no tile's coordinates (a lattice has
  // at most 2^30 cells per axis).
  const auto tile_before = [&](std::size_t c) {
    if (c > 0) return tile_of(coords[c - 1]);
    CellCoord none;
    none.fill(~std::uint32_t{0});
    return none;
  };
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      const std::size_t first = static_cast<std::size_t>(j) * kChunk;
      const std::size_t last = std::min(count, first + kChunk);
      CellCoord previous = tile_before(first);
      std::size_t begun = 0;
      for (std::size_t c = first; c < last; ++c) {
        const CellCoord tile = tile_of(coords[c]);
        begun += same_coords(tile, previous) ? 0 : 1;
        previous = tile;
      }
      tiles_before[static_cast<std::size_t>(j) + 1] = begun;
    }
  });
  std::partial_sum(tiles_before.begin(), tiles_before.end(), tiles_before.begin());
  tiles.resize(tiles_before[chunks]);
  parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
    for (std::int64_t j = 0; j < signed_chunks; ++j) {
      const std::size_t first = static_cast<std::size_t>(j) * kChunk;
      const std::size_t last = std::min(count, first + kChunk);
      std::size_t t = tiles_before[static_cast<std::size_t>(j)];
      CellCoord previous = tile_before(first);
      Tile* tile = nullptr;     // the tile of cell c, once one has begun in this chunk
      std::uint64_t cells = 0;  // its cells so far (stored when it ends: no store per cell)
      for (std::size_t c = first; c < count; ++c) {
        const CellCoord at = tile_of(coords[c]);
        if (!same_coords(at, previous)) {
          if (tile != nullptr) tile->cells = cells;
          tile = nullptr;
          if (c >= last) break;
          tile = &tiles[t++];
          *tile = Tile{at, static_cast<std::uint32_t>(c), 0};
          cells = 0;
          previous = at;
        }
        cells |= std::uint64_t{1} << code_in_tile(coords[c]);
      }
      if (tile != nullptr) tile->cells = cells;
    }
  });
}

template <int Dim>
void CellListLayout<Dim>::index_lookup(const GridGeometry<Dim>& grid,
                                       std::span<const CellCoord> coords, int threads) {
  const std::size_t count = cells();
  tile_slots.clear();
  dense.clear();
  near_occupied.clear();
  table_mask = 0;
  column_slots.clear();
  if (columns) {
    // column_slots, from column_runs and cell_z (index_order()). Slots of empty columns all hold
    // 0 (no cell at any z); each column with points fills its own.
    const auto nz = static_cast<std::size_t>(dims[Dim - 1]);
    column_slots.assign(static_cast<std::size_t>(dims[0] * dims[1]) * (nz + 1), 0);
    const auto runs = static_cast<std::int64_t>(column_runs.size());
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t k = 0; k < runs; ++k) {
        const ColumnRun& run = column_runs[static_cast<std::size_t>(k)];
        std::uint32_t cell = run.first;
        const auto stop = k + 1 < runs ? column_runs[static_cast<std::size_t>(k) + 1].first
                                       : static_cast<std::uint32_t>(count);
        const std::size_t column = run.x + static_cast<std::size_t>(dims[0]) * run.y;
        std::uint32_t* slots = column_slots.data() + column * (nz + 1);
        for (std::size_t z = 0; z <= nz; ++z) {
          while (cell < stop && cell_z[cell] < z) ++cell;
          slots[z] = cell;
        }
      }
    });
  } else if (grid.total_cells() <= static_cast<double>(size()) + kDenseSlack) {
    dense.assign(static_cast<std::size_t>(grid.total_cells()), kNoCell);
    const auto signed_cells = static_cast<std::int64_t>(count);
    parallel_region(threads, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t c = 0; c < signed_cells; ++c) {
        std::int64_t linear = coords[c][Dim - 1];
        for (int k = Dim - 2; k >= 0; --k) linear = linear * grid.dims[k] + coords[c][k];
        dense[static_cast<std::size_t>(linear)] = static_cast<std::uint32_t>(c);
      }
    });
  } else {
    const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(2 * tiles.size(), 2));
    tile_slots.assign(capacity, kNoCell);
    table_mask = capacity - 1;
    for (std::size_t t = 0; t < tiles.size(); ++t) {
      std::uint64_t slot = hash(tiles[t].at) & table_mask;
      while (tile_slots[slot] != kNoCell) slot = (slot + 1) & table_mask;
      tile_slots[slot] = static_cast<std::uint32_t>(t);
    }
  }
  // The occupancy bitmap: the finest blocks within budget (a lattice has at most 2^30 cells per
  // axis: 30 halvings leave a single block).
  const double budget = kOccupancyBitsPerPoint * static_cast<double>(size()) + 262144.0;
  double blocks = 0.0;
  for (occupied_shift = 0;; ++occupied_shift) {
    blocks = 1.0;
    for (int k = 0; k < Dim; ++k) {
      occupied_dims[k] = static_cast<std::uint64_t>(((grid.dims[k] - 1) >> occupied_shift) + 1);
      blocks *= static_cast<double>(occupied_dims[k]);
    }
    if (blocks <= budget) break;
  }
  // The blocks with points, dilated into near_occupied and then dropped (cell_list_layout.hpp).
  // Each thread marks its share of the cells in a bitmap of its own, ORed into the first after:
  // atomic ORs into one bitmap bounced its few lines between the cores (W1, 100k points, 2
  // threads: 19% of the build's samples, on the `lock or`, and the build slower than on one
  // thread; docs/benchmarks.md). A copy costs its words to clear and merge: one per `words`
  // cells at most.
  const std::size_t words = (static_cast<std::size_t>(blocks) + 63) / 64;
  const auto wanted = static_cast<int>(std::clamp<std::size_t>(
      count / words, 1, static_cast<std::size_t>(threads_for_pass(count, threads))));
  IndexVector<std::uint64_t> marks;
  sized_for_overwrite(marks, static_cast<std::size_t>(wanted) * words);
  std::size_t copies = 1;
  parallel_region(wanted, [&] {
    const auto team = static_cast<std::size_t>(team_size());
    const auto t = static_cast<std::size_t>(thread_id());
    if (t == 0) copies = team;  // read after the region: no barrier needed
    std::uint64_t* own = marks.data() + t * words;
    std::fill(own, own + words, std::uint64_t{0});
    for (std::size_t c = count * t / team; c < count * (t + 1) / team; ++c) {
      const std::uint64_t bit = occupancy_bit(coords[c]);
      own[bit >> 6] |= std::uint64_t{1} << (bit & 63);
    }
  });
  if (copies > 1) {
    const auto signed_words = static_cast<std::int64_t>(words);
    parallel_region(threads_for_pass(copies * words, threads), [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t w = 0; w < signed_words; ++w) {
        for (std::size_t t = 1; t < copies; ++t) marks[w] |= marks[t * words + w];
      }
    });
  }
  // Blocks of 2^occupied_shift cells: a reach of `reach` cells spans that many blocks, rounded up.
  const int block_reach = (grid.reach + (1 << occupied_shift) - 1) >> occupied_shift;
  near_occupied = dilated<Dim>({marks.data(), words}, occupied_dims, block_reach, threads);
  // Where nearly every block is near points (a lattice the points fill, W1 and W2), the test
  // would rule out almost no query and cost each one a bit read (W1, 1M ball queries, 1 thread:
  // 189 against 211 ms): no bitmap, and near_points() says true.
  std::uint64_t near = 0;
  for (const std::uint64_t word : near_occupied)
    near += static_cast<std::uint64_t>(std::popcount(word));
  if (static_cast<double>(near) > kNearShareKept * blocks) near_occupied = {};
}

#define SPATIALHASH_INSTANTIATE(D, T)                  \
  template CellListLayout<D> CellListLayout<D>::build( \
      const Context<D, T>&, const GridGeometry<D>&, int, CellListSpare<D>*);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE
template class CellListLayout<2>;
template class CellListLayout<3>;

}  // namespace spatialhash::detail
