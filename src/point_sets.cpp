// PointSets: one Index per set; a set searched against itself uses its pair search, against
// another set a cross query of its points into the other set's index (see point_sets.hpp).
#include "spatialhash/point_sets.hpp"

#include <string>

#include "engine_base.hpp"

namespace spatialhash {

template <int Dim, class T>
PointSets<Dim, T>::PointSets(double radius, Options options) : radius_(radius), options_(options) {
  detail::check_radius(radius, "radius");
  detail::checked_threads(options.threads);
}

template <int Dim, class T>
std::size_t PointSets<Dim, T>::add_set(PointsView<Dim, T> points) {
  sets_.push_back(Set{points, Index<Dim, T>(points, radius_, options_)});
  for (auto& row : active_) row.push_back(true);
  active_.emplace_back(sets_.size(), true);
  return sets_.size() - 1;
}

template <int Dim, class T>
std::size_t PointSets<Dim, T>::add_set(std::span<const T> coords) {
  return add_set(interleaved<Dim, T>(coords));
}

template <int Dim, class T>
void PointSets<Dim, T>::check_set(std::size_t set, const char* role) const {
  if (set >= sets_.size()) {
    throw InvalidArgument(std::string("spatialhash: ") + role + " set id " + std::to_string(set) +
                          " is out of range (" + std::to_string(sets_.size()) + " sets)");
  }
}

template <int Dim, class T>
void PointSets<Dim, T>::check_pair(std::size_t a, std::size_t b) const {
  check_set(a, "first");
  check_set(b, "second");
  if (!active_[a][b]) {
    throw InvalidArgument("spatialhash: set pair (" + std::to_string(a) + ", " + std::to_string(b) +
                          ") is not active");
  }
}

template <int Dim, class T>
std::size_t PointSets<Dim, T>::set_size(std::size_t set) const {
  check_set(set, "the");
  return sets_[set].points.size();
}

template <int Dim, class T>
void PointSets<Dim, T>::activate(std::size_t a, std::size_t b, bool active) {
  check_set(a, "first");
  check_set(b, "second");
  active_[a][b] = active;
}

template <int Dim, class T>
bool PointSets<Dim, T>::is_active(std::size_t a, std::size_t b) const {
  check_set(a, "first");
  check_set(b, "second");
  return active_[a][b];
}

template <int Dim, class T>
void PointSets<Dim, T>::update() {
  for (Set& set : sets_) set.index.update(set.points);
}

template <int Dim, class T>
void PointSets<Dim, T>::update(std::size_t set, PointsView<Dim, T> points) {
  check_set(set, "the");
  sets_[set].index.update(points);
  sets_[set].points = points;
}

template <int Dim, class T>
NeighborLists PointSets<Dim, T>::neighbor_lists(std::size_t a, std::size_t b,
                                                const ListOptions& options) const {
  check_pair(a, b);
  if (a == b) return sets_[a].index.neighbor_lists(options);
  return sets_[b].index.cross(sets_[a].points, options);
}

template <int Dim, class T>
SetNeighborLists PointSets<Dim, T>::neighbor_lists(const ListOptions& options) const {
  SetNeighborLists all;
  all.sets = size();
  all.blocks.resize(size() * size());
  all.active.resize(size() * size());
  // Each block's query is parallel on its own (Options::threads), so blocks go one by one.
  for (std::size_t a = 0; a < size(); ++a) {
    for (std::size_t b = 0; b < size(); ++b) {
      NeighborLists& block = all.blocks[a * size() + b];
      all.active[a * size() + b] = active_[a][b];
      if (active_[a][b]) {
        block = neighbor_lists(a, b, options);
      } else {
        block.offsets.assign(sets_[a].points.size() + 1, 0);
      }
    }
  }
  return all;
}

#define SPATIALHASH_INSTANTIATE(D, T) template class PointSets<D, T>;
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash
