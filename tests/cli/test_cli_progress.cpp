// The progress bar appears when standard error is a terminal and a phase has run for the quiet
// period (one second; SPATIALHASH_PROGRESS_DELAY_MS=0 here, so the test does not depend on how
// fast the machine is). The tool runs under a pseudo-terminal (forkpty); its "searching" bar must
// be drawn, the run must succeed, and with --quiet no bar may appear.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

/// Runs argv under a new pseudo-terminal; returns everything it printed and its exit status.
std::pair<std::string, int> run_in_terminal(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("SPATIALHASH_PROGRESS_DELAY_MS", "0", 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  EXPECT_GT(pid, 0) << "forkpty failed";
  std::string output;
  char buffer[4096];
  for (;;) {
    const ssize_t got = read(master, buffer, sizeof buffer);
    if (got > 0) {
      output.append(buffer, static_cast<std::size_t>(got));
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has closed the terminal
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return {output, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST(Progress, BarIsDrawnOnATerminalForSlowPhases) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("spatialhash_progress_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string points = (dir / "points.npy").string(), out = (dir / "pairs.npy").string();
  ASSERT_EQ(std::system((std::string(SPATIALHASH_CLI_BINARY) +
                         " generate --lattice 32 --quiet -o " + points)
                            .c_str()),
            0);
  const auto [output, status] =
      run_in_terminal({SPATIALHASH_CLI_BINARY, "pairs", points, "-r", "1.5", "--engine",
                       "brute_force", "--threads", "1", "-o", out});
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("searching"), std::string::npos) << "no progress bar in:\n" << output;
  EXPECT_TRUE(std::filesystem::exists(out));
  // Control: the same run with --quiet draws no bar (only the absence of --quiet made it appear).
  const auto [quiet_output, quiet_status] =
      run_in_terminal({SPATIALHASH_CLI_BINARY, "pairs", points, "-r", "1.5", "--engine",
                       "brute_force", "--threads", "1", "--quiet", "-o", out});
  EXPECT_EQ(quiet_status, 0) << quiet_output;
  EXPECT_EQ(quiet_output.find("searching"), std::string::npos) << quiet_output;
  std::filesystem::remove_all(dir);
}

}  // namespace
