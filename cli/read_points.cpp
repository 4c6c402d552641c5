// Format dispatch for the point readers (see read_points.hpp).
#include "read_points.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "block_reader.hpp"
#include "errors.hpp"
#include "read_npy.hpp"
#include "read_ply.hpp"
#include "read_text.hpp"

namespace spatialhash::cli {

namespace {

std::string extension_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

/// The format named by the extension, or automatic when it names none.
InputFormat format_from_extension(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == "csv") return InputFormat::text;  // delimiter detected: comma, else tab, else blanks
  if (ext == "tsv" || ext == "tab") return InputFormat::tsv;
  if (ext == "xyz") return InputFormat::xyz;
  if (ext == "ply") return InputFormat::ply;
  if (ext == "npy") return InputFormat::npy;
  return InputFormat::automatic;
}

/// Recognizes a format from the first bytes; text when nothing matches.
InputFormat sniff(BlockReader& reader) {
  reader.request(8);
  const std::string_view head = reader.available();
  if (head.size() >= 6 && head.substr(0, 6) == "\x93NUMPY") return InputFormat::npy;
  if (head.size() >= 4 && (head.substr(0, 4) == "ply\n" || head.substr(0, 4) == "ply\r")) {
    return InputFormat::ply;
  }
  if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b') {
    throw InputError("'" + reader.name() +
                     "' is gzip-compressed; decompress it first, or pipe it: zcat FILE | "
                     "spatialhash COMMAND - ...");
  }
  if (head.size() >= 4 && head.substr(0, 4) == "PK\x03\x04") {
    throw InputError("'" + reader.name() +
                     "' is a zip archive (.npz?); save the points array alone with numpy.save "
                     "to a .npy file");
  }
  return InputFormat::text;
}

}  // namespace

InputFormat parse_input_format(const std::string& name) {
  if (name == "auto") return InputFormat::automatic;
  if (name == "csv") return InputFormat::csv;
  if (name == "tsv") return InputFormat::tsv;
  if (name == "txt" || name == "text") return InputFormat::text;
  if (name == "xyz") return InputFormat::xyz;
  if (name == "ply") return InputFormat::ply;
  if (name == "npy") return InputFormat::npy;
  throw UsageError("--format: unknown format '" + name +
                   "' (valid: auto, csv, tsv, txt, xyz, ply, npy)");
}

PointSet read_points(const InputSpec& spec, Progress& progress) {
  BlockReader reader(spec.path, progress);
  progress.start("reading " + reader.name(), reader.size(), ProgressUnit::bytes);
  InputFormat format = spec.format;
  if (format == InputFormat::automatic && spec.path != "-") {
    format = format_from_extension(spec.path);
  }
  if (format == InputFormat::automatic) format = sniff(reader);
  PointSet points;
  switch (format) {
    case InputFormat::csv:
      points = read_text(reader, spec, ',');
      break;
    case InputFormat::tsv:
      points = read_text(reader, spec, '\t');
      break;
    case InputFormat::automatic:
    case InputFormat::text:
      points = read_text(reader, spec, 0);
      break;
    case InputFormat::xyz:
      points = read_xyz(reader, spec);
      break;
    case InputFormat::ply:
      points = read_ply(reader, spec);
      break;
    case InputFormat::npy:
      points = read_npy(reader, spec);
      break;
  }
  progress.finish();
  if (points.size() >= 0xFFFFFFFFu - 1) {
    throw InputError("'" + reader.name() + "' holds " + std::to_string(points.size()) +
                     " points, more than spatialhash can index (2^32 - 2)");
  }
  return points;
}

}  // namespace spatialhash::cli
