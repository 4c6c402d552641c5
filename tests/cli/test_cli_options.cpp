// Option checks and output destinations: --threads above the library's limit, query files of the
// wrong dimension, standard input named twice, generate parameters that overflow the output
// precision, and -o onto a FIFO, a device or a symbolic link.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "cli_expect.hpp"
#include "cli_inputs.hpp"
#include "cli_oracle.hpp"
#include "spatialhash/spatialhash.hpp"

namespace {

using namespace clitest;

constexpr int kUsage = 2, kInput = 3;

/// Hidden temporaries (".NAME.tmp-PID-N") left in `dir`.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name.find(".tmp-") != std::string::npos) found.push_back(name);
  }
  return found;
}

class Options : public ::testing::Test {
 protected:
  void SetUp() override {
    points = make_points(3, 120, 5.0, 1.0, 11);
    input = dir.file("points.npy");
    write_file(input, npy_bytes(points, 120, 3, "<f8", false));
  }
  TempDir dir;
  std::vector<double> points;
  std::string input;
};

// ---- 1. --threads above spatialhash::kMaxThreads ----

TEST_F(Options, ThreadsAboveTheLimitIsAUsageErrorBeforeAnyWork) {
  const std::string limit = std::to_string(spatialhash::kMaxThreads);
  const std::string over = std::to_string(spatialhash::kMaxThreads + 1);
  for (const std::string& threads :
       {over, std::string("40000"), std::string("100000"), std::string("2147483647")}) {
    SCOPED_TRACE(threads);
    expect_failure({"pairs", input, "-r", "1.5", "--threads", threads, "-o", dir.file("p.npy")},
                   kUsage, {"--threads " + threads, "limit of " + limit});
    expect_failure({"stats", input, "-r", "1.5", "--threads", threads}, kUsage,
                   {"--threads " + threads});
    expect_failure({"query", input, "-r", "1.5", "--at", "1,1,1", "--threads", threads}, kUsage,
                   {"--threads " + threads});
    // Before any work: the input is not even opened.
    expect_failure({"counts", dir.file("missing.csv"), "-r", "1", "--threads", threads}, kUsage,
                   {"--threads " + threads});
  }
  EXPECT_FALSE(fs::exists(dir.file("p.npy")));
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST_F(Options, ThreadsAtOrBelowTheLimitMatchBruteForce) {
  for (const char* threads : {"1", "3"}) {
    const Result res = run({"pairs", input, "-r", "1", "--threads", threads, "-q"});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(points, 3, 1.0)) << "--threads " << threads;
  }
}

// ---- 2. query files must have the points' dimension ----

TEST_F(Options, QueryFileOfAnotherDimensionIsAnInputError) {
  const std::string p2 = dir.file("p2.txt"), q3 = dir.file("q3.csv");
  write_file(p2, "0,0\n1,1\n2,2\n");
  write_file(q3, "0,0,100\n");
  expect_failure({"query", p2, "-r", "0.5", "--queries", q3}, kInput, {"q3.csv", "3-D", "2-D"});
  // The same with a (1, 3) .npy query file, and a header naming x, y, z.
  const std::string q3npy = dir.file("q3.npy");
  write_file(q3npy, npy_bytes({0.0, 0.0, 100.0}, 1, 3, "<f8", false));
  expect_failure({"query", p2, "-r", "0.5", "--queries", q3npy}, kInput, {"q3.npy", "3-D", "2-D"});
  const std::string q3header = dir.file("q3h.csv");
  write_file(q3header, "x,y,z\n0,0,100\n");
  expect_failure({"query", p2, "-r", "0.5", "--queries", q3header}, kInput, {"3-D", "2-D"});
  // And 2-D positions against 3-D points.
  const std::string q2 = dir.file("q2.csv");
  write_file(q2, "1,1\n");
  expect_failure({"query", input, "-r", "0.5", "--queries", q2}, kInput, {"q2.csv", "2-D", "3-D"});
}

TEST_F(Options, QueryFileOfTheSameDimensionMatchesBruteForce) {
  const std::vector<double> probes = make_points(3, 20, 5.0, 1.0, 12);
  const std::string q = dir.file("probes.csv");
  write_file(q, delimited(probes, 3, ',', {"x", "y", "z"}));
  const Result res = run({"query", input, "-r", "1", "--queries", q, "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto rows = parse_rows(res.out);
  ASSERT_EQ(rows.size(), 21u);
  for (std::size_t k = 0; k < 20; ++k) {
    const auto want =
        oracle::ball<3>(points, {probes[k * 3], probes[k * 3 + 1], probes[k * 3 + 2]}, 1.0);
    EXPECT_EQ(numbers<std::size_t>(rows[k + 1].at(2)), want) << "query " << k;
  }
}

// ---- 3. standard input read twice ----

TEST_F(Options, QueryRefusesStandardInputForPointsAndQueries) {
  const std::string csv = dir.file("stdin.csv");
  write_file(csv, delimited(points, 3, ',', {"x", "y", "z"}));
  expect_failure({"query", "-", "-r", "1", "--queries", "-"}, kUsage, {"standard input"}, csv);
  // One of them from standard input is fine.
  const Result res = run({"query", "-", "-r", "1", "--queries", csv, "-q"}, csv);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(parse_rows(res.out).size(), 121u);
}

// ---- 4. generate: coordinates must be finite in the output precision ----

TEST_F(Options, GenerateRefusesCoordinatesBeyondThePrecision) {
  expect_failure({"generate", "--lattice", "3", "--dim", "2", "--jitter", "1e308"}, kUsage,
                 {"--jitter"});
  const std::string g = dir.file("g.npy");
  expect_failure({"generate", "--lattice", "3", "--dim", "2", "--spacing", "1e39", "--precision",
                  "float", "-o", g},
                 kUsage, {"--spacing", "float", "--precision double"});
  expect_failure({"generate", "--lattice", "3", "--spacing", "1e308", "-o", g}, kUsage,
                 {"--spacing"});
  expect_failure(
      {"generate", "--lattice", "2", "--jitter", "1e39", "--precision", "float", "-o", g}, kUsage,
      {"--jitter", "float"});
  EXPECT_FALSE(fs::exists(g));
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST_F(Options, GenerateNearTheLargestFloatStaysFinite) {
  // Coordinates up to 3e38 + 1e30: finite in float (largest about 3.4e38), so accepted.
  const std::string g = dir.file("big.npy");
  const Result res = run({"generate", "--lattice", "2", "--dim", "2", "--spacing", "3e38",
                          "--jitter", "1e30", "--precision", "float", "-o", g, "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const NpyArray a = parse_npy(slurp(g));
  EXPECT_EQ(a.descr, "<f4");
  const auto v = a.values<double>();
  ASSERT_EQ(v.size(), 8u);
  for (double x : v) EXPECT_TRUE(std::isfinite(x)) << x;
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 2.9e38);
}

// ---- 5. -o onto a FIFO, a device or a symbolic link ----

/// Reads everything written into a FIFO while the tool runs. It holds the FIFO open for writing
/// itself until release(), so its reader's open() does not wait, the tool's open() finds a
/// reader at once, and the reader sees end-of-file only after the tool is done: no test can hang,
/// whether or not the tool ever opens the FIFO.
class FifoReader {
 public:
  explicit FifoReader(const std::string& path) {
    keep_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // Linux: never waits on a FIFO
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (keep_ < 0 || fd_ < 0) throw std::runtime_error("cannot open the FIFO " + path);
    thread_ = std::thread([this] {
      char block[65536];
      ssize_t n = 0;
      while ((n = ::read(fd_, block, sizeof block)) > 0) data_.append(block, n);
    });
  }
  ~FifoReader() { release(); }
  /// Drops the reader's own write end and returns what was read.
  const std::string& release() {
    if (keep_ >= 0) {
      ::close(keep_);
      keep_ = -1;
      thread_.join();
      ::close(fd_);
    }
    return data_;
  }

 private:
  int keep_ = -1, fd_ = -1;
  std::thread thread_;
  std::string data_;
};

bool is_fifo(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
}

TEST_F(Options, OutputToAFifoIsWrittenDirectly) {
  const std::string fifo = dir.file("f.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    FifoReader reader(fifo);
    const Result res = run({"pairs", input, "-r", "1", "-q", "-o", fifo});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(pairs_of_csv(reader.release()), oracle_pairs(points, 3, 1.0));
  }
  EXPECT_TRUE(is_fifo(fifo));
  {
    FifoReader reader(fifo);
    const Result res = run({"generate", "--lattice", "4", "-q", "-o", fifo});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(parse_rows(reader.release()).size(), 65u);
  }
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST_F(Options, NumpyOutputToAFifoIsRefused) {
  // A .npy header is completed at the end by seeking back, which a FIFO cannot do. Refused
  // before opening it, so no reader is needed.
  const std::string fifo = dir.file("f.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_failure({"pairs", input, "-r", "1", "-o", fifo}, kUsage, {"f.npy", "pipe"});
  expect_failure({"generate", "--lattice", "2", "-o", fifo}, kUsage, {"f.npy", "pipe"});
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST_F(Options, OutputThroughALinkToADeviceLeavesTheLink) {
  const std::string null_npy = dir.file("null.npy");
  fs::create_symlink("/dev/null", null_npy);
  const Result res = run({"pairs", input, "-r", "1", "-q", "-o", null_npy});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_TRUE(fs::is_symlink(null_npy));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST_F(Options, OutputThroughASymlinkWritesItsTarget) {
  fs::create_directory(dir.path() / "real");
  const std::string target = dir.file("real/target.csv"), link = dir.file("link.csv");
  write_file(target, "old\n");
  fs::create_symlink("real/target.csv", link);  // relative, as ln -s makes them
  const Result res = run({"pairs", input, "-r", "1", "-q", "-o", link});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(pairs_of_csv(slurp(target)), oracle_pairs(points, 3, 1.0));

  // A failed run leaves the target as it was, and the link.
  const std::string before = slurp(target);
  expect_failure({"pairs", dir.file("missing.csv"), "-r", "1", "-o", link}, kInput,
                 {"missing.csv"});
  EXPECT_EQ(slurp(target), before);
  EXPECT_TRUE(fs::is_symlink(link));

  // A link to the input is still the input.
  const std::string to_input = dir.file("input-link.npy");
  fs::create_symlink(input, to_input);
  expect_failure({"counts", input, "-r", "1", "-o", to_input}, kUsage, {"is the input file"});
  EXPECT_TRUE(fs::is_symlink(to_input));

  // A dangling link (through a second link) creates its final target.
  const std::string chain = dir.file("chain.csv");
  fs::create_symlink("link2.csv", chain);
  fs::create_symlink("real/new.csv", dir.file("link2.csv"));
  const Result made = run({"counts", input, "-r", "1", "-q", "-o", chain});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(fs::is_symlink(chain));
  EXPECT_TRUE(fs::is_symlink(dir.file("link2.csv")));
  EXPECT_EQ(parse_rows(slurp(dir.file("real/new.csv"))).size(), 121u);

  EXPECT_TRUE(temporaries(dir.path()).empty());
  EXPECT_TRUE(temporaries(dir.path() / "real").empty());
}

}  // namespace
