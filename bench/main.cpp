// spatialhash_bench: runs every selected workload x size x point order x operation x thread
// count for every contender, checks that they report the same neighbors, prints a table per
// group and writes JSON. See docs/benchmarks.md for the command and what each column means.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "agreement.hpp"
#include "contenders.hpp"
#include "isolate.hpp"
#include "report.hpp"
#include "spatialhash/types.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

/// Everything the command line sets.
struct Settings {
  std::vector<std::string> workloads{"all"};
  std::vector<std::string> sizes{"10k", "100k", "1M", "4M"};
  std::vector<int> threads;  // empty: 1 and all cores
  std::vector<std::string> engines{"all"};
  std::vector<std::string> ops{"all"};
  std::vector<std::string> orders{"shuffled", "sorted"};
  std::vector<std::string> caps;
  std::string type = "float";
  std::string queries = "1M";
  std::string json;
  int reps = 5;
  double rep_budget_ms = 3000.0;
  double timeout_s = 120.0;
  std::uint64_t seed = 1;
  std::size_t nanoflann_leaf = 10;
  bool smoke = false;
  bool no_fork = false;
  bool no_warm_memory = false;
  bool no_cpu_probe = false;
};

/// One contender and the largest n it is run at.
struct Contender {
  std::string name;
  bool ours = true;
  /// Index options (the thread count is set per run): the contender "half_cells" is cell_list
  /// with Options::cell_subdivision = 2 (cells of edge r/2, a 5^Dim stencil).
  spatialhash::Options options;
  /// Options of its list operations: the contenders "low_memory" and "sorted_lists" are cell_list
  /// with ListOptions::low_memory (counting first) and ListOptions::sorted (rows sorted by index).
  spatialhash::ListOptions list_options;
  std::size_t cap = SIZE_MAX;
};

/// The contender called `name` (cap unset): an engine of ours (spatialhash::parse_engine), one
/// of the cell_list variants below, or nanoflann; throws std::invalid_argument naming the valid
/// choices otherwise.
Contender contender_named(const std::string& name) {
  Contender c;
  c.name = name;
  if (name == "nanoflann") {
    c.ours = false;
  } else if (name == "low_memory") {
    c.options.engine = spatialhash::Engine::cell_list;
    c.list_options.low_memory = true;
  } else if (name == "sorted_lists") {
    c.options.engine = spatialhash::Engine::cell_list;
    c.list_options.sorted = true;
  } else if (name == "half_cells") {
    c.options.engine = spatialhash::Engine::cell_list;
    c.options.cell_subdivision = 2;
  } else {
    try {
      c.options.engine = spatialhash::parse_engine(name);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) +
                                  ", or nanoflann, low_memory, sorted_lists or half_cells");
    }
  }
  return c;
}

std::vector<Contender> select_contenders(const Settings& s) {
  std::vector<std::string> names;
  for (const std::string& e : s.engines) {
    if (e == "all") {
      for (const auto engine : spatialhash::all_engines()) {
        names.emplace_back(spatialhash::engine_name(engine));
      }
      names.emplace_back("low_memory");
      names.emplace_back("sorted_lists");
      names.emplace_back("half_cells");
      names.emplace_back("nanoflann");
    } else {
      names.push_back(e);
    }
  }
  // Default caps: brute force is quadratic; the textbook multimap and sorted-index schemes
  // take long enough above 100k (multimap, on shuffled points) and 1M points to dominate a full
  // run.
  std::map<std::string, std::size_t> caps{
      {"brute_force", 20000}, {"multimap", 100000}, {"sorted_index", 1000000}};
  for (const std::string& c : s.caps) {
    const auto eq = c.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--cap wants ENGINE=SIZE, got " + c);
    const std::string value = c.substr(eq + 1);
    const std::string engine = c.substr(0, eq);
    contender_named(engine);  // known?
    caps[engine] = value == "none" ? SIZE_MAX : parse_count(value);
  }
  std::vector<Contender> out;
  for (const std::string& name : names) {
    if (std::any_of(out.begin(), out.end(), [&](const Contender& c) { return c.name == name; })) {
      continue;
    }
    Contender c = contender_named(name);
    if (const auto it = caps.find(name); it != caps.end()) c.cap = it->second;
    out.push_back(c);
  }
  return out;
}

class Harness {
 public:
  explicit Harness(const Settings& s) : s_(s), contenders_(select_contenders(s)) {
    for (const std::string& w : expand_workload_keys(s.workloads)) keys_.push_back(w);
    for (const std::string& n : s.sizes) sizes_.push_back(parse_count(n));
    for (const std::string& o : s.orders) {
      if (o == "shuffled") {
        orders_.push_back(Order::shuffled);
      } else if (o == "sorted") {
        orders_.push_back(Order::sorted);
      } else {
        throw std::invalid_argument("unknown order '" + o + "' (valid: shuffled, sorted)");
      }
    }
    for (const std::string& o : s.ops) {
      if (o == "all") {
        ops_.assign(std::begin(kAllOps), std::end(kAllOps));
      } else {
        ops_.push_back(parse_op(o));
      }
    }
    std::vector<Op> unique_ops;
    for (const Op op : ops_) {
      if (std::find(unique_ops.begin(), unique_ops.end(), op) == unique_ops.end()) {
        unique_ops.push_back(op);
      }
    }
    ops_ = unique_ops;
    threads_ = s.threads;
    if (threads_.empty()) {
      threads_ = {1, std::max(1, static_cast<int>(std::thread::hardware_concurrency()))};
    }
    std::sort(threads_.begin(), threads_.end());
    threads_.erase(std::unique(threads_.begin(), threads_.end()), threads_.end());
    if (threads_.front() < 1) throw std::invalid_argument("--threads must be >= 1");
    queries_ = parse_count(s.queries);
  }

  /// Runs everything; returns the number of failures (disagreeing or crashing contenders).
  template <class T>
  int run(RunInfo& info) {
    info.coordinate_type = std::is_same_v<T, float> ? "float" : "double";
    info.isolated = !s_.no_fork;
    info.reps = s_.reps;
    info.rep_budget_ms = s_.rep_budget_ms;
    info.timeout_s = s_.timeout_s;
    info.queries = queries_;
    info.seed = s_.seed;
    print_run_header(stdout, info);
    for (const std::string& key : keys_) {
      bool header_done = false;
      for (const std::size_t n : sizes_) {
        const bool want_ball = std::any_of(ops_.begin(), ops_.end(), is_ball);
        std::vector<double> queries;
        for (const Order order : orders_) {
          // Generated afresh for each order (it is deterministic), and the double copy freed
          // before any contender runs: the harness holds only what a user's process would, the
          // points in T and the query positions, and that is all a child's RSS inherits.
          Workload w = make_workload(key, n, s_.seed);
          if (!header_done) {
            infos_.push_back({w.key, w.name, w.description, w.dim, w.radius});
            print_workload_header(stdout, infos_.back());
            header_done = true;
          }
          if (want_ball && queries.empty()) queries = ball_queries(w, queries_, s_.seed);
          apply_order(w, order, s_.seed);
          const std::vector<T> coords(w.coords.begin(), w.coords.end());
          w.coords = {};
          if (w.dim == 2) {
            run_groups<2, T>(w, order, Problem<2, T>{coords, w.radius, queries});
          } else {
            run_groups<3, T>(w, order, Problem<3, T>{coords, w.radius, queries});
          }
        }
      }
    }
    std::printf("\n==== Summary: median ms (ns per point) ====\n");
    // Every operation in the first order asked for; the per-step list operations in the others.
    for (const Order order : orders_) {
      for (const Op op : ops_) {
        if (order == orders_.front() || makes_lists(op)) {
          print_summary(stdout, infos_, rows_, op, std::string(order_name(order)));
        }
      }
    }
    info.load_end = load_average();
    info.speeds_end = measure_cpu_speeds();
    print_load_note(stdout, info);
    if (!s_.json.empty()) {
      write_json(s_.json, info, infos_, rows_);
      std::printf("\nJSON written to %s\n", s_.json.c_str());
    }
    int failures = 0;
    for (const Row& r : rows_) {
      if (!r.failure) continue;
      ++failures;
      std::fprintf(stderr, "FAILED: %s n=%zu %s %s threads=%d %s: %s %s\n", r.workload.c_str(), r.n,
                   r.order.c_str(), std::string(op_name(r.op)).c_str(), r.threads, r.engine.c_str(),
                   r.status == "ok" ? "" : r.reason.c_str(), r.check.c_str());
    }
    return failures;
  }

 private:
  template <int Dim, class T>
  void run_groups(const Workload& w, Order order, const Problem<Dim, T>& problem) {
    const RepPolicy policy{s_.reps, s_.rep_budget_ms};
    for (const Op op : ops_) {
      std::vector<Row> group;
      Agreement agreement;
      for (const int threads : threads_) {
        for (const Contender& c : contenders_) {
          Row row;
          row.workload = w.key;
          row.n = problem.size();
          row.order = std::string(order_name(order));
          row.op = op;
          row.threads = threads;
          row.engine = c.name;
          row.ours = c.ours;
          row.items = is_ball(op) ? problem.queries.size() / Dim : problem.size();
          if (problem.size() > c.cap) {
            row.status = "skipped";
            row.reason = "n > cap " + format_count(c.cap) + "; --cap " + c.name + "=none runs it";
            group.push_back(row);
            continue;
          }
          const std::function<Measurement()> body = [&] {
            warm_up_threads(threads);
            return c.ours
                       ? run_ours<Dim, T>(c.options, c.list_options, problem, op, threads, policy)
                       : run_nanoflann<Dim, T>(problem, op, threads, policy, s_.nanoflann_leaf);
          };
          if (!s_.no_warm_memory) warm_up_memory(warm_memory_bytes(problem.size()));
          // A quick look at the CPUs' speeds on each side of the row (about 10 ms each): on a
          // shared host they change from minute to minute.
          const auto slowest_cpu = [&] {
            return s_.no_cpu_probe ? 0.0 : measure_cpu_speeds(kQuickChain, 1).slowest();
          };
          const double slowest_before = slowest_cpu();
          Outcome outcome = run_contender(body, !s_.no_fork, s_.timeout_s);
          row.slowest_cpu = std::min(slowest_before, slowest_cpu());
          row.status = std::string(status_name(outcome.status));
          row.reason = outcome.reason;
          row.peak_rss_mib = outcome.peak_rss_mib;
          row.own_rss_mib = outcome.own_rss_mib;
          row.cpu = outcome.measurement.cpu;
          row.failure = outcome.status == Status::crashed;
          if (outcome.status == Status::ok) {
            row.ms = outcome.measurement.ms;
            row.median_ms = median(row.ms);
            row.total = outcome.measurement.digest.total;
            if (outcome.measurement.index_bytes >= 0.0) {
              row.index_bytes_per_point =
                  outcome.measurement.index_bytes / static_cast<double>(problem.size());
            }
          }
          group.push_back(std::move(row));
          if (outcome.status == Status::ok && op != Op::build) {
            agreement.add(group, group.size() - 1, std::move(outcome.measurement.digest));
          }
        }
      }
      const std::string note = agreement.finish(group, op);
      fill_ratios(group);
      print_group(stdout, infos_.back(), group, note);
      rows_.insert(rows_.end(), group.begin(), group.end());
    }
  }

  Settings s_;
  std::vector<Contender> contenders_;
  std::vector<std::string> keys_;
  std::vector<std::size_t> sizes_;
  std::vector<Order> orders_;
  std::vector<Op> ops_;
  std::vector<int> threads_;
  std::size_t queries_ = 0;
  std::vector<WorkloadInfo> infos_;
  std::vector<Row> rows_;
};

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  bench::Settings s;
  CLI::App app{
      "spatialhash benchmark: workloads x sizes x point orders x operations x threads, every "
      "engine of spatialhash against nanoflann, with a cross-check of the neighbor totals. "
      "Exits 1 if two of our engines disagree or a contender crashes."};
  app.add_option("--workloads", s.workloads,
                 "all, W1 (SPH block), W2 (uniform), W3 (clustered), "
                 "W4 (= W4a 2D lattice + W4b 2D uniform), W5 (surface), W6 (sparse)")
      ->delimiter(',');
  app.add_option("--sizes", s.sizes, "point counts, e.g. 10k,100k,1M,4M")->delimiter(',');
  app.add_option("--threads", s.threads, "thread counts (default: 1 and all cores)")
      ->delimiter(',');
  app.add_option(
         "--engines", s.engines,
         "all, or a list of: cell_list dense_grid hashed_grid cell_hash sorted_index "
         "multimap brute_force automatic nanoflann low_memory sorted_lists half_cells (cell_list's "
         "lists with ListOptions::low_memory, or with ListOptions::sorted; cell_list with "
         "Options::cell_subdivision = 2)")
      ->delimiter(',');
  app.add_option("--ops", s.ops,
                 "all, or a list of: build rebuild_lists step_lists rebuild_rows step_rows "
                 "pairs counts ball ball_rows ball_each")
      ->delimiter(',');
  app.add_option("--orders", s.orders, "shuffled,sorted")->delimiter(',');
  app.add_option("--cap", s.caps,
                 "ENGINE=SIZE: largest n to run ENGINE at ('none': no cap). Defaults: "
                 "brute_force=20k multimap=100k sorted_index=1M")
      ->delimiter(',');
  app.add_option("--type", s.type, "coordinate type: float or double")
      ->check(CLI::IsMember({"float", "double"}));
  app.add_option("--queries", s.queries, "ball queries per ball run (e.g. 1M)");
  app.add_option("--reps", s.reps, "repetitions per measurement (median reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--rep-budget-ms", s.rep_budget_ms,
                 "stop repeating once the repetitions took this long (after the third; a "
                 "first repetition over it runs once)")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", s.timeout_s, "seconds before a contender run is killed")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", s.seed, "base seed of all workloads");
  app.add_option("--nanoflann-leaf", s.nanoflann_leaf, "nanoflann leaf_max_size")
      ->check(CLI::Range(1, 1000));
  app.add_option("--json", s.json, "write all results to this JSON file");
  app.add_flag("--smoke", s.smoke,
               "tiny and fast (CI): 2k points, 1 repetition, 2000 queries, unless overridden");
  app.add_flag("--no-fork", s.no_fork,
               "run contenders in-process (for profilers; no time limit, RSS = process peak)");
  app.add_flag("--no-warm-memory", s.no_warm_memory,
               "do not touch and free memory before each contender run (on a VM whose host "
               "takes freed memory back, the first run after a pause then pays for it)");
  app.add_flag("--no-cpu-probe", s.no_cpu_probe,
               "do not time the CPUs' speeds around each row (the min cpu column; about 20 ms a "
               "row; --smoke implies it)");
  CLI11_PARSE(app, argc, argv);
  if (s.smoke) {
    s.no_cpu_probe = true;
    if (app.count("--sizes") == 0) s.sizes = {"2k"};
    if (app.count("--reps") == 0) s.reps = 1;
    if (app.count("--queries") == 0) s.queries = "2000";
    if (app.count("--timeout") == 0) s.timeout_s = 60.0;
  }
  try {
    bench::Harness harness(s);
    bench::RunInfo info = bench::describe_machine(SPATIALHASH_BENCH_SOURCE_DIR);
    info.speeds_start = bench::measure_cpu_speeds();
    for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
    const int failures = s.type == "double" ? harness.run<double>(info) : harness.run<float>(info);
    if (failures > 0) {
      std::fprintf(stderr, "%d failure(s): our engines must agree exactly and never crash\n",
                   failures);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spatialhash_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
