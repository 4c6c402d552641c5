// A physical check of periodic boxes: in GROMACS's equilibrated box of 216 SPC water molecules
// (Debian package gromacs-data, installed by scripts/setup.sh) each oxygen has about 4.5 to 5.5
// oxygen neighbors within 0.35 nm (the first hydration shell). The same number of oxygens placed
// uniformly at random has about 6 (the ideal-gas density times the sphere volume), so the check
// tells structure from noise. Both are also compared pair by pair with the brute-force oracle.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check_periodic.hpp"

namespace {

/// Oxygen positions (nm) and the box edges of a .gro file.
struct Water {
  std::vector<double> oxygens;
  std::array<double, 3> edges{};
};

/// Reads the fixed-column .gro format: a title line, the atom count, one line per atom (atom
/// name in columns 11-15, x, y, z in columns 21-44, 8 characters each), the box edges last.
Water read_gro(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path
                  << " (the SPC water box of the Debian package gromacs-data): run "
                     "scripts/setup.sh to install it";
    return {};
  }
  std::string line;
  std::getline(in, line);  // title
  std::getline(in, line);
  const int atoms = std::stoi(line);
  Water water;
  for (int a = 0; a < atoms && std::getline(in, line); ++a) {
    if (line.size() < 44) {
      ADD_FAILURE() << path << ": atom line " << a << " is too short";
      return {};
    }
    std::istringstream name(line.substr(10, 5));
    std::string atom;
    name >> atom;
    if (atom != "OW") continue;
    for (int k = 0; k < 3; ++k) water.oxygens.push_back(std::stod(line.substr(20 + 8 * k, 8)));
  }
  std::getline(in, line);
  std::istringstream box(line);
  for (double& edge : water.edges) box >> edge;
  return water;
}

/// Mean number of neighbors per point within r in the periodic box [0, edges), after checking
/// the index against the explicit-image oracle.
template <class T>
double mean_coordination(const std::vector<double>& xyz, const std::array<double, 3>& edges,
                         double r) {
  const spatialhash::PeriodicBox<3> box{{0, 0, 0}, edges, {true, true, true}};
  check_periodic<3, T>({}, PeriodicCase<3>{"water", box, xyz, r});
  const std::vector<T> coords(xyz.begin(), xyz.end());
  const spatialhash::Index<3, T> index(std::span<const T>(coords), r, box);
  const std::size_t pairs = index.pairs().pairs.size();
  return 2.0 * static_cast<double>(pairs) / static_cast<double>(index.size());
}

TEST(PeriodicWater, OxygenCoordinationOfSpcWater) {
  const Water water = read_gro(SPATIALHASH_SPC216_GRO);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(water.oxygens.size(), 3u * 216u) << "expected 216 water oxygens";
  const double r = 0.35;  // nm: the first minimum of the O-O radial distribution function
  const double water_double = mean_coordination<double>(water.oxygens, water.edges, r);
  const double water_float = mean_coordination<float>(water.oxygens, water.edges, r);
  std::cout << "[   NOTE   ] SPC water: mean O-O coordination within 0.35 nm " << water_double
            << "\n";
  EXPECT_GE(water_double, 4.5);
  EXPECT_LE(water_double, 5.5);
  EXPECT_NEAR(water_float, water_double, 0.05);

  // Negative control: as many oxygens uniformly at random in the same box.
  std::mt19937_64 g(216);
  std::vector<double> random_xyz;
  for (std::size_t i = 0; i < water.oxygens.size(); ++i) {
    random_xyz.push_back(std::uniform_real_distribution<double>(0.0, water.edges[i % 3])(g));
  }
  const double random = mean_coordination<double>(random_xyz, water.edges, r);
  // Ideal gas: the other n - 1 points' density times the sphere volume (about 6.0).
  const double volume = water.edges[0] * water.edges[1] * water.edges[2];
  const double ideal = (216.0 - 1.0) / volume * 4.0 / 3.0 * std::numbers::pi * r * r * r;
  std::cout << "[   NOTE   ] uniform random control: " << random << " (ideal gas " << ideal
            << ")\n";
  EXPECT_NEAR(random, ideal, 0.5);
  EXPECT_GT(random - water_double, 0.5) << "the control does not tell water from noise";
}

}  // namespace
