// data/mo.hpp: GNU gettext's compiled message catalogs (.mo), read by hand (introduced with the
// real-text data, issue 43: the French catalogs of data/mo/fr/ give English->French pairs).
//
// Format (GNU gettext manual, "The Format of GNU MO Files"): 32-bit words, in the byte order the
// magic number tells (0x950412de read as written: that order; read swapped: the other one)
//   0  magic            4  revision (major << 16 | minor; major 0 or 1)
//   8  N strings       12  O: offset of the table of original strings
//  16  T: offset of the table of translations   20 S, 24 H: the hash table (not used here)
// Each table holds N (length, offset) pairs; string i is `length` bytes at `offset`, followed by
// a NUL. An original is "context EOT msgid" when it has a context (EOT = byte 0x04) and
// "msgid NUL msgid_plural" for plural forms; a translation holds its plural forms NUL-separated.
// The entry whose msgid is empty (no context) is the header ("Content-Type: ...; charset=...").
//
// The reader trusts nothing: every offset and length is checked against the file's size before a
// byte is read (64-bit arithmetic, so no sum wraps), every string must end with its NUL, the
// strings together may not be longer than the file (no entries sharing bytes, so a small file
// cannot unfold into gigabytes), and a
// file that breaks a rule throws ts::FileError "FILE: what is wrong" (never a crash, never a read
// out of bounds: tests/fuzz/fuzz_mo.cpp). Revision 1's system-dependent strings are ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts::data {

struct MoEntry {
  std::string context;               // msgctxt, empty when none
  std::string msgid;                 // the English
  std::string msgid_plural;          // empty unless the message has plural forms
  std::vector<std::string> msgstr;   // the translation; one string per plural form
};

struct MoCatalog {
  std::string file;                  // the name errors use
  bool big_endian = false;           // the byte order its magic number gave
  uint32_t revision = 0;
  std::string header;                // the header entry's translation (empty if none)
  std::vector<MoEntry> entries;      // in file order, the header left out
  // the header's "charset=" value ("UTF-8"), empty when the header names none
  std::string charset() const;
};

// bytes -> catalog; `name` is what the error messages call the file
MoCatalog parse_mo(const uint8_t* bytes, size_t size, const std::string& name);
// a file -> catalog (a missing or unreadable file: ts::FileError / ts::FileIoError naming it)
MoCatalog read_mo(const std::string& path);

}  // namespace ts::data
