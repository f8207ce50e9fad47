// data/pairs.cpp: the pair filter and the split (rules in pairs.hpp).
#include "data/pairs.hpp"

#include <set>

#include "base/errors.hpp"

namespace ts::data {

namespace {

std::string_view trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\n\r");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\n\r") - a + 1);
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; }
    else return false;
    if (i + n >= s.size()) return false;  // the sequence runs past the end
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    // no overlong form, no surrogate, nothing past U+10FFFF
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

size_t words(std::string_view s) {
  size_t n = 0;
  bool in = false;
  for (char c : s) {
    if (c == ' ') in = false;
    else if (!in) { in = true; ++n; }
  }
  return n;
}

bool has_letter(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || static_cast<unsigned>((u | 0x20) - 'a') < 26u) return true;
  }
  return false;
}

}  // namespace

const char* split_name(Split s) {
  switch (s) {
    case Split::train: return "train";
    case Split::validation: return "validation";
    case Split::test: return "test";
  }
  return "?";
}

std::string english_key(std::string_view en) {
  std::string key;
  bool space = false;
  for (char c : trim(en)) {
    if (c == ' ') { space = true; continue; }
    if (space) key += ' ';
    space = false;
    key += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  return key;
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

Split split_of(std::string_view en) {
  const uint64_t bucket = fnv1a64(english_key(en)) % 100;
  return bucket < 80 ? Split::train : bucket < 90 ? Split::validation : Split::test;
}

const std::vector<std::string>& pair_rules() {
  static const std::vector<std::string> rules = {"plural",  "untranslated", "utf8",   "control",
                                                 "placeholder", "marker",   "option", "letters",
                                                 "words",   "copied",       "duplicate"};
  return rules;
}

std::string pair_refusal(std::string_view en_raw, std::string_view fr_raw) {
  const std::string_view en = trim(en_raw), fr = trim(fr_raw);
  if (fr.empty()) return "untranslated";
  if (!valid_utf8(en) || !valid_utf8(fr)) return "utf8";
  for (std::string_view s : {en, fr}) {
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "control";
  }
  for (std::string_view s : {en, fr})
    if (s.find('%') != std::string_view::npos) return "placeholder";
  for (std::string_view s : {en, fr})
    if (s.find_first_of("_&") != std::string_view::npos) return "marker";
  for (std::string_view s : {en, fr})
    if (!s.empty() && s[0] == '-') return "option";
  if (!has_letter(en) || !has_letter(fr)) return "letters";
  for (std::string_view s : {en, fr})
    if (words(s) < 4 || words(s) > 30) return "words";
  if (en == fr) return "copied";
  return "";
}

PairSet extract_pairs(const std::vector<MoCatalog>& catalogs) {
  PairSet set;
  std::set<std::pair<std::string, std::string>> seen;
  const std::vector<std::string>& rules = pair_rules();
  for (const MoCatalog& cat : catalogs) {
    std::string cs = cat.charset();
    for (char& c : cs) c = (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c;
    if (!cs.empty() && cs != "UTF-8" && cs != "ASCII" && cs != "US-ASCII" && cs != "CHARSET")
      throw FileError(cat.file + ": charset " + cat.charset() + ": the pairs are read as UTF-8 (recompile it with msgconv --to-code=UTF-8)");
    SourceCount count;
    const size_t slash = cat.file.find_last_of('/');
    count.source = slash == std::string::npos ? cat.file : cat.file.substr(slash + 1);
    for (const std::string& r : rules) count.refused.emplace_back(r, 0);
    auto refuse = [&](const std::string& rule) {
      for (auto& [r, n] : count.refused)
        if (r == rule) ++n;
    };
    for (const MoEntry& e : cat.entries) {
      ++count.entries;
      if (!e.msgid_plural.empty()) { refuse("plural"); continue; }
      const std::string_view fr = e.msgstr.empty() ? std::string_view() : std::string_view(e.msgstr[0]);
      const std::string why = pair_refusal(e.msgid, fr);
      if (!why.empty()) { refuse(why); continue; }
      std::string en_t(trim(e.msgid)), fr_t(trim(fr));
      if (!seen.emplace(en_t, fr_t).second) { refuse("duplicate"); continue; }
      ++count.kept;
      Split sp = split_of(en_t);
      set.pairs.push_back({std::move(en_t), std::move(fr_t), count.source, sp});
    }
    set.sources.push_back(std::move(count));
  }
  return set;
}

}  // namespace ts::data
