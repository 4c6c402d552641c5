// Test harness for the spatialhash command-line tool: runs the built binary as a child process
// (capturing output, exit status and peak memory), writes input files in every supported format,
// and reads the tool's outputs back with code independent of the tool's own.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SPATIALHASH_CLI_BINARY
#error "SPATIALHASH_CLI_BINARY must name the built spatialhash executable"
#endif

namespace clitest {

namespace fs = std::filesystem;

inline const char* binary() {
  return SPATIALHASH_CLI_BINARY;
}

/// What a run of the tool produced.
struct Result {
  int exit_code = -1;   ///< exit status, or 128 + signal
  std::string out;      ///< standard output
  std::string err;      ///< standard error
  long max_rss_kb = 0;  ///< peak resident set size of the child (getrusage via wait4)
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// A fresh directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "spatialhash-cli-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }
  /// Names of the entries of the directory (to check no stray temporary files remain).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    return names;
  }

 private:
  fs::path path_;
};

/// Runs the tool with `args`. `stdin_file` feeds standard input (default /dev/null);
/// `file_size_limit` > 0 sets RLIMIT_FSIZE in the child (writes beyond it fail with EFBIG);
/// `timeout_seconds` > 0 kills a child still running after that long with SIGALRM (exit_code
/// 128 + SIGALRM: a hang fails the test instead of stalling it).
inline Result run(const std::vector<std::string>& args, const std::string& stdin_file = "",
                  long file_size_limit = 0, unsigned timeout_seconds = 0) {
  TempDir capture;
  const std::string out_path = capture.file("stdout"), err_path = capture.file("stderr");
  std::vector<std::string> argv_storage = {binary()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const char* in = stdin_file.empty() ? "/dev/null" : stdin_file.c_str();
    if (!std::freopen(in, "rb", stdin) || !std::freopen(out_path.c_str(), "wb", stdout) ||
        !std::freopen(err_path.c_str(), "wb", stderr)) {
      ::_exit(126);
    }
    if (file_size_limit > 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // get EFBIG from write() instead of being killed
      rlimit limit{static_cast<rlim_t>(file_size_limit), static_cast<rlim_t>(file_size_limit)};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (timeout_seconds > 0) ::alarm(timeout_seconds);  // a pending alarm survives execv
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  r.max_rss_kb = usage.ru_maxrss;
  return r;
}

/// Shortest decimal text that reads back as exactly `v` (so text files hold the exact values).
template <class T>
std::string text(T v) {
  char buffer[64];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

/// Deterministic points in [0, box)^Dim with a few coincident points and a pair at distance
/// exactly `exact_r` (both borderline cases of the neighbor rule).
inline std::vector<double> make_points(int dim, std::size_t n, double box, double exact_r,
                                       std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, box);
  std::vector<double> xyz;
  for (std::size_t i = 0; i < n * static_cast<std::size_t>(dim); ++i) xyz.push_back(u(g));
  if (n >= 6) {
    for (int k = 0; k < dim; ++k) xyz[1 * dim + k] = xyz[0 * dim + k];  // duplicate
    for (int k = 0; k < dim; ++k) xyz[3 * dim + k] = xyz[2 * dim + k];
    for (int k = 0; k < dim; ++k) xyz[4 * dim + k] = 0.25 * (k + 1);
    for (int k = 0; k < dim; ++k) xyz[5 * dim + k] = xyz[4 * dim + k];
    xyz[5 * dim] += exact_r;  // exactly exact_r apart along x (0.25 + r exact for dyadic r)
  }
  return xyz;
}

/// CSV text of interleaved points. `header` empty: no header row.
inline std::string delimited(const std::vector<double>& xyz, int dim, char sep,
                             const std::vector<std::string>& header) {
  std::string s;
  for (std::size_t k = 0; k < header.size(); ++k) s += (k ? std::string(1, sep) : "") + header[k];
  if (!header.empty()) s += "\n";
  for (std::size_t i = 0; i < xyz.size() / dim; ++i) {
    for (int k = 0; k < dim; ++k) s += (k ? std::string(1, sep) : "") + text(xyz[i * dim + k]);
    s += "\n";
  }
  return s;
}

inline void append_le(std::string& out, const void* value, std::size_t size, bool big) {
  const auto* p = static_cast<const char*>(value);
  for (std::size_t i = 0; i < size; ++i) out += p[big ? size - 1 - i : i];
}

/// A .npy file written by hand: descr "<f8", "<f4", ">f8", ...; (n, cols) shape; C or Fortran.
inline std::string npy_bytes(const std::vector<double>& values, std::size_t rows, std::size_t cols,
                             const std::string& descr, bool fortran, int version = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (" + std::to_string(rows) +
                     (cols ? ", " + std::to_string(cols) : ",") + "), }";
  const std::size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const std::uint32_t len = static_cast<std::uint32_t>(dict.size());
  append_le(out, &len, version == 1 ? 2 : 4, false);
  out += dict;
  const bool big = descr[0] == '>';
  const std::size_t c = cols ? cols : 1;
  for (std::size_t a = 0; a < (fortran ? c : rows); ++a) {
    for (std::size_t b = 0; b < (fortran ? rows : c); ++b) {
      const double v = fortran ? values[b * c + a] : values[a * c + b];
      if (descr.substr(1) == "f4") {
        const float f = static_cast<float>(v);
        append_le(out, &f, 4, big);
      } else if (descr.substr(1) == "f8") {
        append_le(out, &v, 8, big);
      } else if (descr.substr(1) == "i8") {
        const auto i = static_cast<std::int64_t>(v);
        append_le(out, &i, 8, big);
      } else {
        throw std::runtime_error("npy_bytes: unsupported descr " + descr);
      }
    }
  }
  return out;
}

/// PLY encodings.
enum class Ply { ascii, little, big };

/// A PLY file: a "face" element (with a list property) before the vertices, vertex properties
/// x, y[, z] of the given type plus an extra uchar "red" and a float "nx" in between.
inline std::string ply_bytes(const std::vector<double>& xyz, int dim, Ply encoding, bool single) {
  const std::size_t n = xyz.size() / dim;
  const char* type = single ? "float" : "double";
  std::string s = "ply\nformat ";
  s += encoding == Ply::ascii    ? "ascii"
       : encoding == Ply::little ? "binary_little_endian"
                                 : "binary_big_endian";
  s += " 1.0\ncomment written by the spatialhash CLI tests\nelement face 2\n";
  s += "property list uchar int vertex_indices\n";
  s += "element vertex " + std::to_string(n) + "\n";
  s += std::string("property ") + type + " x\nproperty uchar red\nproperty float nx\n";
  s += std::string("property ") + type + " y\n";
  if (dim == 3) s += std::string("property ") + type + " z\n";
  s += "end_header\n";
  const bool big = encoding == Ply::big;
  const auto put = [&](double v) {
    if (encoding == Ply::ascii) {
      s += (single ? text(static_cast<float>(v)) : text(v)) + " ";
    } else if (single) {
      const float f = static_cast<float>(v);
      append_le(s, &f, 4, big);
    } else {
      append_le(s, &v, 8, big);
    }
  };
  // Faces: "3 0 1 2" and "4 0 1 2 3".
  for (int face = 0; face < 2; ++face) {
    const unsigned char count = face == 0 ? 3 : 4;
    if (encoding == Ply::ascii) {
      s += std::to_string(count);
      for (int v = 0; v < count; ++v) s += " " + std::to_string(v);
      s += "\n";
    } else {
      s += static_cast<char>(count);
      for (std::int32_t v = 0; v < count; ++v) append_le(s, &v, 4, big);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    put(xyz[i * dim]);
    if (encoding == Ply::ascii) {
      s += "200 0.5 ";
    } else {
      s += static_cast<char>(200);
      const float nx = 0.5f;
      append_le(s, &nx, 4, big);
    }
    for (int k = 1; k < dim; ++k) put(xyz[i * dim + k]);
    if (encoding == Ply::ascii) s += "\n";
  }
  return s;
}

/// A parsed .npy array (independent of the tool's reader).
struct NpyArray {
  std::string descr;
  bool fortran = false;
  std::vector<std::uint64_t> shape;
  std::string data;

  std::size_t count() const {
    std::size_t c = 1;
    for (auto d : shape) c *= d;
    return c;
  }
  /// Values widened to int64 or double (little-endian int32/int64/float64 only).
  template <class V>
  std::vector<V> values() const {
    std::vector<V> out(count());
    const std::size_t width = std::stoul(descr.substr(2));
    if (data.size() != out.size() * width) throw std::runtime_error("npy: wrong data size");
    for (std::size_t i = 0; i < out.size(); ++i) {
      const char* p = data.data() + i * width;
      if (descr == "<i4") {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        out[i] = static_cast<V>(v);
      } else if (descr == "<i8") {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<V>(v);
      } else if (descr == "<f8") {
        double v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<V>(v);
      } else if (descr == "<f4") {
        float v;
        std::memcpy(&v, p, 4);
        out[i] = static_cast<V>(v);
      } else {
        throw std::runtime_error("npy: unexpected descr " + descr);
      }
    }
    return out;
  }
};

inline NpyArray parse_npy(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw std::runtime_error("npy: bad magic");
  }
  const std::size_t len = static_cast<unsigned char>(bytes[8]) |
                          (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  if ((10 + len) % 64 != 0) throw std::runtime_error("npy: header not aligned to 64 bytes");
  const std::string dict = bytes.substr(10, len);
  if (dict.back() != '\n') throw std::runtime_error("npy: header does not end in a newline");
  NpyArray a;
  const auto value = [&](const std::string& key) {
    const std::size_t at = dict.find("'" + key + "': ");
    if (at == std::string::npos) throw std::runtime_error("npy: no " + key);
    return at + key.size() + 4;
  };
  std::size_t at = value("descr") + 1;
  a.descr = dict.substr(at, dict.find('\'', at) - at);
  a.fortran = dict.compare(value("fortran_order"), 4, "True") == 0;
  at = value("shape");
  const std::string shape = dict.substr(at + 1, dict.find(')', at) - at - 1);
  std::stringstream ss(shape);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.find_first_not_of(' ') != std::string::npos) a.shape.push_back(std::stoull(part));
  }
  a.data = bytes.substr(10 + len);
  return a;
}

/// CRC-32, bit by bit: deliberately not the tool's table-driven code.
inline std::uint32_t crc32_bitwise(const std::string& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

inline std::uint64_t le(const std::string& s, std::size_t at, int size) {
  std::uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s.at(at + i));
  return v;
}

/// The entries of a zip archive of stored entries, found through the central directory, each
/// checked against its CRC-32 and its local header. Throws on any inconsistency.
inline std::map<std::string, std::string> read_zip(const std::string& zip) {
  const std::size_t end = zip.rfind(std::string("PK\x05\x06", 4));
  if (end == std::string::npos) throw std::runtime_error("zip: no end of central directory");
  const std::uint64_t entries = le(zip, end + 10, 2);
  std::uint64_t at = le(zip, end + 16, 4);
  std::map<std::string, std::string> files;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (le(zip, at, 4) != 0x02014b50) throw std::runtime_error("zip: bad central header");
    if (le(zip, at + 10, 2) != 0) throw std::runtime_error("zip: entry is compressed");
    const auto crc = static_cast<std::uint32_t>(le(zip, at + 16, 4));
    const std::uint64_t size = le(zip, at + 24, 4);
    const std::uint64_t name_len = le(zip, at + 28, 2), extra_len = le(zip, at + 30, 2),
                        comment_len = le(zip, at + 32, 2);
    const std::uint64_t local = le(zip, at + 42, 4);
    const std::string name = zip.substr(at + 46, name_len);
    if (le(zip, local, 4) != 0x04034b50) throw std::runtime_error("zip: bad local header");
    if (le(zip, local + 14, 4) != crc) throw std::runtime_error("zip: local CRC differs");
    const std::uint64_t local_name = le(zip, local + 26, 2), local_extra = le(zip, local + 28, 2);
    if (zip.substr(local + 30, local_name) != name) throw std::runtime_error("zip: name differs");
    const std::string data = zip.substr(local + 30 + local_name + local_extra, size);
    if (crc32_bitwise(data) != crc) throw std::runtime_error("zip: CRC mismatch in " + name);
    files[name] = data;
    at += 46 + name_len + extra_len + comment_len;
  }
  return files;
}

/// Rows of comma- (or tab-) separated text, header included.
inline std::vector<std::vector<std::string>> parse_rows(const std::string& text, char sep = ',') {
  std::vector<std::vector<std::string>> rows;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      const std::size_t end = line.find(sep, start);
      fields.push_back(line.substr(start, end == std::string::npos ? end : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    rows.push_back(fields);
  }
  return rows;
}

/// Space-separated numbers of one CSV field.
template <class V>
std::vector<V> numbers(const std::string& field) {
  std::vector<V> out;
  std::stringstream s(field);
  std::string token;
  while (s >> token) {
    V v{};
    const auto r = std::from_chars(token.data(), token.data() + token.size(), v);
    if (r.ec != std::errc() || r.ptr != token.data() + token.size()) {
      throw std::runtime_error("not a number: " + token);
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace clitest
