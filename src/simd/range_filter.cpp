// The scalar range filter (see range_filter.hpp) and the run-time choice of filter.
#include "range_filter.hpp"

namespace spatialhash::detail {

template <int Dim>
void range_filter_scalar(const SoaView<Dim>& points, std::uint32_t begin, std::uint32_t end,
                         const std::array<float, Dim>& query, FloatBand band, std::uint32_t exclude,
                         FilterOutput& out) {
  // Branch-free appends: every candidate is written, the count advances only for the kept ones.
  for (std::uint32_t j = begin; j < end; ++j) {
    float d2 = 0.0f;
    for (int k = 0; k < Dim; ++k) {
      const float d = points.axis[k][j] - query[k];
      d2 += d * d;
    }
    const std::uint32_t id = points.ids[j];
    const bool candidate = !(d2 > band.hi) && id != exclude;  // NaN counts as borderline
    const bool sure = candidate && d2 <= band.lo;
    out.sure[out.sure_count] = id;
    out.sure_count += sure;
    out.border[out.border_count] = id;
    out.border_count += candidate && !sure;
  }
}

template <int Dim>
RangeFilterFn<Dim> best_range_filter() {
#ifdef SPATIALHASH_HAVE_AVX512
  if (__builtin_cpu_supports("avx512f")) return &range_filter_avx512<Dim>;
#endif
  return &range_filter_scalar<Dim>;
}

#define SPATIALHASH_INSTANTIATE(D)                                                            \
  template void range_filter_scalar<D>(const SoaView<D>&, std::uint32_t, std::uint32_t,       \
                                       const std::array<float, D>&, FloatBand, std::uint32_t, \
                                       FilterOutput&);                                        \
  template RangeFilterFn<D> best_range_filter<D>();
SPATIALHASH_INSTANTIATE(2)
SPATIALHASH_INSTANTIATE(3)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
