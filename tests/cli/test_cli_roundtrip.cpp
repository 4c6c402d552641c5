// Round trips through the binary outputs: the tool writes .npy / .npz, the test reads them back
// with its own parser (and NumPy when available) and compares with the oracle.
#include <gtest/gtest.h>

#include <cmath>

#include "cli_inputs.hpp"
#include "cli_oracle.hpp"

namespace {

using namespace clitest;

struct Data {
  TempDir dir;
  std::vector<double> xyz;
  std::string path;
  explicit Data(std::size_t n, double box = 10.0, int dim = 3)
      : xyz(make_points(dim, n, box, 1.0, 41)) {
    path = dir.file("points.npy");
    write_file(path, npy_bytes(xyz, n, dim, "<f8", false));
  }
};

PairSet pairs_of(const NpyArray& a) {
  EXPECT_EQ(a.shape.size(), 2u);
  EXPECT_EQ(a.shape.at(1), 2u);
  const auto v = a.values<std::int64_t>();
  PairSet p;
  for (std::size_t k = 0; k + 1 < v.size(); k += 2) {
    EXPECT_LT(v[k], v[k + 1]);
    p.emplace_back(v[k], v[k + 1]);
  }
  std::sort(p.begin(), p.end());
  return p;
}

TEST(RoundTrip, PairsNpyIsAnInt32ArrayOfShapeM2) {
  Data d(6000, 6.0);  // ~350k pairs, several MiB of output: many buffer flushes
  const Result res = run({"pairs", d.path, "-r", "1", "-o", d.dir.file("p.npy"), "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const NpyArray a = parse_npy(slurp(d.dir.file("p.npy")));
  EXPECT_EQ(a.descr, "<i4");
  EXPECT_FALSE(a.fortran);
  const PairSet want = oracle_pairs(d.xyz, 3, 1.0);
  EXPECT_GT(want.size() * 8, std::size_t{1} << 21);
  EXPECT_EQ(a.shape.at(0), want.size());
  EXPECT_EQ(pairs_of(a), want);
}

class BufferModes : public ::testing::TestWithParam<const char*> {};

TEST_P(BufferModes, PairsNpzWithDistancesPassesTheCrcCheck) {
  Data d(6000, 6.0);
  const Result res = run({"pairs", d.path, "-r", "1", "--distances", "--max-buffer", GetParam(),
                          "-o", d.dir.file("p.npz"), "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto files = read_zip(slurp(d.dir.file("p.npz")));  // verifies every CRC-32
  ASSERT_EQ(files.size(), 2u);
  const NpyArray pairs = parse_npy(files.at("pairs.npy"));
  const NpyArray distances = parse_npy(files.at("distances.npy"));
  EXPECT_EQ(distances.descr, "<f8");
  ASSERT_EQ(distances.shape, std::vector<std::uint64_t>{pairs.shape.at(0)});
  const auto v = pairs.values<std::int64_t>();
  const auto dist = distances.values<double>();
  for (std::size_t k = 0; k < dist.size(); ++k) {
    ASSERT_EQ(dist[k], std::sqrt(distance_squared(d.xyz, 3, v[2 * k], v[2 * k + 1])));
  }
  EXPECT_EQ(pairs_of(pairs), oracle_pairs(d.xyz, 3, 1.0));
}

TEST_P(BufferModes, ListsNpzIsCsr) {
  Data d(2000, 10.0, 2);
  const Result res = run({"lists", d.path, "-r", "1", "--distances", "--max-buffer", GetParam(),
                          "-o", d.dir.file("l.npz"), "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto files = read_zip(slurp(d.dir.file("l.npz")));
  const NpyArray offsets_array = parse_npy(files.at("offsets.npy"));
  EXPECT_EQ(offsets_array.descr, "<i8");
  const auto offsets = offsets_array.values<std::int64_t>();
  const auto indices = parse_npy(files.at("indices.npy")).values<std::int64_t>();
  const auto distances = parse_npy(files.at("distances.npy")).values<double>();
  const auto want = oracle_lists(d.xyz, 2, 1.0);
  ASSERT_EQ(offsets.size(), want.size() + 1);
  EXPECT_EQ(offsets.front(), 0);
  EXPECT_EQ(static_cast<std::size_t>(offsets.back()), indices.size());
  ASSERT_EQ(distances.size(), indices.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::vector<std::size_t> row(indices.begin() + offsets[i],
                                       indices.begin() + offsets[i + 1]);
    ASSERT_EQ(row, want[i]) << "point " << i;
    for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      ASSERT_EQ(distances[k], std::sqrt(distance_squared(d.xyz, 2, i, indices[k])));
    }
  }
}

// "0" streams the result; "1024" builds it in memory first.
INSTANTIATE_TEST_SUITE_P(RoundTrip, BufferModes, ::testing::Values("0", "1024"),
                         [](const auto& info) {
                           return std::string(info.param) == "0" ? "streamed" : "buffered";
                         });

TEST(RoundTrip, CountsNpyAndNpz) {
  Data d(1000);
  const auto want = oracle_lists(d.xyz, 3, 1.0);
  for (const char* name : {"c.npy", "c.npz"}) {
    const Result res = run({"counts", d.path, "-r", "1", "-o", d.dir.file(name), "-q"});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const std::string bytes = slurp(d.dir.file(name));
    const NpyArray a = std::string(name) == "c.npy" ? parse_npy(bytes)
                                                    : parse_npy(read_zip(bytes).at("counts.npy"));
    EXPECT_EQ(a.descr, "<i4");
    ASSERT_EQ(a.shape, std::vector<std::uint64_t>{1000});
    const auto counts = a.values<std::int64_t>();
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(static_cast<std::size_t>(counts[i]), want[i].size());
    }
  }
}

TEST(RoundTrip, GenerateWritesAJitteredLattice) {
  TempDir dir;
  const Result res = run(
      {"generate", "--lattice", "12", "--jitter", "0.2", "--seed", "5", "-o", dir.file("g.npy")});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.err.find("1,728 points"), std::string::npos) << res.err;
  const NpyArray a = parse_npy(slurp(dir.file("g.npy")));
  EXPECT_EQ(a.descr, "<f8");
  ASSERT_EQ(a.shape, (std::vector<std::uint64_t>{1728, 3}));
  const auto v = a.values<double>();
  for (std::size_t i = 0; i < 1728; ++i) {
    const double site[3] = {double(i % 12), double(i / 12 % 12), double(i / 144)};
    for (int k = 0; k < 3; ++k) ASSERT_LE(std::abs(v[i * 3 + k] - site[k]), 0.2) << i;
  }
  // The same data set as CSV and PLY gives the same pairs as the .npy.
  for (const char* name : {"g.csv", "g.ply"}) {
    ASSERT_EQ(run({"generate", "--lattice", "12", "--jitter", "0.2", "--seed", "5", "-o",
                   dir.file(name), "-q"})
                  .exit_code,
              0);
  }
  const PairSet want = oracle_pairs(v, 3, 1.1);
  for (const char* name : {"g.npy", "g.csv", "g.ply"}) {
    const Result p = run({"pairs", dir.file(name), "-r", "1.1", "-q"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(pairs_of_csv(p.out), want) << name;
  }
  // float precision and 2-D.
  ASSERT_EQ(run({"generate", "--lattice", "7", "--dim", "2", "--precision", "float", "-o",
                 dir.file("f.npy"), "-q"})
                .exit_code,
            0);
  const NpyArray f = parse_npy(slurp(dir.file("f.npy")));
  EXPECT_EQ(f.descr, "<f4");
  EXPECT_EQ(f.shape, (std::vector<std::uint64_t>{49, 2}));
}

/// NumPy reading the tool's files is the real contract; run it when NumPy is installed.
TEST(RoundTrip, NumpyLoadsTheOutputs) {
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  }
  Data d(3000);
  for (const auto& args : std::vector<std::vector<std::string>>{
           // Sorted, so that the two runs list their pairs in one order (unsorted pairs come
           // in whatever order the threads find them).
           {"pairs", d.path, "-r", "1", "--sort", "-o", d.dir.file("p.npy")},
           {"pairs", d.path, "-r", "1", "--sort", "--distances", "-o", d.dir.file("p.npz")},
           {"lists", d.path, "-r", "1", "-o", d.dir.file("l.npz")},
           {"counts", d.path, "-r", "1", "-o", d.dir.file("c.npy")}}) {
    ASSERT_EQ(run(cat(args, {"-q"})).exit_code, 0);
  }
  const std::size_t m = oracle_pairs(d.xyz, 3, 1.0).size();
  const std::string script = d.dir.file("check.py");
  write_file(script,
             "import numpy as np, sys\n"
             "d = sys.argv[1]\n"
             "p = np.load(d + '/p.npy')\n"
             "z = np.load(d + '/p.npz')\n"
             "l = np.load(d + '/l.npz')\n"
             "c = np.load(d + '/c.npy')\n"
             "assert p.shape == (" +
                 std::to_string(m) +
                 ", 2), p.shape\n"
                 "assert (z['pairs'] == p).all()\n"
                 "assert z['distances'].shape == (p.shape[0],)\n"
                 "assert (p[:, 0] < p[:, 1]).all()\n"
                 "assert l['offsets'][-1] == 2 * p.shape[0] == len(l['indices'])\n"
                 "assert (np.diff(l['offsets']) == c).all()\n"
                 "assert c.sum() == 2 * p.shape[0]\n"
                 "print('ok')\n");
  const std::string command = "/usr/bin/python3 " + script + " " + d.dir.path().string() + " > " +
                              d.dir.file("py.out") + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << slurp(d.dir.file("py.out"));
  EXPECT_EQ(slurp(d.dir.file("py.out")), "ok\n");
}

}  // namespace
