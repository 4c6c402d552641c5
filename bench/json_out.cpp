// The JSON result file: run information, workloads, and one object per result row.
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report.hpp"

namespace bench {

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  std::ostringstream s;
  s.precision(10);
  s << value;
  return s.str();
}

std::string ratio(double value) {
  return value > 0.0 ? number(value) : "null";
}

/// {"cpu": [...], "relative": [...]}, or null when not measured.
std::string speeds(const CpuSpeeds& s) {
  if (s.relative.empty()) return "null";
  // Appending, not operator+: GCC 12 -O3 reports a false -Wrestrict on the latter.
  std::string cpus, relative;
  for (std::size_t i = 0; i < s.relative.size(); ++i) {
    cpus.append(i ? ", " : "").append(std::to_string(s.cpu[i]));
    relative.append(i ? ", " : "").append(number(s.relative[i]));
  }
  std::string out = "{\"cpu\": [";
  return out.append(cpus).append("], \"relative\": [").append(relative).append("]}");
}

}  // namespace

void write_json(const std::string& path, const RunInfo& info,
                const std::vector<WorkloadInfo>& workloads, std::span<const Row> rows) {
  std::ostringstream j;
  j << "{\n  \"schema\": 1,\n  \"run\": {"
    << "\"date\": " << quoted(info.date) << ", \"git\": " << quoted(info.git)
    << ", \"command\": " << quoted(info.command) << ",\n    \"cpu\": " << quoted(info.cpu)
    << ", \"cores\": " << info.cores << ", \"memory_gib\": " << number(info.memory_gib)
    << ", \"avx512\": " << (info.avx512 ? "true" : "false")
    << ", \"omp_env\": " << quoted(info.omp_env) << ", \"load_start\": " << number(info.load_start)
    << ", \"load_end\": " << number(info.load_end)
    << ", \"cpu_speeds_start\": " << speeds(info.speeds_start)
    << ", \"cpu_speeds_end\": " << speeds(info.speeds_end)
    << ", \"kernel\": " << quoted(info.kernel) << ",\n    \"compiler\": " << quoted(info.compiler)
    << ", \"flags\": " << quoted(info.flags)
    << ", \"coordinate_type\": " << quoted(info.coordinate_type)
    << ",\n    \"isolated\": " << (info.isolated ? "true" : "false") << ", \"reps\": " << info.reps
    << ", \"rep_budget_ms\": " << number(info.rep_budget_ms)
    << ", \"timeout_s\": " << number(info.timeout_s) << ", \"queries\": " << info.queries
    << ", \"seed\": " << info.seed << "},\n  \"workloads\": [";
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const WorkloadInfo& w = workloads[i];
    j << (i ? ",\n    " : "\n    ") << "{\"key\": " << quoted(w.key)
      << ", \"name\": " << quoted(w.name) << ", \"dim\": " << w.dim
      << ", \"radius\": " << number(w.radius) << ", \"description\": " << quoted(w.description)
      << "}";
  }
  j << "\n  ],\n  \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    j << (i ? ",\n    " : "\n    ") << "{\"workload\": " << quoted(r.workload) << ", \"n\": " << r.n
      << ", \"order\": " << quoted(r.order) << ", \"op\": " << quoted(std::string(op_key(r.op)))
      << ", \"threads\": " << r.threads << ", \"engine\": " << quoted(r.engine)
      << ", \"ours\": " << (r.ours ? "true" : "false") << ", \"status\": " << quoted(r.status)
      << ", \"reason\": " << quoted(r.reason)
      << ", \"median_ms\": " << (r.status == "ok" ? number(r.median_ms) : "null") << ", \"ms\": [";
    for (std::size_t k = 0; k < r.ms.size(); ++k) j << (k ? ", " : "") << number(r.ms[k]);
    j << "], \"total\": " << r.total << ", \"items\": " << r.items
      << ", \"peak_rss_mib\": " << number(r.peak_rss_mib)
      << ", \"own_rss_mib\": " << number(r.own_rss_mib)
      << ", \"cpu_user_ms\": " << number(r.cpu.user_ms)
      << ", \"cpu_kernel_ms\": " << number(r.cpu.kernel_ms) << ", \"index_bytes_per_point\": "
      << (r.index_bytes_per_point >= 0.0 ? number(r.index_bytes_per_point) : "null")
      << ", \"check\": " << quoted(r.check) << ", \"mismatch\": " << r.mismatch
      << ", \"failure\": " << (r.failure ? "true" : "false")
      << ", \"vs_nanoflann\": " << ratio(r.vs_nanoflann)
      << ", \"vs_hashed_grid\": " << ratio(r.vs_hashed_grid)
      << ", \"vs_one_thread\": " << ratio(r.vs_one_thread)
      << ", \"slowest_cpu\": " << ratio(r.slowest_cpu) << "}";
  }
  j << "\n  ]\n}\n";
  std::ofstream file(path);
  file << j.str();
  if (!file) throw std::runtime_error("cannot write JSON to '" + path + "'");
}

}  // namespace bench
