// Result rows, the printed tables and the JSON file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "cpu_speeds.hpp"
#include "measure.hpp"

namespace bench {

/// One contender's result for one (workload, n, order, operation, threads).
struct Row {
  std::string workload;  ///< workload key
  std::size_t n = 0;
  std::string order;
  Op op = Op::build;
  int threads = 1;
  std::string engine;  ///< "cell_list", ..., "nanoflann"
  bool ours = true;    ///< one of spatialhash's engines (must agree exactly)
  std::string status;  ///< ok, error, timeout, crashed, skipped
  std::string reason;  ///< why not ok
  std::vector<double> ms;
  double median_ms = 0.0;
  std::uint64_t total = 0;
  std::size_t items = 0;  ///< points (queries for ball) the totals are over
  double peak_rss_mib = 0.0;
  double own_rss_mib = 0.0;
  /// The process's CPU time over the timed parts of all repetitions (Measurement::cpu): the
  /// kernel's share of it is what fresh memory costs (page faults and zeroing).
  CpuTime cpu;
  /// build only: heap bytes the built index holds per point (Measurement::index_bytes / n);
  /// -1 when not measured.
  double index_bytes_per_point = -1.0;
  /// Agreement with the reference (the first of our engines that ran): "ref", "ok",
  /// "DIFFERS ..." (ours: a failure), "mismatch ..." (nanoflann: float distances), "" (build).
  std::string check;
  std::uint64_t mismatch = 0;  ///< sum over points of |count - reference count|
  bool failure = false;        ///< makes the run exit non-zero
  double vs_nanoflann = 0.0;   ///< nanoflann's time / this time, same threads (0: none)
  double vs_hashed_grid = 0.0;
  double vs_one_thread = 0.0;  ///< the same engine's 1-thread time / this time (0: none)
  /// The slowest CPU's speed over the fastest's (cpu_speeds.hpp), measured just before and just
  /// after the row ran, the lower of the two; 0 when not measured.
  double slowest_cpu = 0.0;
};

/// What a workload is, for headers and JSON.
struct WorkloadInfo {
  std::string key, name, description;
  int dim = 3;
  double radius = 0.0;
};

/// Where and how the run happened.
struct RunInfo {
  std::string cpu, kernel, compiler, flags, git, date, command, coordinate_type;
  /// OMP_* / GOMP_* environment settings (OMP_WAIT_POLICY changes multi-thread figures on a
  /// busy machine a great deal), "" when none.
  std::string omp_env;
  int cores = 0;
  double memory_gib = 0.0;
  bool avx512 = false;
  /// 1-minute load average before and after the run: figures taken while other work ran on the
  /// machine (load near or above the core count) are noisy, multi-thread ones most of all.
  double load_start = 0.0;
  double load_end = 0.0;
  /// Each CPU's speed relative to the fastest, before and after the run (cpu_speeds.hpp): load
  /// averages do not show the host's other tenants on a virtual machine.
  CpuSpeeds speeds_start, speeds_end;
  bool isolated = true;
  int reps = 0;
  double rep_budget_ms = 0.0;
  double timeout_s = 0.0;
  std::size_t queries = 0;
  std::uint64_t seed = 0;
};

/// The 1-minute load average (/proc/loadavg), 0 if unknown.
double load_average();

/// Collects what this machine is (CPU, cores, memory, kernel, compiler, git commit).
RunInfo describe_machine(const std::string& source_dir);

/// "10k", "1M", "4M", "2.5k", or the plain number.
std::string format_count(std::size_t n);
/// Parses "10k", "1M", "4000000"; throws std::invalid_argument.
std::size_t parse_count(const std::string& text);

/// The arguments of the tools that time several things side by side on one workload
/// (output_floor, column_layout): [workload] [points] [threads] [repeats], each optional.
struct SideBySideArgs {
  std::string workload = "W1";
  std::size_t points = 1000000;
  int threads = 0;  ///< 0: all cores
  int repeats = 9;
};
/// Parses them; throws std::invalid_argument naming the one that is not a number or out of range
/// (points 2 ..= 2^30, threads 0 ..= 4096, repeats 1 ..= 10000).
SideBySideArgs parse_side_by_side_args(int argc, char** argv);

/// Median of the repetitions (0 for none).
double median(std::vector<double> values);

/// Fills vs_nanoflann and vs_hashed_grid of every row from the rows of the same thread count,
/// and vs_one_thread from the same engine's 1-thread row.
void fill_ratios(std::span<Row> group);

void print_run_header(std::FILE* out, const RunInfo& info);
/// One line on the CPUs' speeds (cpu_speeds.hpp) after `label`, with the gain over one thread
/// they allow, and a warning when they are unequal.
void print_cpu_speeds(std::FILE* out, const char* label, const CpuSpeeds& speeds);
/// Warns when the machine was busy during the run; the CPUs' speeds after it.
void print_load_note(std::FILE* out, const RunInfo& info);
void print_workload_header(std::FILE* out, const WorkloadInfo& workload);
/// One table: all contenders and thread counts of one (workload, n, order, operation).
void print_group(std::FILE* out, const WorkloadInfo& workload, std::span<const Row> group,
                 const std::string& note);
/// Time against n for one operation and order: rows engine x threads, columns sizes.
void print_summary(std::FILE* out, const std::vector<WorkloadInfo>& workloads,
                   std::span<const Row> rows, Op op, const std::string& order);

/// Writes everything as JSON (schema described in docs/benchmarks.md); throws on I/O failure.
void write_json(const std::string& path, const RunInfo& info,
                const std::vector<WorkloadInfo>& workloads, std::span<const Row> rows);

}  // namespace bench
