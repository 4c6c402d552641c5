// The CPU speed probe (cpu_speeds.hpp).
#include "cpu_speeds.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <system_error>
#include <thread>

namespace bench {

namespace {

/// Milliseconds for `chain` dependent additions on the calling thread.
double time_chain(long chain) {
  const auto start = std::chrono::steady_clock::now();
  long x = 0;
  for (long i = 0; i < chain; ++i) {
    // One addition per step that the compiler can neither fold nor vectorize: x must sit in a
    // register, changed by the empty statement as far as the compiler knows, at every step.
    x += 1;
    asm volatile("" : "+r"(x));
  }
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

}  // namespace

double CpuSpeeds::bound() const {
  return std::accumulate(relative.begin(), relative.end(), 0.0);
}

bool CpuSpeeds::unequal() const {
  return std::any_of(relative.begin(), relative.end(), [](double s) { return s < 0.85; });
}

double CpuSpeeds::slowest() const {
  return relative.empty() ? 0.0 : *std::min_element(relative.begin(), relative.end());
}

std::string CpuSpeeds::describe() const {
  if (relative.empty()) return "";
  char text[32];
  std::string out;
  const auto add = [&](double value) {
    std::snprintf(text, sizeof text, "%s%.2f", out.empty() ? "" : " ", value);
    out += text;
  };
  if (relative.size() <= 16) {
    for (const double s : relative) add(s);
    return out;
  }
  std::vector<double> sorted = relative;
  std::sort(sorted.begin(), sorted.end());
  out = "slowest";
  add(sorted.front());
  out += ", median";
  add(sorted[sorted.size() / 2]);
  out += ", fastest";
  add(sorted.back());
  return out;
}

CpuSpeeds measure_cpu_speeds(long chain, int rounds) {
  CpuSpeeds speeds;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return speeds;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) speeds.cpu.push_back(c);
  }
  const std::size_t count = speeds.cpu.size();
  if (count == 0) return {};
  std::vector<double> best(count, 0.0);
  std::atomic<bool> pinned_all = true;
  // Set when a thread could not be started: the others then stop waiting and time nothing.
  std::atomic<bool> abandoned = false;
  std::atomic<std::size_t> ready = 0;
  std::vector<std::thread> threads;
  threads.reserve(count);
  try {
    for (std::size_t i = 0; i < count; ++i) {
      threads.emplace_back([&, i] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(speeds.cpu[i], &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) pinned_all = false;
        // Every thread pinned before any starts timing, so that they all run at once.
        ready.fetch_add(1);
        while (ready.load() < count && !abandoned.load()) std::this_thread::yield();
        if (abandoned.load()) return;
        double fastest = time_chain(chain);
        for (int round = 1; round < rounds; ++round) {
          fastest = std::min(fastest, time_chain(chain));
        }
        best[i] = fastest;
      });
    }
  } catch (const std::system_error&) {
    abandoned = true;  // out of threads: no figures, and no thread left waiting
  }
  for (std::thread& t : threads) t.join();
  if (abandoned.load()) return {};
  const double top = *std::min_element(best.begin(), best.end());
  if (!pinned_all || !(top > 0.0)) return {};
  for (const double ms : best) speeds.relative.push_back(top / ms);
  return speeds;
}

}  // namespace bench
