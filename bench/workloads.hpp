// The benchmark workloads: deterministic point sets (from a seed) modelled on what neighbor
// search is used for, each with the search radius that gives its intended neighbor count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

/// Point order handed to the engines: as users usually hand points over (random), or already
/// sorted along a space-filling curve (as a code that reorders its particles would).
enum class Order { shuffled, sorted };

std::string_view order_name(Order order);

/// One generated point set. Coordinates are generated in double; the harness converts them to
/// the benchmarked coordinate type.
struct Workload {
  std::string key;          ///< "W1", "W2", "W3", "W4a", "W4b", "W5", "W6"
  std::string name;         ///< short human name ("SPH block", ...)
  std::string description;  ///< how the points are made, one line
  int dim = 3;
  double radius = 0.0;
  std::vector<double> coords;  ///< interleaved, `dim` values per point

  std::size_t size() const { return coords.size() / static_cast<std::size_t>(dim); }
};

/// All workload keys in report order.
std::vector<std::string> workload_keys();

/// Expands a user selection: "W4" means both 2D workloads (W4a, W4b); "all" means every one.
/// Throws std::invalid_argument naming an unknown key.
std::vector<std::string> expand_workload_keys(const std::vector<std::string>& selection);

/// Generates exactly `n` points of workload `key` from `seed`, in generation order.
Workload make_workload(std::string_view key, std::size_t n, std::uint64_t seed);

/// Reorders the points: a seeded random permutation, or a stable sort by the Morton code of the
/// cell (edge = radius) each point lies in.
void apply_order(Workload& workload, Order order, std::uint64_t seed);

/// `count` query positions drawn uniformly from the bounding box of the workload's points
/// (interleaved, workload.dim values each).
std::vector<double> ball_queries(const Workload& workload, std::size_t count, std::uint64_t seed);

}  // namespace bench
