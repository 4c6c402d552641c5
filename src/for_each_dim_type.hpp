// The (Dim, T) combinations the library is built for, as one macro for explicit instantiations.
#pragma once

/// Explicitly instantiates a template for the four supported (Dim, T) combinations.
#define SPATIALHASH_FOR_EACH_DIM_TYPE(MACRO) \
  MACRO(2, float)                            \
  MACRO(2, double)                           \
  MACRO(3, float)                            \
  MACRO(3, double)
