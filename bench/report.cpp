// Printed tables: one per (workload, n, order, operation), and a time-vs-n summary at the end.
#include "report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace bench {

namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

/// Milliseconds with about four significant digits.
std::string format_ms(double ms) {
  if (ms >= 1000.0) return fixed(ms, 0);
  if (ms >= 100.0) return fixed(ms, 1);
  if (ms >= 10.0) return fixed(ms, 2);
  return fixed(ms, 3);
}

std::string format_ratio(double ratio) {
  if (ratio <= 0.0) return "-";
  return fixed(ratio, ratio >= 100.0 ? 0 : (ratio >= 10.0 ? 1 : 2)) + "x";
}

/// The kernel's share of CPU time as a whole percentage, "-" when no CPU time was measured.
std::string format_kernel_share(const CpuTime& cpu) {
  const double total = cpu.user_ms + cpu.kernel_ms;
  return total <= 0.0 ? "-" : fixed(100.0 * cpu.kernel_ms / total, 0) + "%";
}

/// Bytes per point with one decimal, "-" when not measured (negative).
std::string format_bytes_per_point(double bytes) {
  return bytes < 0.0 ? "-" : fixed(bytes, 1);
}

/// Items per second of a row, in millions: points for build, results otherwise.
double mega_per_second(const Row& row) {
  if (row.median_ms <= 0.0) return 0.0;
  const double items =
      row.op == Op::build ? static_cast<double>(row.n) : static_cast<double>(row.total);
  return items / (row.median_ms * 1e-3) / 1e6;
}

}  // namespace

std::string format_count(std::size_t n) {
  if (n >= 1000000 && n % 100000 == 0) {
    return n % 1000000 == 0 ? std::to_string(n / 1000000) + "M" : fixed(n / 1e6, 1) + "M";
  }
  if (n >= 1000 && n % 100 == 0) {
    return n % 1000 == 0 ? std::to_string(n / 1000) + "k" : fixed(n / 1e3, 1) + "k";
  }
  return std::to_string(n);
}

std::size_t parse_count(const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad size '" + text + "' (examples: 10k, 1M, 250000)");
  }
  const std::string suffix = text.substr(used);
  if (suffix == "k" || suffix == "K") {
    value *= 1e3;
  } else if (suffix == "m" || suffix == "M") {
    value *= 1e6;
  } else if (!suffix.empty()) {
    throw std::invalid_argument("bad size '" + text + "' (examples: 10k, 1M, 250000)");
  }
  if (!(value >= 1.0) || value > 4.0e9) {
    throw std::invalid_argument("size '" + text + "' out of range [1, 4e9]");
  }
  return static_cast<std::size_t>(std::llround(value));
}

namespace {

/// The integer argument `text`, within [low, high] (named `what` in the error).
int parse_bounded(const std::string& text, const char* what, int low, int high) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(std::string(what) + " must be an integer, got '" + text + "'");
  }
  if (value < low || value > high) {
    throw std::invalid_argument(std::string(what) + " must be in " + std::to_string(low) +
                                " ..= " + std::to_string(high) + ", got " + text);
  }
  return static_cast<int>(value);
}

}  // namespace

SideBySideArgs parse_side_by_side_args(int argc, char** argv) {
  SideBySideArgs args;
  if (argc > 1) args.workload = argv[1];
  if (argc > 2) {
    args.points = parse_count(argv[2]);
    if (args.points < 2 || args.points > (std::size_t{1} << 30)) {
      throw std::invalid_argument("points must be in 2 ..= 2^30, got " + std::string(argv[2]));
    }
  }
  if (argc > 3) args.threads = parse_bounded(argv[3], "threads", 0, 4096);
  if (argc > 4) args.repeats = parse_bounded(argv[4], "repeats", 1, 10000);
  if (argc > 5) throw std::invalid_argument("at most four arguments");
  return args;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

void fill_ratios(std::span<Row> group) {
  const auto time_of = [&group](const std::string& engine, int threads) {
    for (const Row& r : group) {
      if (r.engine == engine && r.threads == threads && r.status == "ok") return r.median_ms;
    }
    return 0.0;
  };
  for (Row& row : group) {
    if (row.status != "ok" || row.median_ms <= 0.0) continue;
    const double peer = time_of("nanoflann", row.threads);
    const double textbook = time_of("hashed_grid", row.threads);
    row.vs_nanoflann = peer > 0.0 ? peer / row.median_ms : 0.0;
    row.vs_hashed_grid = textbook > 0.0 ? textbook / row.median_ms : 0.0;
    const double alone = row.threads > 1 ? time_of(row.engine, 1) : 0.0;
    row.vs_one_thread = alone > 0.0 ? alone / row.median_ms : 0.0;
  }
}

void print_cpu_speeds(std::FILE* out, const char* label, const CpuSpeeds& speeds) {
  if (speeds.relative.empty()) {
    std::fprintf(out, "%s speed of each CPU not measured (threads could not be pinned)\n", label);
    return;
  }
  std::fprintf(out,
               "%s speed of each CPU relative to the fastest (a pinned integer loop, all at "
               "once): %s;\n         %zu threads can gain at most %.2fx over one%s\n",
               label, speeds.describe().c_str(), speeds.relative.size(), speeds.bound(),
               speeds.unequal() ? "  WARNING: unequal CPUs (a shared host): speed-ups over "
                                  "threads fall short, 1-thread figures depend on the CPU"
                                : "");
}

void print_run_header(std::FILE* out, const RunInfo& info) {
  std::fprintf(out, "spatialhash benchmark  %s  git %s\n", info.date.c_str(), info.git.c_str());
  std::fprintf(out, "machine: %s, %d cores, %.1f GiB, AVX-512 %s, %s\n", info.cpu.c_str(),
               info.cores, info.memory_gib, info.avx512 ? "yes" : "no", info.kernel.c_str());
  std::fprintf(out, "build:   %s %s\n", info.compiler.c_str(), info.flags.c_str());
  std::fprintf(out, "OpenMP:  %s\n",
               info.omp_env.empty() ? "no OMP_*/GOMP_* variables set" : info.omp_env.c_str());
  std::fprintf(out, "load:    %.2f (1-minute load average before the run)%s\n", info.load_start,
               info.load_start > 0.5 * info.cores ? "  WARNING: busy machine, noisy figures" : "");
  print_cpu_speeds(out, "cpus:   ", info.speeds_start);
  std::fprintf(out,
               "method:  %s coordinates; median of up to %d repetitions (stop after %.0f ms); "
               "%s; %zu ball queries; seed %llu\n",
               info.coordinate_type.c_str(), info.reps, info.rep_budget_ms,
               info.isolated ? "each contender in a forked child (own peak RSS, time limit)"
                             : "in-process (RSS = process peak so far)",
               info.queries, static_cast<unsigned long long>(info.seed));
  std::fprintf(out, "command: %s\n", info.command.c_str());
  std::fprintf(out,
               "columns: ms = median wall time; M/s = million results (points for build) per "
               "second;\n         x nanoflann / x hashed_grid = their time / this time, same "
               "threads (>1: faster);\n         x 1 thr = the same engine's 1-thread time / this "
               "time;\n         RSS = peak resident MiB of the process that "
               "ran it (input included);\n         min cpu = the slowest CPU's speed over the "
               "fastest's just before and after the row (the lower; below 0.85 a shared host "
               "slowed\n         a CPU: multi-thread figures fall short, 1-thread ones depend on "
               "the CPU)\n");
}

void print_load_note(std::FILE* out, const RunInfo& info) {
  const double worst = std::max(info.load_start, info.load_end);
  std::fprintf(out, "\nload average: %.2f before, %.2f after the run (%d cores)%s\n",
               info.load_start, info.load_end, info.cores,
               worst > 0.5 * info.cores
                   ? ": other work shared the machine, treat the figures (above all the "
                     "multi-thread ones) as noisy"
                   : "");
  print_cpu_speeds(out, "cpus after the run:", info.speeds_end);
}

void print_workload_header(std::FILE* out, const WorkloadInfo& w) {
  std::fprintf(out, "\n==== %s %s (%dD, r = %.6g): %s ====\n", w.key.c_str(), w.name.c_str(), w.dim,
               w.radius, w.description.c_str());
}

void print_group(std::FILE* out, const WorkloadInfo& w, std::span<const Row> group,
                 const std::string& note) {
  if (group.empty()) return;
  const Row& first = group.front();
  std::fprintf(out, "\n%s n=%s %s %s%s%s\n", w.key.c_str(), format_count(first.n).c_str(),
               first.order.c_str(), std::string(op_name(first.op)).c_str(),
               note.empty() ? "" : "  -- ", note.c_str());
  // A build's table has the index's own memory (B/pt) where the others have their check.
  const bool build = first.op == Op::build;
  std::fprintf(out, "  %-13s %3s %10s %9s %12s %14s %8s %8s %8s %7s  %s\n", "engine", "thr", "ms",
               build ? "Mpts/s" : "M/s", "x nanoflann", "x hashed_grid", "x 1 thr", "RSS MiB",
               "kernel", "min cpu", build ? "index B/pt" : "check");
  for (const Row& r : group) {
    if (r.status != "ok") {
      std::fprintf(out, "  %-13s %3d %10s  (%s: %s)\n", r.engine.c_str(), r.threads, "n/a",
                   r.status.c_str(), r.reason.c_str());
      continue;
    }
    std::fprintf(out, "  %-13s %3d %10s %9.2f %12s %14s %8s %8.0f %8s %7s  %s\n", r.engine.c_str(),
                 r.threads, format_ms(r.median_ms).c_str(), mega_per_second(r),
                 format_ratio(r.vs_nanoflann).c_str(), format_ratio(r.vs_hashed_grid).c_str(),
                 format_ratio(r.vs_one_thread).c_str(), r.peak_rss_mib,
                 format_kernel_share(r.cpu).c_str(),
                 r.slowest_cpu > 0.0 ? fixed(r.slowest_cpu, 2).c_str() : "-",
                 build ? format_bytes_per_point(r.index_bytes_per_point).c_str() : r.check.c_str());
  }
  std::fflush(out);
}

void print_summary(std::FILE* out, const std::vector<WorkloadInfo>& workloads,
                   std::span<const Row> rows, Op op, const std::string& order) {
  for (const WorkloadInfo& w : workloads) {
    std::vector<std::size_t> sizes;
    std::vector<std::pair<std::string, int>> lines;  // engine, threads in first-seen order
    std::map<std::tuple<std::string, int, std::size_t>, const Row*> cell;
    for (const Row& r : rows) {
      if (r.workload != w.key || r.op != op || r.order != order) continue;
      if (std::find(sizes.begin(), sizes.end(), r.n) == sizes.end()) sizes.push_back(r.n);
      const std::pair<std::string, int> line{r.engine, r.threads};
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
      cell[{r.engine, r.threads, r.n}] = &r;
    }
    if (sizes.empty()) continue;
    std::fprintf(out, "\n%s %s, %s, %s: median ms (ns per point)\n", w.key.c_str(), w.name.c_str(),
                 std::string(op_name(op)).c_str(), order.c_str());
    std::fprintf(out, "  %-13s %3s", "engine", "thr");
    for (const std::size_t n : sizes) std::fprintf(out, " %20s", format_count(n).c_str());
    std::fprintf(out, "\n");
    for (const auto& [engine, threads] : lines) {
      std::fprintf(out, "  %-13s %3d", engine.c_str(), threads);
      for (const std::size_t n : sizes) {
        const auto it = cell.find({engine, threads, n});
        if (it == cell.end() || it->second->status != "ok") {
          std::fprintf(out, " %20s", it == cell.end() ? "" : it->second->status.c_str());
          continue;
        }
        const double ms = it->second->median_ms;
        const std::string text =
            format_ms(ms) + " (" + fixed(ms * 1e6 / static_cast<double>(n), 1) + ")";
        std::fprintf(out, " %20s", text.c_str());
      }
      std::fprintf(out, "\n");
    }
  }
  std::fflush(out);
}

}  // namespace bench
