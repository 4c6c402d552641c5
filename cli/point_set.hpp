// PointSet: the points a command works on, as read from a file, and InputSpec: how to read them.
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

namespace spatialhash::cli {

/// Input file formats. `automatic` decides by file extension (text for anything unknown).
enum class InputFormat { automatic, csv, tsv, text, xyz, ply, npy };
/// Coordinate precision. `automatic` keeps what the file stores (float for float32 PLY and .npy,
/// double for text).
enum class Precision { automatic, single, dual };
/// Whether a text file starts with a header row; `automatic` detects it (a non-numeric field).
enum class HeaderMode { automatic, present, absent };

/// How to read the points: everything the command line says about the input.
struct InputSpec {
  std::string path;  ///< "-" is standard input (text, unless --format says otherwise)
  InputFormat format = InputFormat::automatic;
  int dim = 0;  ///< 2 or 3; 0 infers it from the file
  std::vector<std::string>
      columns;  ///< coordinate columns of a text file, by name or 1-based number
  HeaderMode header = HeaderMode::automatic;
  Precision precision = Precision::automatic;
};

/// Points read from a file: coordinates interleaved (x0,y0[,z0],x1,...), all finite.
struct PointSet {
  int dim = 3;
  std::variant<std::vector<double>, std::vector<float>> coords;
  /// What was read, for reports: "points.csv (CSV, columns x,y,z)".
  std::string description;
  /// Things the user should know (for example "only the first frame was read").
  std::vector<std::string> notes;

  std::size_t size() const {
    return std::visit([&](const auto& c) { return c.size() / static_cast<std::size_t>(dim); },
                      coords);
  }
  bool is_single() const { return std::holds_alternative<std::vector<float>>(coords); }
};

}  // namespace spatialhash::cli
