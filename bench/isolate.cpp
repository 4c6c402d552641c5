// Fork, pipe and wait4: the child runs the contender and writes its Measurement into a pipe; the
// parent reads it and takes the child's own rusage (ru_maxrss) from wait4.
#include "isolate.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace bench {

namespace {

/// Fixed-size header of the child's message, followed by ms[], per_item[] and the reason text.
struct Header {
  std::uint32_t ok = 0;
  std::uint32_t reps = 0;
  std::uint64_t total = 0;
  std::uint64_t fingerprint = 0;
  std::uint64_t items = 0;
  std::uint64_t reason_bytes = 0;
  double index_bytes = -1.0;
  CpuTime cpu;
};

double current_rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

double peak_rss_mib(const rusage& usage) {
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = write(fd, p, bytes);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    p += written;
    bytes -= static_cast<std::size_t>(written);
  }
  return true;
}

/// The child's side: run, serialize, exit without running any atexit handler or destructor of
/// the parent's objects.
[[noreturn]] void child_main(int fd, const std::function<Measurement()>& body, double timeout_s) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);                        // do not outlive an interrupted harness
  alarm(static_cast<unsigned>(std::max(1.0, timeout_s)));  // SIGALRM's default action kills us
  Header header;
  Measurement m;
  std::string reason;
  try {
    m = body();
    header.ok = 1;
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
    reason = "unknown exception";
  }
  header.reps = static_cast<std::uint32_t>(m.ms.size());
  header.total = m.digest.total;
  header.fingerprint = m.digest.fingerprint;
  header.items = m.digest.per_item.size();
  header.reason_bytes = reason.size();
  header.index_bytes = m.index_bytes;
  header.cpu = m.cpu;
  const bool sent =
      write_all(fd, &header, sizeof header) &&
      write_all(fd, m.ms.data(), m.ms.size() * sizeof(double)) &&
      write_all(fd, m.digest.per_item.data(), m.digest.per_item.size() * sizeof(std::uint32_t)) &&
      write_all(fd, reason.data(), reason.size());
  close(fd);
  _exit(sent ? 0 : 3);
}

/// Parses the child's message into `out`; false if it is truncated.
bool parse(const std::string& bytes, Outcome& out) {
  Header header;
  if (bytes.size() < sizeof header) return false;
  std::memcpy(&header, bytes.data(), sizeof header);
  const std::size_t need = sizeof header + header.reps * sizeof(double) +
                           header.items * sizeof(std::uint32_t) + header.reason_bytes;
  if (bytes.size() != need) return false;
  const char* p = bytes.data() + sizeof header;
  out.measurement.ms.resize(header.reps);
  std::memcpy(out.measurement.ms.data(), p, header.reps * sizeof(double));
  p += header.reps * sizeof(double);
  out.measurement.digest.per_item.resize(header.items);
  std::memcpy(out.measurement.digest.per_item.data(), p, header.items * sizeof(std::uint32_t));
  p += header.items * sizeof(std::uint32_t);
  out.measurement.digest.total = header.total;
  out.measurement.digest.fingerprint = header.fingerprint;
  out.measurement.index_bytes = header.index_bytes;
  out.measurement.cpu = header.cpu;
  out.reason.assign(p, header.reason_bytes);
  out.status = header.ok ? Status::ok : Status::error;
  return true;
}

Outcome run_here(const std::function<Measurement()>& body) {
  Outcome out;
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  try {
    out.measurement = body();
  } catch (const std::exception& e) {
    out.status = Status::error;
    out.reason = e.what();
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  out.peak_rss_mib = peak_rss_mib(after);
  out.own_rss_mib = peak_rss_mib(after) - peak_rss_mib(before);
  return out;
}

}  // namespace

std::string_view status_name(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::error:
      return "error";
    case Status::timeout:
      return "timeout";
    case Status::crashed:
      return "crashed";
  }
  return "?";
}

Outcome run_contender(const std::function<Measurement()>& body, bool isolate, double timeout_s) {
  if (!isolate) return run_here(body);
  Outcome out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.status = Status::error;
    out.reason = std::string("pipe failed: ") + std::strerror(errno);
    return out;
  }
  const double baseline = current_rss_mib();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    out.status = Status::error;
    out.reason = std::string("fork failed: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], body, timeout_s);
  }
  close(fds[1]);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int wstatus = 0;
  rusage usage{};
  while (wait4(pid, &wstatus, 0, &usage) < 0 && errno == EINTR) {
  }
  out.peak_rss_mib = peak_rss_mib(usage);
  out.own_rss_mib = std::max(0.0, out.peak_rss_mib - baseline);
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    out.status = sig == SIGALRM ? Status::timeout : Status::crashed;
    out.reason = sig == SIGALRM ? "over the " + std::to_string(static_cast<int>(timeout_s)) +
                                      " s limit (--timeout)"
                                : std::string("killed by signal ") + strsignal(sig);
    return out;
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || !parse(bytes, out)) {
    out.status = Status::crashed;
    out.reason = "child exited with status " + std::to_string(WEXITSTATUS(wstatus)) +
                 " and an incomplete result";
  }
  return out;
}

}  // namespace bench
