// CRC-32 (the zip/PNG polynomial 0xEDB88320), for the .npz writer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spatialhash::cli {

/// Continues a CRC-32 over `size` more bytes: crc32_update(crc32_update(0, a), b) is the CRC of
/// a followed by b. Start from 0.
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size);

/// The CRC of a followed by b, from crc(a), crc(b) and the length of b, without the bytes. Lets
/// the zip writer patch an entry's first bytes after streaming the rest.
std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b);

}  // namespace spatialhash::cli
