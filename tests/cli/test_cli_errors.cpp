// Every error path of the tool: the message names what and where, the exit status gives the
// class (2 usage, 3 input, 4 output), and a failed run leaves no output file behind.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_expect.hpp"
#include "cli_inputs.hpp"
#include "cli_oracle.hpp"

namespace {

using namespace clitest;

constexpr int kUsage = 2, kInput = 3, kOutput = 4;

class Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    points = make_points(3, 50, 5.0, 0.5, 7);
    good = dir.file("good.csv");
    write_file(good, delimited(points, 3, ',', {"x", "y", "z"}));
  }
  std::string file(const std::string& name, const std::string& content) {
    write_file(dir.file(name), content);
    return dir.file(name);
  }
  TempDir dir;
  std::vector<double> points;
  std::string good;
};

// ---- usage (2) ----

TEST_F(Errors, UsageMissingRadius) {
  expect_failure({"pairs", good}, kUsage, {"--radius is required", "spatialhash pairs --help"});
}

TEST_F(Errors, UsageBadRadius) {
  expect_failure({"pairs", good, "-r", "-1"}, kUsage, {"radius", "> 0", "-1"});
  expect_failure({"pairs", good, "-r", "0"}, kUsage, {"radius", "> 0"});
  expect_failure({"pairs", good, "-r", "abc"}, kUsage, {"abc"});
  // CLI11 alone would read these as 0 and inf.
  expect_failure({"pairs", good, "-r", ""}, kUsage, {"--radius", "empty value"});
  expect_failure({"lists", good, "-r", "1e400"}, kUsage,
                 {"--radius", "'1e400' is beyond double's range"});
  expect_failure({"counts", good, "-r", "1e-400"}, kUsage,
                 {"--radius", "'1e-400' is below double's range"});
  // Every floating-point option goes through the same check.
  expect_failure({"stats", good, "--target-neighbors", ""}, kUsage,
                 {"--target-neighbors", "empty value"});
  expect_failure({"generate", "--lattice", "2", "--jitter", "1e400"}, kUsage,
                 {"--jitter", "'1e400' is beyond double's range"});
}

TEST_F(Errors, UsageUnknownEngineListsTheChoices) {
  expect_failure({"pairs", good, "-r", "1", "--engine", "kdtree"}, kUsage,
                 {"unknown engine 'kdtree'", "cell_list", "brute_force"});
}

TEST_F(Errors, UsageNoOrUnknownCommandOrOption) {
  expect_failure({}, kUsage, {"subcommand"});
  expect_failure({"neighbours", good}, kUsage, {"neighbours"});
  expect_failure({"pairs", good, "-r", "1", "--fast"}, kUsage, {"--fast"});
  expect_failure({"pairs", good, "-r", "1", "--dim", "4"}, kUsage, {"--dim"});
}

TEST_F(Errors, UsageOutputFormats) {
  expect_failure({"pairs", good, "-r", "1", "-o", dir.file("out.dat")}, kUsage,
                 {"out.dat", ".csv, .tsv, .npy or .npz"});
  expect_failure({"lists", good, "-r", "1", "-o", dir.file("l.npy")}, kUsage, {".npz"});
  expect_failure({"pairs", good, "-r", "1", "--distances", "-o", dir.file("p.npy")}, kUsage,
                 {"--distances", ".npz"});
  expect_failure({"stats", good, "-r", "1", "-o", dir.file("s.csv")}, kUsage, {".txt"});
  EXPECT_EQ(dir.entries().size(), 1u) << "only good.csv may exist";
}

TEST_F(Errors, UsageOutputOverTheInput) {
  expect_failure({"pairs", good, "-r", "1", "-o", good}, kUsage, {"is the input file"});
  EXPECT_EQ(slurp(good), delimited(points, 3, ',', {"x", "y", "z"}));
}

TEST_F(Errors, UsageAmbiguousColumns) {
  const std::string four = file("four.txt", "1 2 3 4\n5 6 7 8\n");
  expect_failure({"pairs", four, "-r", "1"}, kUsage,
                 {"four.txt", "4 columns", "--columns", "--dim"});
}

TEST_F(Errors, UsageUnknownColumnNamesTheHeader) {
  expect_failure({"pairs", good, "-r", "1", "--columns", "x,y,w"}, kUsage,
                 {"no column \"w\"", "columns: x, y, z"});
  const std::string plain = file("plain.csv", "1,2,3\n");
  expect_failure({"pairs", plain, "-r", "1", "--columns", "x,y"}, kUsage, {"no header row"});
  expect_failure({"pairs", good, "-r", "1", "--columns", "0,1"}, kUsage, {"numbered from 1"});
  expect_failure({"pairs", good, "-r", "1", "--columns", "x,y", "--dim", "3"}, kUsage, {"--dim 3"});
}

TEST_F(Errors, UsageDimThreeWithoutZ) {
  const std::string xy = file("xy.csv", "x,y,mass\n1,2,3\n");
  expect_failure({"pairs", xy, "-r", "1", "--dim", "3"}, kUsage, {"no z column"});
}

TEST_F(Errors, UsageQueryPositions) {
  expect_failure({"query", good, "-r", "1"}, kUsage, {"--at", "--queries"});
  expect_failure({"query", good, "-r", "1", "--at", "1,2"}, kUsage, {"2 coordinates", "3-D"});
  expect_failure({"query", good, "-r", "1", "--at", "1,x,3"}, kUsage, {"--at 1,x,3", "\"x\""});
}

TEST_F(Errors, UsageStatsNeedsARadius) {
  expect_failure({"stats", good}, kUsage, {"-r", "--target-neighbors"});
  expect_failure({"stats", good, "--target-neighbors", "-3"}, kUsage, {"--target-neighbors"});
}

TEST_F(Errors, UsageRadiusTooSmallForTheExtent) {
  const std::string wide = file("wide.csv", "0,0,0\n1e9,1e9,1e9\n");
  expect_failure({"pairs", wide, "-r", "1e-9"}, kUsage, {"too small"});
}

// ---- input (3) ----

TEST_F(Errors, InputMissingFileOrDirectory) {
  expect_failure({"pairs", dir.file("nope.csv"), "-r", "1"}, kInput, {"nope.csv", "No such file"});
  expect_failure({"pairs", dir.path().string(), "-r", "1"}, kInput, {"directory"});
}

TEST_F(Errors, InputMalformedTextNamesFileLineAndColumn) {
  const std::string bad = file("bad.csv", "x,y,z\n1,2,3\n4, 5x ,6\n");
  expect_failure({"pairs", bad, "-r", "1"}, kInput,
                 {"bad.csv:3:4:", "column 2 (\"y\")", "expected a number, found \"5x\""});
  const std::string empty_field = file("gap.csv", "1,2,3\n4,,6\n");
  expect_failure({"pairs", empty_field, "-r", "1"}, kInput, {"gap.csv:2:3:", "empty field"});
  const std::string short_line = file("short.tsv", "x\ty\tz\n1\t2\t3\n4\t5\n");
  expect_failure({"pairs", short_line, "-r", "1"}, kInput,
                 {"short.tsv:3:", "column 3 (\"z\")", "only 2 fields"});
}

TEST_F(Errors, InputHeaderAndDataDisagree) {
  const std::string odd = file("odd.txt", "# comment\nx y z mass\n1 2 3\n");
  expect_failure({"pairs", odd, "-r", "1"}, kInput,
                 {"odd.txt:3:", "header row has 4 fields", "first data row has 3", "--format"});
}

TEST_F(Errors, InputNonFiniteValuesNameTheirLine) {
  const std::string nan = file("nan.txt", "1 2 3\n4 5 6\n7 NaN 9\n");
  expect_failure({"pairs", nan, "-r", "1"}, kInput, {"nan.txt:3:3:", "column 2", "NaN"});
  const std::string inf = file("inf.csv", "x,y,z\n1,2,-inf\n");
  expect_failure({"pairs", inf, "-r", "1"}, kInput, {"inf.csv:2:5:", "infinite"});
  const std::string huge = file("huge.csv", "x,y,z\n1,2,1e39\n");
  expect_failure({"pairs", huge, "-r", "1", "--precision", "float"}, kInput,
                 {"huge.csv:2:5:", "out of range for float", "--precision double"});
  const std::string huger = file("huger.csv", "x,y,z\n1,2,1e400\n");
  expect_failure({"pairs", huger, "-r", "1"}, kInput, {"huger.csv:2:5:", "out of range"});
  expect_failure({"pairs", "-", "-r", "1"}, kInput, {"<stdin>:2:", "NaN"},
                 file("stdin.txt", "1,2,3\n1,nan,3\n"));
}

TEST_F(Errors, InputUnsupportedPlyListsTheProperties) {
  const std::string ints = file(
      "ints.ply",
      "ply\nformat ascii 1.0\nelement vertex 1\nproperty int x\nproperty int y\nproperty int z\n"
      "property uchar red\nend_header\n1 2 3 4\n");
  expect_failure({"pairs", ints, "-r", "1"}, kInput,
                 {"unsupported PLY", "int x, int y, int z, uchar red", "float or double"});
  const std::string faces = file("faces.ply",
                                 "ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int "
                                 "vertex_indices\nend_header\n");
  expect_failure({"pairs", faces, "-r", "1"}, kInput, {"no \"vertex\" element", "face"});
  const std::string bare = file("bare.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty\n");
  expect_failure({"pairs", bare, "-r", "1"}, kInput, {"bare.ply:4:", "property TYPE NAME"});
  const std::string format = file("fmt.ply", "ply\nformat binary_middle_endian 1.0\nend_header\n");
  expect_failure({"pairs", format, "-r", "1"}, kInput, {"fmt.ply:2:", "binary_middle_endian"});
}

TEST_F(Errors, InputTruncatedPly) {
  std::string ply = ply_bytes(points, 3, Ply::little, false);
  ply.resize(ply.size() - 10);
  expect_failure({"pairs", file("cut.ply", ply), "-r", "1"}, kInput,
                 {"cut.ply", "ends after 49 of 50 \"vertex\" records"});
}

TEST_F(Errors, InputNonFinitePlyAndNpyNameTheRow) {
  std::vector<double> bad = points;
  bad[7 * 3 + 2] = std::numeric_limits<double>::quiet_NaN();
  expect_failure({"pairs", file("nan.ply", ply_bytes(bad, 3, Ply::big, false)), "-r", "1"}, kInput,
                 {"nan.ply", "vertex 7", "z is NaN"});
  bad[7 * 3 + 2] = std::numeric_limits<double>::infinity();
  expect_failure({"pairs", file("inf.npy", npy_bytes(bad, 50, 3, "<f8", true)), "-r", "1"}, kInput,
                 {"inf.npy", "row 7", "z is infinite"});
}

TEST_F(Errors, InputWrongNpyShapeOrDtype) {
  std::vector<double> values(40, 1.0);
  expect_failure({"pairs", file("four.npy", npy_bytes(values, 10, 4, "<f8", false)), "-r", "1"},
                 kInput, {"four.npy", "shape (10, 4)", "(n, 2) or (n, 3)"});
  expect_failure({"pairs", file("flat.npy", npy_bytes(values, 40, 0, "<f8", false)), "-r", "1"},
                 kInput, {"flat.npy", "shape (40,)"});
  expect_failure({"pairs", file("int.npy", npy_bytes(values, 20, 2, "<i8", false)), "-r", "1"},
                 kInput, {"int.npy", "dtype '<i8'", "shape (20, 2)", "float32 or float64"});
  std::string cut = npy_bytes(values, 20, 2, "<f8", false);
  cut.resize(cut.size() - 8);
  expect_failure({"pairs", file("cut.npy", cut), "-r", "1"}, kInput,
                 {"cut.npy", "truncated", "320 bytes"});
  expect_failure({"pairs", file("junk.npy", "not an array"), "-r", "1"}, kInput,
                 {"junk.npy", "not a valid .npy"});
}

TEST_F(Errors, InputOtherFiles) {
  expect_failure({"pairs", file("short.xyz", "5\ncomment\nH 1 2 3\n"), "-r", "1"}, kInput,
                 {"short.xyz", "1 of the 5 atoms"});
  expect_failure({"pairs", file("p.csv.gz", std::string("\x1f\x8b\x08\x00", 4)), "-r", "1"}, kInput,
                 {"gzip"});
  expect_failure({"pairs", file("blank.csv", "\n# nothing\n"), "-r", "1"}, kInput,
                 {"no data rows", "--dim"});
}

// ---- output (4) and what a failure leaves behind ----

TEST_F(Errors, OutputDirectoryMissingOrATarget) {
  expect_failure({"pairs", good, "-r", "1", "-o", dir.file("no/such/dir/p.npy")}, kOutput,
                 {"no/such/dir/p.npy", "No such file or directory"});
  std::filesystem::create_directory(dir.file("sub.csv"));
  expect_failure({"pairs", good, "-r", "1", "-o", dir.file("sub.csv")}, kOutput,
                 {"sub.csv", "is a directory"});
}

TEST_F(Errors, FailedInputLeavesNoOutputAndKeepsAnOldOne) {
  const std::string bad = file("bad.csv", "1,2,3\n4,x,6\n");
  expect_failure({"pairs", bad, "-r", "1", "-o", dir.file("new.npy")}, kInput, {"bad.csv:2:3:"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("new.npy")));
  write_file(dir.file("old.npy"), "previous result");
  expect_failure({"pairs", bad, "-r", "1", "-o", dir.file("old.npy")}, kInput, {"bad.csv:2:3:"});
  EXPECT_EQ(slurp(dir.file("old.npy")), "previous result");
  auto names = dir.entries();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"bad.csv", "good.csv", "old.npy"}))
      << "a temporary file was left behind";
}

TEST_F(Errors, WriteFailureMidwayLeavesNoFile) {
  // A file size limit makes the writes fail part way (EFBIG), like a full disk.
  const std::vector<double> many = make_points(3, 3000, 6.0, 1.0, 8);
  const std::string input = dir.file("many.npy");
  write_file(input, npy_bytes(many, 3000, 3, "<f8", false));
  // Both ways of producing results: built in memory, then written (default --max-buffer), and
  // streamed from the library's callbacks or row blocks while searching (--max-buffer 0).
  for (const char* buffer : {"1024", "0"}) {
    for (const std::string command : {"pairs", "lists"}) {
      for (const std::string name : {"p.npy", "p.npz", "p.csv"}) {
        if (command == "lists" && name == "p.npy") continue;
        std::vector<std::string> args = {command,        input,  "-r", "1",
                                         "--max-buffer", buffer, "-o", dir.file(name)};
        if (name != "p.npy") args.push_back("--distances");  // .npz: a spilled second array too
        const Result res = run(args, "", 100000);
        const std::string what = command + " -o " + name + " --max-buffer " + buffer;
        EXPECT_EQ(res.exit_code, kOutput) << what << ": " << res.err;
        EXPECT_NE(res.err.find("cannot write"), std::string::npos) << what << ": " << res.err;
        EXPECT_NE(res.err.find(name), std::string::npos) << what << ": " << res.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file(name))) << what;
      }
    }
  }
  auto names = dir.entries();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"good.csv", "many.npy"}));
}

}  // namespace
