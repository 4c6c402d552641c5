// spatialhash: exact fixed-radius neighbor search in 2D and 3D, built on spatial hashing.
//
// Design in one paragraph. Space is cut into cubic cells of edge r(1 + 2^-18) over the points'
// bounding box, so every neighbor of a point lies in its own cell or one of the 3^Dim - 1 cells
// around it (grid_geometry.hpp proves this survives rounding). Engines differ only in how they
// find the points of a cell: a dense array over the box, a hash table of cells, a sorted key
// array, a multimap; the default engine (cell_list) reorders the points by cell along a Z-order
// curve into a compact float copy and tests whole cells against their stencil with SIMD, then
// re-decides in double every candidate whose float distance lies within a rounding band of r.
// Every engine applies the same rule (index.hpp), so all return identical neighbor sets.
//
// Include this header and use spatialhash::Index<Dim, T>.
#pragma once

#include "spatialhash/box.hpp"
#include "spatialhash/function_ref.hpp"
#include "spatialhash/index.hpp"
#include "spatialhash/point_sets.hpp"
#include "spatialhash/points.hpp"
#include "spatialhash/reorder.hpp"
#include "spatialhash/sized_particles.hpp"
#include "spatialhash/types.hpp"
