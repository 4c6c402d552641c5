// FrameOrigins: the origin of each cell key's float frame (cell_list_layout.hpp, "Float
// frames"), for the passes that write points' float coordinates: the build's and update()'s.
#pragma once

#include <array>
#include <cstdint>

#include "../grid_geometry.hpp"
#include "../morton.hpp"
#include "cell_list_layout.hpp"

namespace spatialhash::detail {

/// The origin of the float frame of one cell key after another (a key without its low
/// `frame_shift` bits is the Morton code of its cell's frame, cell_list_layout.hpp): decoded
/// only when the frame changes, which along the sorted order is rare, and in any order never on
/// a lattice of one frame.
template <int Dim>
class FrameOrigins {
 public:
  FrameOrigins(const GridGeometry<Dim>& grid, int frame_shift)
      : grid_(&grid), frame_shift_(frame_shift) {}

  const std::array<double, Dim>& of_key(std::uint64_t key) {
    if (const std::uint64_t f = key >> frame_shift_; f != frame_) {
      frame_ = f;
      const auto decoded = morton_decode<Dim>(f);
      for (int k = 0; k < Dim; ++k) {
        origin_[k] = CellListLayout<Dim>::frame_origin(
            *grid_, k, static_cast<std::int64_t>(decoded[k]) << CellListLayout<Dim>::kFrameBits);
      }
    }
    return origin_;
  }

 private:
  const GridGeometry<Dim>* grid_;
  int frame_shift_;
  std::uint64_t frame_ = ~std::uint64_t{0};  // no frame's code: the first key decodes its own
  std::array<double, Dim> origin_{};
};

}  // namespace spatialhash::detail
