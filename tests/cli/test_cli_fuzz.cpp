// Damaged inputs of every format. test_cli_errors provokes each error on purpose; this test
// throws random damage at the readers instead: a bit flipped, a byte set to a character the
// parsers branch on, the file cut short, a span deleted or repeated, a run of 9s put in place of
// a digit near the start (a header's counts, an array's shape). Whatever the damage, the tool
// must either read the file and answer exactly (the same counts as its brute-force engine gives
// on the same file: values a flipped bit made huge or tiny are the engine's hard cases) or
// refuse it: exit status 3 (input) or 2 (usage: the damage made the columns ambiguous, or a
// value so large that radius 1 would need more than 2^30 cells along an axis), one message
// starting "spatialhash: error: " (for input errors, naming the file), nothing on standard
// output, and no output file left. Never a crash, a sanitizer report, a hang, or a large
// allocation. Each format's mutants come from a fixed seed, and a failure prints the mutant's
// recipe.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cli_inputs.hpp"
#include "sanitized_build.hpp"

namespace {

using namespace clitest;

constexpr int kUsage = 2, kInput = 3;
constexpr int kMutantsPerFormat = kSanitizedBuild ? 10 : 30;  // runs ~7x longer sanitized
/// Seconds a run may take before it counts as a hang (an undamaged one takes milliseconds).
constexpr unsigned kTimeoutSeconds = 60;

/// A damaged copy of a file and what was done to it.
struct Mutant {
  std::string bytes;
  std::string recipe;
};

Mutant mutate(const std::string& original, std::mt19937_64& rng) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::size_t size = original.size();
  Mutant m{original, ""};
  switch (pick(6)) {
    case 0: {
      const std::size_t at = pick(size);
      const auto bit = static_cast<int>(pick(8));
      m.bytes[at] = static_cast<char>(m.bytes[at] ^ (1 << bit));
      m.recipe = "bit " + std::to_string(bit) + " of byte " + std::to_string(at) + " flipped";
      break;
    }
    case 1: {
      static constexpr char kSpecial[] = {'\0', '\n', '\r', ',',    ' ',    '\t',  '-', '+',
                                          '.',  'e',  'E',  'n',    'i',    '#',   '9', '0',
                                          '\'', '(',  ')',  '\x7f', '\x80', '\xff'};
      const std::size_t at = pick(size);
      const char c = kSpecial[pick(sizeof kSpecial)];
      m.bytes[at] = c;
      m.recipe =
          "byte " + std::to_string(at) + " set to " + std::to_string(static_cast<unsigned char>(c));
      break;
    }
    case 2: {
      const std::size_t keep = pick(size);
      m.bytes.resize(keep);
      m.recipe = "cut to " + std::to_string(keep) + " bytes";
      break;
    }
    case 3:
    case 4: {
      const std::size_t at = pick(size);
      const std::size_t length = 1 + pick(std::min<std::size_t>(32, size - at));
      if (pick(2) == 0) {
        m.bytes.erase(at, length);
        m.recipe = std::to_string(length) + " bytes deleted at " + std::to_string(at);
      } else {
        m.bytes.insert(at, original, at, length);
        m.recipe = std::to_string(length) + " bytes repeated at " + std::to_string(at);
      }
      break;
    }
    default: {
      std::vector<std::size_t> digits;
      for (std::size_t i = 0; i < std::min<std::size_t>(size, 256); ++i) {
        if (original[i] >= '0' && original[i] <= '9') digits.push_back(i);
      }
      const std::size_t at = digits.empty() ? 0 : digits[pick(digits.size())];
      const std::size_t nines = 1 + pick(20);
      m.bytes.replace(at, 1, std::string(nines, '9'));
      m.recipe = "byte " + std::to_string(at) + " replaced by " + std::to_string(nines) + " 9s";
      break;
    }
  }
  return m;
}

class Fuzz : public ::testing::TestWithParam<Format> {};

TEST_P(Fuzz, DamagedInputIsReadExactlyOrRefused) {
  TempDir dir;
  const std::vector<double> points = make_points(3, 40, 4.0, 0.5, 11);
  const Written written = write_input(dir, GetParam(), points, 3);
  const bool from_stdin = !written.stdin_file.empty();
  const std::string input = from_stdin ? written.stdin_file : written.args.front();
  const std::string named = from_stdin ? "<stdin>" : std::filesystem::path(input).filename();
  const std::string original = slurp(input);
  const std::string out = dir.file("counts.npy"), oracle = dir.file("oracle.npy");
  const auto counts_args = [&](const std::string& to, bool brute_force) {
    std::vector<std::string> args = {"counts"};
    args.insert(args.end(), written.args.begin(), written.args.end());
    args.insert(args.end(), {"-r", "1", "-q", "-o", to});
    if (brute_force) args.insert(args.end(), {"--engine", "brute_force", "--threads", "1"});
    return args;
  };
  {
    const Result undamaged = run(counts_args(out, false), written.stdin_file);
    ASSERT_EQ(undamaged.exit_code, 0) << undamaged.err;
    std::filesystem::remove(out);
  }
  const std::size_t files = dir.entries().size();
  std::mt19937_64 rng(0x5eedu + static_cast<unsigned>(GetParam()));
  int read = 0;
  for (int i = 0; i < kMutantsPerFormat; ++i) {
    const Mutant mutant = mutate(original, rng);
    SCOPED_TRACE(format_name(GetParam()) + ", mutant " + std::to_string(i) + ": " + mutant.recipe);
    write_file(input, mutant.bytes);
    const Result res = run(counts_args(out, false), written.stdin_file, 0, kTimeoutSeconds);
    if (res.exit_code == 0) {
      ++read;
      const Result ref = run(counts_args(oracle, true), written.stdin_file, 0, kTimeoutSeconds);
      ASSERT_EQ(ref.exit_code, 0) << ref.err;
      EXPECT_EQ(slurp(out), slurp(oracle)) << "the default engine disagrees with brute force";
      std::filesystem::remove(out);
      std::filesystem::remove(oracle);
    } else {
      EXPECT_TRUE(res.exit_code == kInput || res.exit_code == kUsage)
          << "exit status " << res.exit_code << "\n"
          << res.err;
      EXPECT_EQ(res.err.rfind("spatialhash: error: ", 0), 0u) << res.err;
      // One line, and for usage errors the line that points to --help.
      const std::string first_line = res.err.substr(0, res.err.find('\n') + 1);
      const std::string rest = res.err.substr(first_line.size());
      EXPECT_TRUE(rest.empty() || (res.exit_code == kUsage &&
                                   rest == "Run 'spatialhash counts --help' for usage.\n"))
          << res.err;
      if (res.exit_code == kInput) {
        EXPECT_NE(res.err.find(named), std::string::npos) << "the message lacks " << named;
      }
      EXPECT_EQ(res.out, "");
    }
    // Every input here is a few KB: no reader may allocate for a count it has not checked
    // (not under the sanitizers, whose shadow memory adds to every run's peak).
    if (!kSanitizedBuild) {
      EXPECT_LT(res.max_rss_kb, 128 * 1024) << "peak RSS " << res.max_rss_kb << " KB";
    }
    EXPECT_EQ(dir.entries().size(), files) << "a run left a file behind";
  }
  // How many mutants were read (and checked against brute force), in the test's XML report.
  RecordProperty("mutants_read", std::to_string(read));
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, Fuzz, ::testing::ValuesIn(all_formats()),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return format_name(info.param);
                         });

}  // namespace
