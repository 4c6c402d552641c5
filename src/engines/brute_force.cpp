// Brute force: every pair tested once. The oracle the other engines are measured against, and the
// right choice below a few hundred points.
#include "../engine_base.hpp"
#include "../exact.hpp"

namespace spatialhash::detail {
namespace {

template <int Dim, class T>
class BruteForce final : public EngineBase<Dim, T> {
 public:
  using Base = EngineBase<Dim, T>;
  using Base::Base;
  using typename Base::Position;

  Engine kind() const override { return Engine::brute_force; }
  void update(const Context<Dim, T>& context) override { this->context_ = context; }

  void pairs(double radius, PairSink& sink) const override {
    const auto& points = this->context_.points;
    const double r2 = radius * radius;
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = i + 1; j < points.size(); ++j) {
        const double d2 = distance_squared(points, i, j);
        if (d2 <= r2) sink.emplace(index_t(i), index_t(j), d2);
      }
    }
  }

  void ball(const Position& center, double radius, HitSink& sink) const override {
    const auto& points = this->context_.points;
    const double r2 = radius * radius;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double d2 = distance_squared(points, i, center);
      if (d2 <= r2) sink.emplace(index_t(i), d2);
    }
  }
};

}  // namespace

template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_brute_force(const Context<Dim, T>& context) {
  return std::make_unique<BruteForce<Dim, T>>(context);
}

#define SPATIALHASH_INSTANTIATE(D, T) \
  template std::unique_ptr<EngineBase<D, T>> make_brute_force(const Context<D, T>&);
SPATIALHASH_FOR_EACH_DIM_TYPE(SPATIALHASH_INSTANTIATE)
#undef SPATIALHASH_INSTANTIATE

}  // namespace spatialhash::detail
