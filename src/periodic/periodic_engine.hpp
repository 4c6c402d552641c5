// The periodic engine: periodic boundaries for every engine, as a decorator. It wraps the points
// into the box, adds ghost images near the faces (periodic_images.hpp) and searches that
// augmented set with an ordinary inner engine, mapping ghosts back to the caller's indices.
#pragma once

#include <memory>

#include "../engine_base.hpp"
#include "spatialhash/box.hpp"

namespace spatialhash::detail {

/// Throws InvalidArgument naming the axis unless every periodic axis of `box` has finite bounds,
/// upper > lower and radius (1 + 1e-12) < half its edge.
template <int Dim>
void check_periodic_box(const PeriodicBox<Dim>& box, double radius);

/// An engine of kind `kind` (the inner engine; automatic allowed) with the periodic
/// boundaries of `box`, over a context whose points are validated (make_point_context).
template <int Dim, class T>
std::unique_ptr<EngineBase<Dim, T>> make_periodic_engine(Engine kind,
                                                         const Context<Dim, T>& context,
                                                         const PeriodicBox<Dim>& box);

}  // namespace spatialhash::detail
