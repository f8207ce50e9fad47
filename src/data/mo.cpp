// data/mo.cpp: the GNU .mo reader (see mo.hpp for the format and the rules).
#include "data/mo.hpp"

#include <string_view>

#include "base/errors.hpp"
#include "data/io.hpp"

namespace ts::data {

namespace {

constexpr uint32_t kMagic = 0x950412de;
constexpr char kEot = '\x04';

struct Reader {
  const uint8_t* p;
  size_t size;
  bool big;
  const std::string& name;

  [[noreturn]] void fail(const std::string& what) const {
    throw FileError(name + ": not a valid GNU .mo catalog: " + what);
  }
  // the 32-bit word at byte `at` (the caller checked at + 4 <= size)
  uint32_t word(uint64_t at) const {
    const uint8_t* b = p + at;
    return big ? (uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3])
               : (uint32_t(b[3]) << 24 | uint32_t(b[2]) << 16 | uint32_t(b[1]) << 8 | b[0]);
  }
  // string i of the table at `table`, checked: in bounds and followed by its NUL
  std::string_view string(uint64_t table, uint32_t i, const char* which) const {
    const uint64_t at = table + 8ull * i;
    const uint32_t len = word(at), off = word(at + 4);
    if (uint64_t(off) + len + 1 > size)
      fail(std::string(which) + " string " + std::to_string(i) + " (offset " + std::to_string(off) +
           ", length " + std::to_string(len) + ") runs past the end of the file (" + std::to_string(size) +
           " bytes): truncated, or read in the wrong byte order");
    if (p[uint64_t(off) + len] != 0)
      fail(std::string(which) + " string " + std::to_string(i) + " at offset " + std::to_string(off) +
           " does not end with a NUL byte");
    return {reinterpret_cast<const char*>(p) + off, len};
  }
};

std::vector<std::string> split_nul(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t z = s.find('\0', start);
    out.emplace_back(s.substr(start, z == std::string_view::npos ? std::string_view::npos : z - start));
    if (z == std::string_view::npos) return out;
    start = z + 1;
  }
}

}  // namespace

std::string MoCatalog::charset() const {
  const size_t at = header.find("charset=");
  if (at == std::string::npos) return {};
  size_t end = at + 8;
  while (end < header.size() && header[end] != '\n' && header[end] != ';' && header[end] != ' ') ++end;
  return header.substr(at + 8, end - at - 8);
}

MoCatalog parse_mo(const uint8_t* bytes, size_t size, const std::string& name) {
  MoCatalog cat;
  cat.file = name;
  Reader r{bytes, size, false, name};
  if (size < 28) r.fail("only " + std::to_string(size) + " bytes, fewer than the 28 of its header");
  const uint32_t magic = r.word(0);
  if (magic == kMagic) {
    r.big = false;
  } else if (magic == 0xde120495) {
    r.big = true;
  } else {
    r.fail("the magic number is not 0x950412de in either byte order");
  }
  cat.big_endian = r.big;
  cat.revision = r.word(4);
  if ((cat.revision >> 16) > 1)
    r.fail("major revision " + std::to_string(cat.revision >> 16) + " (this reader knows 0 and 1)");
  const uint32_t n = r.word(8);
  const uint64_t orig = r.word(12), trans = r.word(16);
  for (const auto& [table, which] : {std::pair{orig, "original"}, std::pair{trans, "translation"}}) {
    if (table + 8ull * n > size)
      r.fail(std::string("the table of ") + which + " strings (" + std::to_string(n) + " entries at offset " +
             std::to_string(table) + ") runs past the end of the file (" + std::to_string(size) +
             " bytes): truncated, or read in the wrong byte order");
  }
  cat.entries.reserve(n);
  uint64_t total = 0;  // the bytes of every string together: at most the file's size
  for (uint32_t i = 0; i < n; ++i) {
    const std::string_view id = r.string(orig, i, "original");
    const std::string_view tr = r.string(trans, i, "translation");
    // a file whose tables point many entries at one long string would make its reader copy it
    // again and again (gigabytes from a megabyte): each string's bytes may be counted once
    total += id.size() + tr.size();
    if (total > size)
      r.fail("its strings add up to more bytes than the file has (" + std::to_string(size) +
             "): the tables point several entries at the same bytes");
    MoEntry e;
    std::string_view key = id;
    if (const size_t eot = key.find(kEot); eot != std::string_view::npos) {
      e.context = std::string(key.substr(0, eot));
      key = key.substr(eot + 1);
    }
    const std::vector<std::string> ids = split_nul(key);
    if (ids.size() > 2)
      r.fail("original string " + std::to_string(i) + " has " + std::to_string(ids.size()) +
             " NUL-separated parts (a msgid and at most one msgid_plural)");
    e.msgid = ids[0];
    if (ids.size() == 2) e.msgid_plural = ids[1];
    e.msgstr = split_nul(tr);
    if (e.msgid.empty() && e.context.empty() && ids.size() == 1) {
      cat.header = std::string(tr);  // the header entry, kept apart
      continue;
    }
    cat.entries.push_back(std::move(e));
  }
  return cat;
}

MoCatalog read_mo(const std::string& path) {
  const std::string bytes = read_file(path, size_t(256) << 20);
  return parse_mo(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path);
}

}  // namespace ts::data
