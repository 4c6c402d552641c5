// Engine names for options, command lines and Python.
#include <array>
#include <string>
#include <utility>

#include "spatialhash/types.hpp"

namespace spatialhash {

namespace {
constexpr std::array<std::pair<Engine, std::string_view>, 8> kNames{{
    {Engine::automatic, "automatic"},
    {Engine::cell_list, "cell_list"},
    {Engine::dense_grid, "dense_grid"},
    {Engine::hashed_grid, "hashed_grid"},
    {Engine::cell_hash, "cell_hash"},
    {Engine::sorted_index, "sorted_index"},
    {Engine::multimap, "multimap"},
    {Engine::brute_force, "brute_force"},
}};
}  // namespace

std::string_view engine_name(Engine engine) {
  for (const auto& [value, name] : kNames) {
    if (value == engine) return name;
  }
  return "unknown";
}

Engine parse_engine(std::string_view name) {
  std::string valid;
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(known);
  }
  throw InvalidArgument("spatialhash: unknown engine '" + std::string(name) + "' (valid: " + valid +
                        ")");
}

std::vector<Engine> all_engines() {
  std::vector<Engine> engines;
  for (const auto& entry : kNames) {
    if (entry.first != Engine::automatic) engines.push_back(entry.first);
  }
  return engines;
}

}  // namespace spatialhash
