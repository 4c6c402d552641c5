// Stored zip entries with ZIP64 fields (see zip_writer.hpp). Field layouts follow PKWARE's
// APPNOTE.TXT: local header 4.3.7, central directory 4.3.12, ZIP64 records 4.3.14-4.3.15 and the
// ZIP64 extra field 4.5.3.
#include "zip_writer.hpp"

#include "crc32.hpp"
#include "errors.hpp"

namespace spatialhash::cli {

namespace {

constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint16_t kVersion = 45;      // 4.5: ZIP64
constexpr std::uint16_t kDosDate = 0x0021;  // 1980-01-01: fixed, so outputs are reproducible
constexpr std::uint32_t kMax32 = 0xFFFFFFFFu;
constexpr std::size_t kLocalFixed = 30;
constexpr std::size_t kZip64Extra = 20;

/// Little-endian field serialization.
class Bytes {
 public:
  Bytes& u16(std::uint16_t v) {
    for (int i = 0; i < 2; ++i) data_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  Bytes& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) data_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  Bytes& u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) data_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  Bytes& text(std::string_view s) {
    data_ += s;
    return *this;
  }
  const std::string& str() const { return data_; }

 private:
  std::string data_;
};

}  // namespace

void ZipWriter::begin_entry(const std::string& name, std::size_t deferred) {
  current_ = Entry{name, out_.position(), 0, 0};
  deferred_ = deferred;
  tail_crc_ = 0;
  Bytes header;
  header.u32(kLocalSignature).u16(kVersion).u16(0).u16(0).u16(0).u16(kDosDate);
  header.u32(0).u32(kMax32).u32(kMax32);  // CRC patched later; sizes live in the ZIP64 field
  header.u16(static_cast<std::uint16_t>(name.size())).u16(kZip64Extra).text(name);
  header.u16(1).u16(16).u64(0).u64(0);  // ZIP64 extra: uncompressed, compressed size
  out_.write(header.str());
  const std::string zeros(deferred, '\0');
  out_.write(zeros);
  current_.size = deferred;
}

void ZipWriter::write(const void* data, std::size_t size) {
  tail_crc_ = crc32_update(tail_crc_, data, size);
  out_.write(data, size);
  current_.size += size;
}

void ZipWriter::end_entry(std::string_view deferred_bytes) {
  if (deferred_bytes.size() != deferred_) {
    throw OutputError("internal error: zip entry prefix has the wrong size");
  }
  const std::uint64_t data_offset =
      current_.header_offset + kLocalFixed + current_.name.size() + kZip64Extra;
  current_.crc = crc32_combine(crc32_update(0, deferred_bytes.data(), deferred_bytes.size()),
                               tail_crc_, current_.size - deferred_);
  out_.write_at(data_offset, deferred_bytes);
  out_.write_at(current_.header_offset + 14, Bytes().u32(current_.crc).str());
  out_.write_at(data_offset - 16, Bytes().u64(current_.size).u64(current_.size).str());
  entries_.push_back(current_);
}

void ZipWriter::finish() {
  const std::uint64_t directory_offset = out_.position();
  for (const Entry& e : entries_) {
    const bool big_size = e.size >= kMax32;
    const bool big_offset = e.header_offset >= kMax32;
    Bytes extra;
    if (big_size) extra.u64(e.size).u64(e.size);
    if (big_offset) extra.u64(e.header_offset);
    Bytes header;
    header.u32(kCentralSignature).u16(kVersion | (3u << 8)).u16(kVersion).u16(0).u16(0);
    header.u16(0).u16(kDosDate).u32(e.crc);
    header.u32(big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
    header.u32(big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
    header.u16(static_cast<std::uint16_t>(e.name.size()));
    header.u16(static_cast<std::uint16_t>(extra.str().empty() ? 0 : extra.str().size() + 4));
    header.u16(0).u16(0).u16(0).u32(0100644u << 16);
    header.u32(big_offset ? kMax32 : static_cast<std::uint32_t>(e.header_offset));
    header.text(e.name);
    if (!extra.str().empty()) {
      header.u16(1).u16(static_cast<std::uint16_t>(extra.str().size())).text(extra.str());
    }
    out_.write(header.str());
  }
  const std::uint64_t directory_size = out_.position() - directory_offset;
  const std::uint64_t count = entries_.size();
  const bool zip64 = directory_offset >= kMax32 || directory_size >= kMax32 || count >= 0xFFFF;
  if (zip64) {
    const std::uint64_t record_offset = out_.position();
    Bytes record;
    record.u32(kZip64EndSignature).u64(44).u16(kVersion | (3u << 8)).u16(kVersion);
    record.u32(0).u32(0).u64(count).u64(count).u64(directory_size).u64(directory_offset);
    record.u32(kZip64LocatorSignature).u32(0).u64(record_offset).u32(1);
    out_.write(record.str());
  }
  Bytes end;
  const auto count16 = static_cast<std::uint16_t>(zip64 ? 0xFFFF : count);
  end.u32(kEndSignature).u16(0).u16(0).u16(count16).u16(count16);
  end.u32(zip64 ? kMax32 : static_cast<std::uint32_t>(directory_size));
  end.u32(zip64 ? kMax32 : static_cast<std::uint32_t>(directory_offset));
  end.u16(0);
  out_.write(end.str());
}

}  // namespace spatialhash::cli
