// How fast each CPU runs for this process right now, relative to the fastest. On a virtual
// machine the virtual CPUs are threads of a host that other tenants share: on the development VM
// one of its two ran a fixed loop at 0.6 of the other's speed for several minutes (466-494
// against 279-285 ms; then both at 295-305 ms), which no load average showed (the guest's own
// load was near zero) and no steal counter reported (zero). Two threads can then run at most
// 1.6x one thread's speed, whatever the code does, and a 1-thread figure depends on which CPU its
// thread landed on.
#pragma once

#include <string>
#include <vector>

namespace bench {

/// The speed of each CPU this process may run on, as measured by measure_cpu_speeds().
struct CpuSpeeds {
  std::vector<int> cpu;          ///< the CPUs' numbers
  std::vector<double> relative;  ///< each one's speed over the fastest one's, in (0, 1]
  /// The most a run on every one of these CPUs can gain over one thread on the fastest: the sum
  /// of the relative speeds (the CPU count when they are equal). 0 when nothing was measured.
  double bound() const;
  /// Whether some CPU runs below 0.85 of the fastest (a 1-thread figure then depends on where
  /// its thread ran, and speed-ups over threads fall short of the thread count).
  bool unequal() const;
  /// "1.00 0.61" (every CPU up to 16, else the slowest, median and fastest); "" if none.
  std::string describe() const;
  /// The slowest CPU's relative speed; 0 when nothing was measured.
  double slowest() const;
};

/// The dependent additions the probe times by default (about 30 ms at 3.5 GHz), and a quick
/// probe's (about 10 ms).
inline constexpr long kChain = 100'000'000;
inline constexpr long kQuickChain = 30'000'000;

/// Times a chain of `chain` dependent integer additions on one thread pinned to each allowed CPU,
/// all of them at once (as a run on every core finds them), `rounds` times, and keeps each CPU's
/// fastest. Returns nothing on a system that does not let threads be pinned or started. Starts
/// and joins plain threads only: safe before fork().
CpuSpeeds measure_cpu_speeds(long chain = kChain, int rounds = 3);

}  // namespace bench
