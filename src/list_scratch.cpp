// ListScratch's out-of-line parts, where ListScratchData is complete.
#include "list_scratch.hpp"

namespace spatialhash {

void detail::ListScratchDelete::operator()(ListScratchData* data) const noexcept {
  std::default_delete<ListScratchData>()(data);
}

std::size_t ListScratch::bytes() const noexcept {
  return data_ ? data_->bytes() : 0;
}

}  // namespace spatialhash
