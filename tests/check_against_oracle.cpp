// The four forms of check_against_oracle, compiled once for every test that uses them.
#include "check_against_oracle.hpp"

template void check_against_oracle<2, float>(const spatialhash::Options&, const datasets::Dataset&);
template void check_against_oracle<2, double>(const spatialhash::Options&,
                                              const datasets::Dataset&);
template void check_against_oracle<3, float>(const spatialhash::Options&, const datasets::Dataset&);
template void check_against_oracle<3, double>(const spatialhash::Options&,
                                              const datasets::Dataset&);
