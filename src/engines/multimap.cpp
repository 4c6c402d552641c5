// PLACEHOLDER: replaced by the real engine.
#include "../engine_base.hpp"

namespace spatialhash::detail {

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_multimap(const Context<Dim, T>& context) {
  (void)context;
  throw InvalidArgument("spatialhash: engine multimap is not built yet");  // PLACEHOLDER
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_multimap(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
