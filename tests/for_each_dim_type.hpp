// for_each_dim_type: runs a templated test body for every supported (Dim, T): 2D and 3D, float
// and double.
#pragma once

/// Calls body.template operator()<Dim, T>() for (2, float), (2, double), (3, float), (3, double).
template <class Body>
void for_each_dim_type(Body body) {
  body.template operator()<2, float>();
  body.template operator()<2, double>();
  body.template operator()<3, float>();
  body.template operator()<3, double>();
}
