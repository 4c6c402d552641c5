// AnyIndex: one run-time interface over the four compile-time types Index<Dim, T>, so the Python
// class can hold whichever one the input array calls for. Plain C++: no Python types in here.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "spatialhash/spatialhash.hpp"

namespace spatialhash::python {

/// Interleaved coordinates (x0, y0[, z0], x1, ...) in either precision. The index borrows them:
/// the caller keeps the memory alive and unchanged while the index lives.
using Coords = std::variant<std::span<const float>, std::span<const double>>;

/// The queries the Python module needs, independent of dimension and precision. Every method is
/// safe to call from several threads at once except update(), which the caller serialises.
class AnyIndex {
 public:
  virtual ~AnyIndex() = default;

  virtual int dim() const = 0;
  virtual std::size_t size() const = 0;
  virtual double radius() const = 0;
  virtual Engine engine() const = 0;
  virtual int threads() const = 0;

  virtual PairList pairs(const ListOptions& options) const = 0;
  /// Every pair within `radius` once, written to `out` (Index::pairs(PairOutput&)).
  virtual void pairs(PairOutput& out, double radius) const = 0;
  virtual NeighborLists neighbor_lists(const ListOptions& options) const = 0;
  virtual NeighborRows neighbor_rows(const ListOptions& options) const = 0;
  virtual std::vector<index_t> neighbor_counts(double radius) const = 0;
  /// Row q: the indexed points within options.radius of query position q. `queries` holds dim()
  /// doubles per position.
  virtual NeighborLists cross(std::span<const double> queries,
                              const ListOptions& options) const = 0;
  /// The rows of cross() as NeighborRows (Index::cross_rows).
  virtual NeighborRows cross_rows(std::span<const double> queries,
                                  const ListOptions& options) const = 0;
  /// Like cross(), with radius radii[q] for position q (one radius per position).
  virtual NeighborLists balls(std::span<const double> queries, std::span<const double> radii,
                              bool sorted) const = 0;
  /// The indexed points within `radius` of one position (dim() doubles) into `out`, sorted or
  /// not: Index::ball on the calling thread. Position and radius are checked as balls() checks.
  virtual void ball(std::span<const double> position, double radius, bool sorted,
                    std::vector<index_t>& out) const = 0;
  /// Number of indexed points within radii[q] of position q, for every q (no lists built).
  virtual std::vector<index_t> ball_counts(std::span<const double> queries,
                                           std::span<const double> radii) const = 0;
  /// Re-indexes after the points moved: same count, same precision as at construction.
  virtual void update(Coords coords) = 0;
};

/// Builds the Index<dim, T> matching the precision of `coords` (dim is 2 or 3). Throws
/// InvalidArgument for every bad input, as Index does. A non-empty `boxsize` (dim entries, SciPy's
/// convention) makes the index periodic in the box [0, boxsize[k]) on every axis k whose entry is
/// finite and > 0; the other axes are open.
std::unique_ptr<AnyIndex> make_any_index(int dim, Coords coords, double radius, Options options,
                                         std::span<const double> boxsize = {});

}  // namespace spatialhash::python
