// The scalar block filter (see block_filter.hpp) and the run-time choice of filter.
#include "block_filter.hpp"
#include "kernel_choice.hpp"

namespace spatialhash::detail {

template <int Dim>
void block_filter_scalar(const SoaView<Dim>& points, const CandidateRuns& runs,
                         const QueryBlock<Dim>& queries, FloatBand band, BlockOutput& out) {
  for (int q = 0; q < queries.count; ++q) {
    std::uint32_t* sure =
        out.sure != nullptr ? out.sure + static_cast<std::size_t>(q) * out.stride : nullptr;
    std::uint32_t* border = out.border + static_cast<std::size_t>(q) * out.stride;
    std::uint32_t sure_count = 0, border_count = 0;
    const std::uint32_t skip = queries.skip[static_cast<std::size_t>(q)];
    const auto& query = queries.position[static_cast<std::size_t>(q)];
    // Branch-free appends: every candidate is written, the count advances only for the kept ones.
    for (int i = 0; i < runs.count; ++i) {
      const CandidateRun run = runs.run[static_cast<std::size_t>(i)];
      for (std::uint32_t j = run.begin; j < run.end; ++j) {
        float d2 = 0.0f;
        for (int k = 0; k < Dim; ++k) {
          const float d = points.axis[k][j] - query[k];
          d2 += d * d;
        }
        const bool skipped = queries.after ? j <= skip : j == skip;
        const bool candidate = !(d2 > band.hi) && !skipped;  // NaN counts as borderline
        const bool is_sure = candidate && d2 <= band.lo;
        if (sure != nullptr) sure[sure_count] = points.ids[j];
        sure_count += is_sure;
        border[border_count] = points.ids[j];
        border_count += candidate && !is_sure;
      }
    }
    out.sure_count[static_cast<std::size_t>(q)] = sure_count;
    out.border_count[static_cast<std::size_t>(q)] = border_count;
  }
}

template <int Dim>
BlockFilterFn<Dim> best_block_filter(Simd limit) {
  return choose_kernel<BlockFilterFn<Dim>>(
      limit, SPATIALHASH_AVX512_KERNEL(&block_filter_avx512<Dim>),
      SPATIALHASH_AVX2_KERNEL(&block_filter_avx2<Dim>), &block_filter_scalar<Dim>);
}

#define SPATIALHASH_INSTANTIATE(D)                                                     \
  template void block_filter_scalar<D>(const SoaView<D>&, const CandidateRuns&,        \
                                       const QueryBlock<D>&, FloatBand, BlockOutput&); \
  template BlockFilterFn<D> best_block_filter<D>(Simd);
SPATIALHASH_INSTANTIATE(2)
SPATIALHASH_INSTANTIATE(3)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
