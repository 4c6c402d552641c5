// End to end: every input format, in 2-D and 3-D, through `spatialhash pairs`, compared with the
// double-precision brute-force oracle on the coordinates the file holds.
#include <gtest/gtest.h>

#include "cli_inputs.hpp"
#include "cli_oracle.hpp"

namespace {

using namespace clitest;

struct Case {
  Format format;
  int dim;
};

class InputFormats : public ::testing::TestWithParam<Case> {};

TEST_P(InputFormats, PairsMatchBruteForce) {
  const auto [format, dim] = GetParam();
  TempDir dir;
  const double r = 1.0;
  const std::vector<double> xyz = make_points(dim, 400, 10.0, r, 17 + dim);
  const Written w = write_input(dir, format, xyz, dim);
  const Result res = run(cat(cat({"pairs"}, w.args), {"-r", "1", "--quiet"}), w.stdin_file);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.err, "") << "--quiet must keep standard error empty";
  const PairSet want = oracle_pairs(w.stored, dim, r);
  EXPECT_EQ(pairs_of_csv(res.out), want);
  // The data holds the borderline cases: coincident points and a pair exactly r apart.
  EXPECT_GT(want.size(), 100u);
  EXPECT_TRUE(
      std::binary_search(want.begin(), want.end(), std::pair<std::size_t, std::size_t>(0, 1)));
  EXPECT_TRUE(
      std::binary_search(want.begin(), want.end(), std::pair<std::size_t, std::size_t>(4, 5)));
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (Format f : all_formats()) {
    for (int dim : {2, 3}) {
      if (f == Format::xyz_molecular && dim == 2) continue;  // molecular XYZ is 3-D
      all.push_back({f, dim});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cli, InputFormats, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return format_name(info.param.format) + "_" +
                                  std::to_string(info.param.dim) + "d";
                         });

TEST(InputFormats, PlyWithDimTwoReadsXAndYOfA3DFile) {
  TempDir dir;
  const std::vector<double> xyz = make_points(3, 200, 5.0, 0.5, 3);
  write_file(dir.file("m.ply"), ply_bytes(xyz, 3, Ply::little, false));
  const Result res = run({"pairs", dir.file("m.ply"), "-r", "0.5", "--dim", "2", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::vector<double> xy;
  for (std::size_t i = 0; i < 200; ++i) xy.insert(xy.end(), {xyz[i * 3], xyz[i * 3 + 1]});
  EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(xy, 2, 0.5));
}

TEST(InputFormats, PlyVertexWithAListPropertyIsWalkedRecordByRecord) {
  TempDir dir;
  const std::vector<double> xyz = make_points(3, 120, 4.0, 0.5, 6);
  for (const Ply encoding : {Ply::ascii, Ply::little, Ply::big}) {
    // Vertex records: double x, a list of i % 4 floats, double y, double z.
    std::string s = std::string("ply\nformat ") +
                    (encoding == Ply::ascii    ? "ascii"
                     : encoding == Ply::little ? "binary_little_endian"
                                               : "binary_big_endian") +
                    " 1.0\nelement vertex 120\nproperty double x\nproperty list ushort float junk\n"
                    "property double y\nproperty double z\nend_header\n";
    const bool big = encoding == Ply::big;
    for (std::size_t i = 0; i < 120; ++i) {
      const auto items = static_cast<std::uint16_t>(i % 4);
      if (encoding == Ply::ascii) {
        s += text(xyz[i * 3]) + " " + std::to_string(items);
        for (int k = 0; k < items; ++k) s += " 9.5";
        s += " " + text(xyz[i * 3 + 1]) + " " + text(xyz[i * 3 + 2]) + "\n";
        continue;
      }
      append_le(s, &xyz[i * 3], 8, big);
      append_le(s, &items, 2, big);
      const float junk = 9.5f;
      for (int k = 0; k < items; ++k) append_le(s, &junk, 4, big);
      append_le(s, &xyz[i * 3 + 1], 8, big);
      append_le(s, &xyz[i * 3 + 2], 8, big);
    }
    write_file(dir.file("lists.ply"), s);
    const Result res = run({"pairs", dir.file("lists.ply"), "-r", "0.5", "-q"});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(xyz, 3, 0.5)) << static_cast<int>(encoding);
  }
}

TEST(InputFormats, MolecularXyzReadsTheFirstFrameAndSaysSo) {
  TempDir dir;
  const std::vector<double> xyz = make_points(3, 50, 3.0, 0.5, 4);
  std::string frame = "50\ncomment\n";
  for (std::size_t i = 0; i < 50; ++i) {
    frame +=
        "O " + text(xyz[i * 3]) + " " + text(xyz[i * 3 + 1]) + " " + text(xyz[i * 3 + 2]) + "\n";
  }
  // A second frame with every atom moved far away: must not be read.
  std::string second = "50\nframe 2\n";
  for (std::size_t i = 0; i < 50; ++i) second += "O 100 100 " + std::to_string(i) + "\n";
  write_file(dir.file("traj.xyz"), frame + second);
  const Result res = run({"pairs", dir.file("traj.xyz"), "-r", "0.5"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(xyz, 3, 0.5));
  EXPECT_NE(res.err.find("only the first frame (50 atoms)"), std::string::npos) << res.err;
  EXPECT_NE(res.err.find("line 53"), std::string::npos) << res.err;
}

TEST(InputFormats, HeaderCanBeForcedAndRefused) {
  TempDir dir;
  // A numeric first row that is really a header (forced), and a file whose first row is data.
  const std::vector<double> xyz = make_points(2, 100, 4.0, 0.5, 5);
  write_file(dir.file("h.csv"), "1,2\n" + delimited(xyz, 2, ',', {}));
  Result res = run({"pairs", dir.file("h.csv"), "-r", "0.5", "--header", "yes", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(xyz, 2, 0.5));
  res = run({"pairs", dir.file("h.csv"), "-r", "0.5", "--header", "no", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::vector<double> with_first = {1, 2};
  with_first.insert(with_first.end(), xyz.begin(), xyz.end());
  EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(with_first, 2, 0.5));
}

TEST(InputFormats, EmptyInputWithADimensionHasNoPairs) {
  TempDir dir;
  write_file(dir.file("empty.csv"), "x,y,z\n");
  const Result res = run({"pairs", dir.file("empty.csv"), "-r", "1"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, "first,second\n");
  EXPECT_NE(res.err.find("0 points, 0 pairs"), std::string::npos) << res.err;
}

}  // namespace
