// Input readers on hostile or unusual files: header counts that the data does not back (pipes,
// overflowing PLY element sizes), huge column numbers, PLY z properties of the wrong type, byte
// order marks, CRLF molecular XYZ, quoted blank-separated fields and ragged rows. Files that
// must be read are checked against the brute-force oracle; the others against their error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_expect.hpp"
#include "cli_inputs.hpp"
#include "cli_oracle.hpp"
#include "sanitized_build.hpp"

namespace {

using namespace clitest;

constexpr int kInput = 3;
/// Peak memory allowed for a run that must not size anything from a header's claim: the tool
/// itself, a 4 MiB read block and a chunk (measured around 10 MiB; about 70 MiB under
/// AddressSanitizer, whose shadow memory adds to every run). Either bound is well below the
/// claims the tests make (240 MB and more).
constexpr long kSmallRssKb = (kSanitizedBuild ? 128 : 64) * 1024;

/// Runs `pairs` with `args` and compares the pairs with the oracle's for `xyz`.
void expect_pairs(const std::vector<std::string>& args, const std::vector<double>& xyz, int dim,
                  double r, const std::string& stdin_file = "") {
  const Result res = run(cat({"pairs"}, cat(args, {"-r", text(r), "-q"})), stdin_file);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(pairs_of_csv(res.out), oracle_pairs(xyz, dim, r));
}

/// A binary little-endian PLY header with one element of three `type` properties x, y, z.
std::string ply_header(const std::string& format, const std::string& count,
                       const std::string& type = "double") {
  return "ply\nformat " + format + " 1.0\nelement vertex " + count + "\nproperty " + type +
         " x\nproperty " + type + " y\nproperty " + type + " z\nend_header\n";
}

std::string doubles_le(const std::vector<double>& values) {
  std::string out;
  for (double v : values) append_le(out, &v, 8, false);
  return out;
}

class Readers : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& content) {
    write_file(dir.file(name), content);
    return dir.file(name);
  }
  TempDir dir;
};

// ---- 1. header counts not backed by data, when the input size is unknown ----

/// A .npy file holding the data of `xyz` under a header that claims `claimed` rows.
std::string npy_claiming(std::size_t claimed, const std::vector<double>& xyz, int dim,
                         const std::string& descr, bool fortran) {
  const std::size_t rows = xyz.size() / dim;
  const std::string full = npy_bytes(xyz, rows, dim, descr, fortran);
  const std::size_t header_size = npy_bytes({}, 0, dim, descr, fortran).size();
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (" + std::to_string(claimed) + ", " + std::to_string(dim) + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  const auto length = static_cast<std::uint16_t>(dict.size());
  append_le(out, &length, 2, false);
  return out + dict + full.substr(header_size);
}

TEST_F(Readers, NpyPipeClaimingBillionsOfRowsIsATruncationError) {
  const std::vector<double> xyz = make_points(3, 2, 4.0, 0.5, 1);
  // 4e9 rows of 3 doubles would be 96 GB: sized from the header, this was "out of memory".
  const std::string in = file("claim.npy", npy_claiming(4000000000u, xyz, 3, "<f8", false));
  expect_failure({"pairs", "-", "--format", "npy", "-r", "1"}, kInput,
                 {"<stdin>", "truncated", "after 2 of the 4000000000 rows", "(4000000000, 3)"}, in);
}

TEST_F(Readers, NpyPipeClaimingManyRowsUsesLittleMemory) {
  const std::vector<double> xyz = make_points(3, 10, 4.0, 0.5, 2);
  // 10 million float64 rows (240 MB) claimed, 10 present.
  const std::string in = file("mid.npy", npy_claiming(10000000u, xyz, 3, "<f8", false));
  const Result res = expect_failure({"pairs", "-", "--format", "npy", "-r", "1"}, kInput,
                                    {"after 10 of the 10000000 rows"}, in);
  EXPECT_LT(res.max_rss_kb, kSmallRssKb);
  // Fortran order: the first column ends early.
  const std::string fortran = file("midf.npy", npy_claiming(10000000u, xyz, 3, "<f4", true));
  const Result f =
      expect_failure({"pairs", "-", "--format", "npy", "-r", "1"}, kInput,
                     {"Fortran order", "column 1 after 30 of the 10000000 rows"}, fortran);
  EXPECT_LT(f.max_rss_kb, kSmallRssKb);
}

TEST_F(Readers, NpyPipeGrowsPastItsInitialReservation) {
  // More rows than are reserved up front for a pipe, so the array grows while reading.
  for (const bool fortran : {false, true}) {
    for (const int dim : {2, 3}) {
      const std::vector<double> xyz = make_points(dim, 9000, 30.0, 0.5, 3 + dim);
      const std::string in =
          file("pipe.npy", npy_bytes(xyz, xyz.size() / dim, dim, "<f8", fortran));
      SCOPED_TRACE(std::string(fortran ? "Fortran" : "C") + " order, dim " + std::to_string(dim));
      // 9000 rows: more than the 4096 reserved up front for a pipe.
      expect_pairs({"-", "--format", "npy"}, xyz, dim, 0.5, in);
    }
  }
}

TEST_F(Readers, PlyPipeClaimingBillionsOfVerticesIsATruncationError) {
  const std::string binary =
      file("huge.ply", ply_header("binary_little_endian", "4000000000") + doubles_le({1, 2, 3}));
  expect_failure({"pairs", "-", "--format", "ply", "-r", "1"}, kInput,
                 {"<stdin>", "ends after 1 of 4000000000 \"vertex\" records"}, binary);
  const std::string ascii = file("huge_ascii.ply", ply_header("ascii", "4000000000") + "1 2 3\n");
  const Result res = expect_failure({"pairs", "-", "--format", "ply", "-r", "1"}, kInput,
                                    {"ends after 1 of 4000000000 \"vertex\" records"}, ascii);
  EXPECT_LT(res.max_rss_kb, kSmallRssKb);
}

TEST_F(Readers, PlyPipeReadsEveryVertex) {
  const std::vector<double> xyz = make_points(3, 9000, 30.0, 0.5, 9);
  for (const Ply encoding : {Ply::ascii, Ply::little, Ply::big}) {
    const std::string in = file("pipe.ply", ply_bytes(xyz, 3, encoding, false));
    expect_pairs({"-", "--format", "ply"}, xyz, 3, 0.5, in);
  }
}

// ---- 2. --columns with a huge column number ----

TEST_F(Readers, HugeColumnNumberFailsAtOnceWithoutMemory) {
  const std::string h = file("h.csv", "x,y,z\n0,0,0\n1,0,0\n");
  // A table indexed by column number took 4 bytes per column (400 MB here).
  const Result res = expect_failure({"pairs", h, "-r", "2", "--columns", "99999999,1,2"}, kInput,
                                    {"h.csv:2:", "column 99999999", "only 3 fields"});
  EXPECT_LT(res.max_rss_kb, kSmallRssKb);
  expect_failure({"pairs", h, "-r", "2", "--columns", "1,2,12345678901"}, kInput,
                 {"h.csv:2:", "column 1000000000", "only 3 fields"});
}

TEST_F(Readers, ColumnsInAnyOrder) {
  const std::vector<double> xyz = make_points(3, 200, 5.0, 0.5, 10);
  std::string s;  // file columns: mass, z, x, y
  for (std::size_t i = 0; i < 200; ++i) {
    s += "7," + text(xyz[i * 3 + 2]) + "," + text(xyz[i * 3]) + "," + text(xyz[i * 3 + 1]) + "\n";
  }
  expect_pairs({file("perm.csv", s), "--columns", "3,4,2"}, xyz, 3, 0.5);
}

// ---- 3. PLY element sizes that overflow ----

TEST_F(Readers, PlyElementSizeOverflowIsATruncationError) {
  // 2305843009213693954 records of 8 bytes is 2^64 + 16 bytes: wrapped, it skipped 16 bytes and
  // read the vertex from the wrong offset (exit status 0).
  const std::string header =
      "ply\nformat binary_little_endian 1.0\nelement face 2305843009213693954\n"
      "property double a\nelement vertex 1\nproperty double x\nproperty double y\n"
      "property double z\nend_header\n";
  const std::string wrap = file("face_wrap.ply", header + doubles_le({7, 8, 9, 1, 2, 3}));
  expect_failure({"stats", wrap, "-r", "1.5"}, kInput,
                 {"face_wrap.ply", "ends after 6 of 2305843009213693954 \"face\" records"});
}

// ---- 4. PLY z properties that cannot be read ----

TEST_F(Readers, PlyUnreadableZIsRefused) {
  const std::string intz = file("intz.ply",
                                "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"
                                "property float y\nproperty int z\nend_header\n0 0 0\n0 0 100\n");
  expect_failure({"pairs", intz, "-r", "1"}, kInput,
                 {"unsupported PLY", "intz.ply", "x, y, z of type float or double",
                  "float x, float y, int z", "--dim 2"});
  const std::string listz =
      file("listz.ply",
           "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
           "property list uchar float z\nend_header\n0 0 1 0\n0 0 1 100\n");
  expect_failure({"pairs", listz, "-r", "1"}, kInput, {"unsupported PLY", "list uchar float z"});
  // Asked for, x and y alone are read.
  expect_pairs({intz, "--dim", "2"}, {0, 0, 0, 0}, 2, 1);
}

// ---- 5. UTF-8 byte order marks ----

TEST_F(Readers, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::vector<double> xyz = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  expect_pairs({file("bom.csv", bom + "0,0,0\n1,0,0\n0,1,0\n")}, xyz, 3, 1.5);
  // A header's first name is "x", not "\xEF\xBB\xBFx".
  expect_pairs({file("bomh.csv", bom + "x,y,z,w\n0,0,0,9\n1,0,0,9\n0,1,0,9\n")}, xyz, 3, 1.5);
  expect_pairs({file("bom.xyz", bom + "3\ncomment\nC 0 0 0\nH 1 0 0\nO 0 1 0\n")}, xyz, 3, 1.5);
  expect_pairs({"-"}, xyz, 3, 1.5, file("bom.txt", bom + "0 0 0\n1 0 0\n0 1 0\n"));
}

// ---- 6. CRLF molecular XYZ ----

TEST_F(Readers, MolecularXyzWithCrlf) {
  const std::vector<double> xyz = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::string crlf = file("crlf.xyz", "3\r\nc\r\nC 0 0 0\r\nH 1 0 0\r\nO 0 1 0\r\n");
  expect_pairs({crlf}, xyz, 3, 1.5);
  const Result res = run({"stats", crlf, "-r", "1.5"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("XYZ, 3 atoms"), std::string::npos) << res.out;
}

// ---- 7. Quoted fields separated by blanks ----

TEST_F(Readers, QuotedBlankSeparatedFields) {
  const std::vector<double> xyz = {0, 0, 0, 1, 0, 0};
  expect_pairs({file("q.txt", "\"0\" \"0\" \"0\"\n\"1\"\t\"0\"  \"0\"\n")}, xyz, 3, 2);
  // Quoted header names select the columns by name, also names with blanks inside.
  const std::string named =
      file("qh.txt", "\"atom id\" \"x\" \"y\" \"z\"\n\"a\" 0 \"0\" 0\n\"b\" \"1\" 0 0\n");
  expect_pairs({named}, xyz, 3, 2);
  const std::string spaced =
      file("qs.txt", "\"atom id\" \"pos x\" \"pos y\" \"pos z\"\n\"a\" 0 0 0\n\"b\" \"1\" 0 0\n");
  expect_pairs({spaced, "--columns", "pos x,pos y,pos z"}, xyz, 3, 2);
}

// ---- 8. Rows with more (or fewer) fields than the first ----

TEST_F(Readers, RaggedRowsAreRefused) {
  expect_failure(
      {"pairs", file("ragged2.txt", "1 2\n4 5 6\n"), "-r", "1"}, kInput,
      {"ragged2.txt:2:5:", "the line has 3 fields", "the first data line (line 1) has 2"});
  expect_failure(
      {"pairs", file("ragged3.txt", "# c\n1 2 3\n4 5 6 7 8\n"), "-r", "1"}, kInput,
      {"ragged3.txt:3:7:", "the line has 5 fields", "the first data line (line 2) has 3"});
  expect_failure({"pairs", file("ragged.csv", "x,y,z,m\n1,2,3,4\n5,6,7\n"), "-r", "1"}, kInput,
                 {"ragged.csv:3:6:", "the line has 3 fields", "the header row (line 1) has 4"});
  expect_failure({"pairs", file("trailing.csv", "1,2,3\n4,5,6,\n"), "-r", "1"}, kInput,
                 {"trailing.csv:2:7:", "the line has 4 fields"});
}

TEST_F(Readers, ExtraFieldsAreIgnoredWithColumnsOrDim) {
  const std::string ragged = file("ragged.txt", "1 2 3\n4 5 6 7\n1 2 4 8 9\n");
  const std::vector<double> xyz = {1, 2, 3, 4, 5, 6, 1, 2, 4};
  expect_pairs({ragged, "--columns", "1,2,3"}, xyz, 3, 1);
  expect_pairs({ragged, "--dim", "3"}, xyz, 3, 1);
  expect_pairs({ragged, "--dim", "2"}, {1, 2, 4, 5, 1, 2}, 2, 1);
}

}  // namespace
