// PointsView: how spatialhash reads the caller's points without copying them.
#pragma once

#include <cstddef>
#include <span>

namespace spatialhash {

/// A read-only view of `count` points of dimension Dim stored in the caller's memory, point i at
/// data[i * stride .. i * stride + Dim). The default stride (Dim) is the interleaved x,y[,z]
/// layout; a larger stride reads coordinates straight out of an array of structs (for a `struct
/// Particle { float x, y, z, mass; }` pass stride = sizeof(Particle) / sizeof(float)). The view
/// does not own the memory: keep it alive and unchanged while an Index built on it lives (call
/// Index::update after moving the points).
template <int Dim, class T>
struct PointsView {
  static_assert(Dim == 2 || Dim == 3, "spatialhash supports 2D and 3D points");
  const T* data = nullptr;
  std::size_t count = 0;
  std::size_t stride = Dim;

  PointsView() = default;
  PointsView(const T* data_, std::size_t count_, std::size_t stride_ = Dim)
      : data(data_), count(count_), stride(stride_) {}

  std::size_t size() const { return count; }
  /// Coordinate k of point i, converted to double (the precision every decision is made in).
  double coord(std::size_t i, int k) const { return static_cast<double>(data[i * stride + k]); }
};

/// Interprets an interleaved coordinate array (x0,y0[,z0],x1,...) as points. Throws
/// InvalidArgument when the length is not a multiple of Dim.
template <int Dim, class T>
PointsView<Dim, T> interleaved(std::span<const T> coords);

}  // namespace spatialhash
