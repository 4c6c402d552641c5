// memory_in_use(): the bytes a process holds in what spatialhash allocates from, as the benchmark's
// "index B/pt" column and tests/test_index_memory.cpp measure them: the C library's heap bytes
// allocated and not freed (glibc's mallinfo2: every arena, and the blocks malloc maps), plus the
// anonymous mappings advised to huge pages (/proc/self/smaps, VmFlags "hg"): the library's mapped
// blocks (spatialhash/mapped_blocks.hpp), which malloc does not see. A heap range the library
// advises (sized_for_overwrite on an array of 4 MiB or more from operator new: results under
// 32 MiB) counts twice while it lives; across a build, what the index keeps is its layout, whose
// arrays that size are mapped blocks.
#pragma once

#include <malloc.h>

#include <fstream>
#include <sstream>
#include <string>

namespace bench {

/// Bytes of anonymous mappings advised to huge pages, or -1 where /proc/self/smaps is missing.
inline double huge_page_advised_bytes() {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return -1.0;
  double total = 0.0, size = 0.0;
  bool anonymous = false;
  std::string line;
  while (std::getline(smaps, line)) {
    if (line.rfind("VmFlags:", 0) == 0) {
      if (anonymous && (line + " ").find(" hg ") != std::string::npos) total += size;
      continue;
    }
    // A mapping's first line: "start-end perms offset dev inode [path]" (the key lines have a
    // colon right after their first word).
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    if (!(fields >> range >> perms >> offset >> device >> inode) || range.back() == ':') continue;
    fields >> path;
    const auto dash = range.find('-');
    if (dash == std::string::npos) continue;
    const unsigned long long start = std::stoull(range.substr(0, dash), nullptr, 16);
    const unsigned long long end = std::stoull(range.substr(dash + 1), nullptr, 16);
    size = static_cast<double>(end - start);
    anonymous = path.empty() && inode == "0";
  }
  return total;
}

/// Heap bytes in use plus huge-page-advised anonymous mappings; -1 where the C library cannot
/// say (not glibc 2.33 or later).
inline double memory_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  const double mapped = huge_page_advised_bytes();
  return static_cast<double>(info.uordblks) + static_cast<double>(info.hblkhd) +
         (mapped > 0.0 ? mapped : 0.0);
#else
  return -1.0;
#endif
}

}  // namespace bench
