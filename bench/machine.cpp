// What machine a run happened on: CPU model and flags from /proc/cpuinfo, memory from
// /proc/meminfo, kernel from uname, the compiler, and the git commit of the sources.
#include <sys/utsname.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include "report.hpp"

namespace bench {

namespace {

/// The value after "key<spaces>:" on the first matching line of a /proc file.
std::string proc_field(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

/// First line printed by a read-only command, or "" (used for git only).
std::string first_line_of(const std::string& command) {
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buffer[256] = {};
  std::string line = std::fgets(buffer, sizeof buffer, pipe) ? buffer : "";
  pclose(pipe);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace

extern "C" char** environ;

double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = 0.0;
  in >> load;
  return in ? load : 0.0;
}

RunInfo describe_machine(const std::string& source_dir) {
  RunInfo info;
  info.load_start = load_average();
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "OMP_", 4) == 0 || std::strncmp(*e, "GOMP_", 5) == 0) {
      info.omp_env.append(info.omp_env.empty() ? "" : " ").append(*e);
    }
  }
  info.cpu = proc_field("/proc/cpuinfo", "model name");
  if (info.cpu.empty()) info.cpu = "unknown CPU";
  // Appending, not operator+: GCC 12 -O3 reports a false -Wrestrict on the latter.
  std::string flags = " ";
  flags.append(proc_field("/proc/cpuinfo", "flags")).append(" ");
  info.avx512 = flags.find(" avx512f ") != std::string::npos;
  info.cores = static_cast<int>(std::thread::hardware_concurrency());
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");  // "24576000 kB"
  info.memory_gib = mem.empty() ? 0.0 : std::stod(mem) / (1024.0 * 1024.0);
  utsname u{};
  if (uname(&u) == 0) info.kernel.append(u.sysname).append(" ").append(u.release);
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "GCC " __VERSION__;
#endif
#ifdef SPATIALHASH_BENCH_FLAGS
  info.flags = SPATIALHASH_BENCH_FLAGS;
#endif
  std::string git = "git -C '";
  git.append(source_dir).append("' ");
  info.git = first_line_of(std::string(git).append("rev-parse --short HEAD 2>/dev/null"));
  if (info.git.empty()) {
    info.git = "unknown";
  } else if (!first_line_of(
                  std::string(git).append("status --porcelain --untracked-files=no 2>/dev/null"))
                  .empty()) {
    info.git += "+modified";
  }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  info.date = date;
  return info;
}

}  // namespace bench
