// Input files of every supported format, written by the tests, and the oracle's view of them: the
// exact coordinates the tool must see after reading (float formats rounded to float).
#pragma once

#include <charconv>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace clitest {

/// The input layouts under test.
enum class Format {
  csv_header,
  csv_plain,
  tsv_header,
  txt_messy,  ///< whitespace, comment and blank lines, CRLF, tabs
  csv_named_columns,
  csv_numbered_columns,
  csv_stdin,
  csv_as_float,
  xyz_molecular,
  xyz_plain,
  ply_ascii_double,
  ply_ascii_float,
  ply_little_float,
  ply_little_double,
  ply_big_float,
  ply_big_double,
  npy_f8,
  npy_f4,
  npy_f8_fortran,
  npy_f4_fortran,
  npy_big_f8,
  npy_version2,
};

inline const std::vector<Format>& all_formats() {
  static const std::vector<Format> formats = {Format::csv_header,
                                              Format::csv_plain,
                                              Format::tsv_header,
                                              Format::txt_messy,
                                              Format::csv_named_columns,
                                              Format::csv_numbered_columns,
                                              Format::csv_stdin,
                                              Format::csv_as_float,
                                              Format::xyz_molecular,
                                              Format::xyz_plain,
                                              Format::ply_ascii_double,
                                              Format::ply_ascii_float,
                                              Format::ply_little_float,
                                              Format::ply_little_double,
                                              Format::ply_big_float,
                                              Format::ply_big_double,
                                              Format::npy_f8,
                                              Format::npy_f4,
                                              Format::npy_f8_fortran,
                                              Format::npy_f4_fortran,
                                              Format::npy_big_f8,
                                              Format::npy_version2};
  return formats;
}

inline std::string format_name(Format f) {
  static const char* names[] = {"csv_header",
                                "csv_plain",
                                "tsv_header",
                                "txt_messy",
                                "csv_named_columns",
                                "csv_numbered_columns",
                                "csv_stdin",
                                "csv_as_float",
                                "xyz_molecular",
                                "xyz_plain",
                                "ply_ascii_double",
                                "ply_ascii_float",
                                "ply_little_float",
                                "ply_little_double",
                                "ply_big_float",
                                "ply_big_double",
                                "npy_f8",
                                "npy_f4",
                                "npy_f8_fortran",
                                "npy_f4_fortran",
                                "npy_big_f8",
                                "npy_version2"};
  return names[static_cast<int>(f)];
}

/// A written input: the tool's arguments for it and the coordinates it must read.
struct Written {
  std::vector<std::string> args;  ///< file argument plus any options it needs
  std::string stdin_file;         ///< for "-" input
  std::vector<double> stored;     ///< exact coordinates as the tool should hold them
};

inline double as_float(double v) {
  return static_cast<double>(static_cast<float>(v));
}

/// The float a correct text parser makes of the shortest text of `v` (rounded once, from text).
inline double parsed_as_float(double v) {
  const std::string t = text(v);
  float f = 0;
  std::from_chars(t.data(), t.data() + t.size(), f);
  return f;
}

inline Written write_input(const TempDir& dir, Format f, const std::vector<double>& xyz, int dim) {
  Written w;
  w.stored = xyz;
  const std::size_t n = xyz.size() / dim;
  const std::vector<std::string> names =
      dim == 3 ? std::vector<std::string>{"x", "y", "z"} : std::vector<std::string>{"x", "y"};
  const auto path = [&](const std::string& name) {
    w.args = {dir.file(name)};
    return dir.file(name);
  };
  switch (f) {
    case Format::csv_header:
      write_file(path("points.csv"), delimited(xyz, dim, ',', names));
      break;
    case Format::csv_plain:
      write_file(path("points.csv"), delimited(xyz, dim, ',', {}));
      break;
    case Format::tsv_header:
      write_file(path("points.tsv"), delimited(xyz, dim, '\t', names));
      break;
    case Format::txt_messy: {
      std::string s = "# exported by a simulation\n\n";
      for (std::size_t i = 0; i < n; ++i) {
        s += i % 2 ? "\t" : "  ";
        for (int k = 0; k < dim; ++k) s += text(xyz[i * dim + k]) + (k % 2 ? " \t " : "   ");
        s += i % 3 ? "\r\n" : "\n";
        if (i % 50 == 7) s += "   \n# a comment in the middle\n";
      }
      write_file(path("points.txt"), s);
      break;
    }
    case Format::csv_named_columns:
    case Format::csv_numbered_columns: {
      // id, px, mass, py[, pz]: coordinates are columns 2, 4, 5 (numbered from 1).
      std::string s = dim == 3 ? "id,px,mass,py,pz\n" : "id,px,mass,py\n";
      for (std::size_t i = 0; i < n; ++i) {
        s += std::to_string(i) + "," + text(xyz[i * dim]) + ",abc," + text(xyz[i * dim + 1]);
        if (dim == 3) s += "," + text(xyz[i * dim + 2]);
        s += "\n";
      }
      write_file(path("table.csv"), s);
      if (f == Format::csv_named_columns) {
        w.args.insert(w.args.end(), {"--columns", dim == 3 ? "px,py,pz" : "px,py"});
      } else {
        w.args.insert(w.args.end(), {"--columns", dim == 3 ? "2,4,5" : "2,4"});
      }
      break;
    }
    case Format::csv_stdin:
      write_file(dir.file("stdin.csv"), delimited(xyz, dim, ',', names));
      w.args = {"-"};
      w.stdin_file = dir.file("stdin.csv");
      break;
    case Format::csv_as_float:
      write_file(path("points.csv"), delimited(xyz, dim, ',', names));
      w.args.insert(w.args.end(), {"--precision", "float"});
      for (double& v : w.stored) v = parsed_as_float(v);
      break;
    case Format::xyz_molecular: {
      std::string s = std::to_string(n) + "\nframe 0, written by the tests\n";
      for (std::size_t i = 0; i < n; ++i) {
        s += (i % 2 ? "C " : "H  ") + text(xyz[i * 3]) + " " + text(xyz[i * 3 + 1]) + "\t" +
             text(xyz[i * 3 + 2]) + "\n";
      }
      write_file(path("atoms.xyz"), s);
      break;
    }
    case Format::xyz_plain:
      write_file(path("cloud.xyz"), delimited(xyz, dim, ' ', {}));
      break;
    case Format::ply_ascii_double:
    case Format::ply_ascii_float:
    case Format::ply_little_float:
    case Format::ply_little_double:
    case Format::ply_big_float:
    case Format::ply_big_double: {
      const bool single = f == Format::ply_ascii_float || f == Format::ply_little_float ||
                          f == Format::ply_big_float;
      const Ply encoding =
          f == Format::ply_ascii_double || f == Format::ply_ascii_float     ? Ply::ascii
          : f == Format::ply_little_float || f == Format::ply_little_double ? Ply::little
                                                                            : Ply::big;
      write_file(path("mesh.ply"), ply_bytes(xyz, dim, encoding, single));
      if (single) {
        for (double& v : w.stored) v = as_float(v);
      }
      break;
    }
    case Format::npy_f8:
    case Format::npy_f4:
    case Format::npy_f8_fortran:
    case Format::npy_f4_fortran:
    case Format::npy_big_f8:
    case Format::npy_version2: {
      const bool single = f == Format::npy_f4 || f == Format::npy_f4_fortran;
      const bool fortran = f == Format::npy_f8_fortran || f == Format::npy_f4_fortran;
      const std::string descr = f == Format::npy_big_f8 ? ">f8" : single ? "<f4" : "<f8";
      write_file(path("points.npy"),
                 npy_bytes(xyz, n, dim, descr, fortran, f == Format::npy_version2 ? 2 : 1));
      if (single) {
        for (double& v : w.stored) v = as_float(v);
      }
      break;
    }
  }
  return w;
}

}  // namespace clitest
