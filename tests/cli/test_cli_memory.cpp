// Memory stays bounded: a 2-million-point CSV read, searched and written as ~14 million pairs
// (a 110 MB .npy, streamed: --max-buffer below the result) needs about the points plus the index,
// never the text or the whole result. Peak RSS of the child process is measured with wait4(); the
// bound is generous (3x the points' bytes + 200 MB), and holding the text (~100 MB) or the pairs
// (~110 MB plus vector growth) on top of points and index would exceed it. Not a timing test.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "cli_harness.hpp"

namespace {

using namespace clitest;

TEST(Memory, TwoMillionPointCsvStaysWithinBound) {
  TempDir dir;
  constexpr std::size_t n = 2'000'000;
  constexpr double box = 126.0;  // about one point per unit volume
  const std::string csv = dir.file("big.csv");
  {
    std::ofstream out(csv, std::ios::binary);
    std::mt19937_64 g(2024);
    std::uniform_real_distribution<double> u(0.0, box);
    std::string chunk = "x,y,z\n";
    for (std::size_t i = 0; i < n; ++i) {
      chunk += text(u(g)) + "," + text(u(g)) + "," + text(u(g)) + "\n";
      if (chunk.size() > (1u << 20)) {
        out << chunk;
        chunk.clear();
      }
    }
    out << chunk;
    ASSERT_TRUE(out.good());
  }
  const std::uint64_t text_bytes = std::filesystem::file_size(csv);
  // r = 1.5: about 14 neighbors per point, so 14 million pairs.
  const Result res =
      run({"pairs", csv, "-r", "1.5", "--max-buffer", "64", "-o", dir.file("pairs.npy")});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::ifstream in(dir.file("pairs.npy"), std::ios::binary);
  std::string head(128, '\0');
  in.read(head.data(), 128);
  const std::size_t at = head.find("'shape': (") + 10;
  const std::uint64_t pairs = std::stoull(head.substr(at));
  EXPECT_GT(pairs, 6 * n);  // ~7 pairs per point expected
  EXPECT_EQ(std::filesystem::file_size(dir.file("pairs.npy")), 128 + pairs * 8);
  EXPECT_NE(res.err.find("2,000,000 points"), std::string::npos) << res.err;

  const double points_bytes = n * 3 * sizeof(double);
  const double bound_kb = (3.0 * points_bytes + 200.0 * (1 << 20)) / 1024.0;
  std::cout << "[ memory ] CSV " << text_bytes / (1 << 20) << " MiB, points "
            << points_bytes / (1 << 20) << " MiB, peak RSS " << res.max_rss_kb / 1024
            << " MiB, bound " << bound_kb / 1024 << " MiB\n"
            << "[ memory ] " << res.err;
  RecordProperty("peak_rss_kb", std::to_string(res.max_rss_kb));
  EXPECT_LT(static_cast<double>(res.max_rss_kb), bound_kb);
}

}  // namespace
