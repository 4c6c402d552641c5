// PLACEHOLDER: replaced by the real engine.
#include "../engine_base.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_cell_list(const Context<Dim, T>& context) {
  return make_brute_force(context);  // PLACEHOLDER until the engine lands
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_cell_list(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
