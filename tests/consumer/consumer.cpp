// Installed-package smoke check: builds an index through find_package(spatialhash) and compares
// one result with a brute-force count.
#include <cstdio>
#include <vector>

#include "spatialhash/spatialhash.hpp"

int main() {
  std::vector<double> xy;
  for (int i = 0; i < 50; ++i) {
    xy.push_back(i * 0.3);
    xy.push_back((i * 7 % 11) * 0.2);
  }
  spatialhash::Index<2, double> index(std::span<const double>(xy), 1.0);
  std::size_t brute = 0;
  for (std::size_t i = 0; i < 50; ++i)
    for (std::size_t j = i + 1; j < 50; ++j) {
      const double dx = xy[2 * i] - xy[2 * j], dy = xy[2 * i + 1] - xy[2 * j + 1];
      brute += dx * dx + dy * dy <= 1.0;
    }
  const std::size_t found = index.pairs().pairs.size();
  std::printf("consumer: %zu pairs (brute force %zu)\n", found, brute);
  return found == brute && brute > 0 ? 0 : 1;
}
