// i18n.cpp: see i18n.hpp.
//
// The course reads its compiled catalog (BUILD/locale/zh_CN/LC_MESSAGES/transformer-steps.mo,
// made by msgfmt from po/zh_CN.po) itself, instead of asking libintl's dgettext. libintl picks
// the catalog from the locale: LANGUAGE=zh_CN is honoured only when the LC_MESSAGES locale is
// not "C", and a minimal system has no locale but C and C.UTF-8. The course used to set
// LC_MESSAGES to C.UTF-8 for that reason; glibc 2.41 (Debian 13), like GNU gettext 0.22's
// libintl, treats C.UTF-8 as C and ignores LANGUAGE there, so --lang zh printed English.
// (Proved in a Debian 13 chroot: with the same catalog, setlocale(LC_MESSAGES, "C.UTF-8") +
// LANGUAGE=zh_CN translates under glibc 2.36 and returns the msgid under glibc 2.41.) macOS
// has no C.UTF-8 at all. Reading the .mo file needs no locale, no libintl and changes nothing
// else of the process (numbers, collation): --lang zh works the same on every system.
//
// A .mo file (GNU gettext manual, "The Format of GNU MO Files"): a header of 32-bit words
// (magic 0x950412de in the writer's byte order, revision, N, offset of the msgid table,
// offset of the msgstr table), each table N pairs (length, offset) of strings. A message
// with a plural is stored as "singular\0plural" -> "form0\0form1...", the form chosen by the
// catalog header's "Plural-Forms: nplurals=K; plural=EXPR;", EXPR a C expression in n.
#include "course/i18n.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_map>

namespace ts {
namespace {
constexpr char kDomain[] = "transformer-steps";
Lang g_lang = Lang::En;

struct Catalog {
  std::unordered_map<std::string, std::string> messages;  // msgid (a plural's singular) -> msgstr
  std::string plural = "n != 1";                          // gettext's rule when none is given
  unsigned long nplurals = 2;
};
Catalog g_catalog;

// The .mo file's bytes, or empty if it cannot be read.
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The .mo file's messages; false if it is not a .mo file (left empty, English is shown).
bool parse_mo(const std::string& bytes, Catalog& out) {
  if (bytes.size() < 28) return false;
  auto word_at = [&](size_t at, bool swap) -> uint64_t {
    if (at + 4 > bytes.size()) return UINT64_MAX;
    uint32_t w;
    std::memcpy(&w, bytes.data() + at, 4);
    if (swap) w = (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24);
    return w;
  };
  const bool swap = word_at(0, false) != 0x950412deu;
  if (swap && word_at(0, true) != 0x950412deu) return false;
  const uint64_t n = word_at(8, swap), ids = word_at(12, swap), strs = word_at(16, swap);
  auto string_at = [&](uint64_t table, uint64_t i, std::string& s) {
    const uint64_t len = word_at(table + 8 * i, swap), off = word_at(table + 8 * i + 4, swap);
    if (len == UINT64_MAX || off == UINT64_MAX || off + len > bytes.size()) return false;
    s.assign(bytes, off, len);
    return true;
  };
  for (uint64_t i = 0; i < n; ++i) {
    std::string id, str;
    if (!string_at(ids, i, id) || !string_at(strs, i, str)) return false;
    // looked up as gettext does: by the msgid up to its first '\0' (a plural's singular)
    out.messages.emplace(id.substr(0, id.find('\0')), std::move(str));
  }
  return true;
}

// Plural-Forms' EXPR evaluated for n: C's operators on unsigned long, by precedence
// (?: || && == != < > <= >= + - * / % ! and parentheses). A malformed EXPR gives form 0.
struct PluralExpr {
  const char* p;
  unsigned long n;
  bool ok = true;
  void skip() { while (*p == ' ' || *p == '\t' || *p == '\n') ++p; }
  bool eat(const char* op) {
    skip();
    const size_t len = std::strlen(op);
    if (std::strncmp(p, op, len) != 0) return false;
    if (len == 1 && (*op == '<' || *op == '>' || *op == '!') && p[1] == '=') return false;
    p += len;
    return true;
  }
  unsigned long primary() {
    skip();
    if (eat("(")) {
      const unsigned long v = ternary();
      if (!eat(")")) ok = false;
      return v;
    }
    if (*p == 'n') { ++p; return n; }
    if (*p >= '0' && *p <= '9') return std::strtoul(p, const_cast<char**>(&p), 10);
    ok = false;
    return 0;
  }
  unsigned long unary() { return eat("!") ? !unary() : primary(); }
  unsigned long mul() {
    unsigned long v = unary();
    for (;;) {
      if (eat("*")) v *= unary();
      else if (eat("/") || eat("%")) {
        const bool div = p[-1] == '/';
        const unsigned long r = unary();
        if (r == 0) { ok = false; return 0; }
        v = div ? v / r : v % r;
      } else return v;
    }
  }
  unsigned long add() {
    unsigned long v = mul();
    for (;;) {
      if (eat("+")) v += mul();
      else if (eat("-")) v -= mul();
      else return v;
    }
  }
  unsigned long rel() {
    unsigned long v = add();
    for (;;) {
      if (eat("<=")) v = v <= add();
      else if (eat(">=")) v = v >= add();
      else if (eat("<")) v = v < add();
      else if (eat(">")) v = v > add();
      else return v;
    }
  }
  unsigned long eq() {
    unsigned long v = rel();
    for (;;) {
      if (eat("==")) v = v == rel();
      else if (eat("!=")) v = v != rel();
      else return v;
    }
  }
  unsigned long conj() {
    unsigned long v = eq();
    while (eat("&&")) { const unsigned long r = eq(); v = v && r; }
    return v;
  }
  unsigned long disj() {
    unsigned long v = conj();
    while (eat("||")) { const unsigned long r = conj(); v = v || r; }
    return v;
  }
  unsigned long ternary() {
    const unsigned long c = disj();
    if (!eat("?")) return c;
    const unsigned long a = ternary();
    if (!eat(":")) ok = false;
    const unsigned long b = ternary();
    return c ? a : b;
  }
};

unsigned long plural_form(const Catalog& c, unsigned long n) {
  PluralExpr e{c.plural.c_str(), n};
  const unsigned long form = e.ternary();
  e.skip();
  return e.ok && (*e.p == '\0' || *e.p == ';') && form < c.nplurals ? form : 0;
}

// "nplurals=K; plural=EXPR;" from the catalog's header (the translation of "").
void read_plural_forms(Catalog& c) {
  const auto header = c.messages.find("");
  if (header == c.messages.end()) return;
  const std::string& h = header->second;
  const size_t line = h.find("Plural-Forms:");
  if (line == std::string::npos) return;
  const std::string forms = h.substr(line, h.find('\n', line) - line);
  const size_t k = forms.find("nplurals="), e = forms.find("plural=", forms.find(';'));
  if (k == std::string::npos || e == std::string::npos) return;
  c.nplurals = std::strtoul(forms.c_str() + k + 9, nullptr, 10);
  c.plural = forms.substr(e + 7);
  if (c.nplurals == 0) c.nplurals = 1;
}
}  // namespace

Lang lang_from_env() {
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::string(v).rfind("zh", 0) == 0 ? Lang::Zh : Lang::En;
  }
  return Lang::En;
}

bool parse_lang(const std::string& text, Lang& out) {
  if (text == "en" || text.rfind("en_", 0) == 0 || text.rfind("en-", 0) == 0 || text == "C") {
    out = Lang::En;
    return true;
  }
  if (text == "zh" || text.rfind("zh_", 0) == 0 || text.rfind("zh-", 0) == 0) {
    out = Lang::Zh;
    return true;
  }
  return false;
}

std::string set_lang(Lang lang) {
  g_lang = lang;
  g_catalog = Catalog{};
  if (lang != Lang::Zh) return "";
  // TS_LOCALEDIR: a translator's catalogs, tried without rebuilding (scripts/po.sh preview)
  const char* env = std::getenv("TS_LOCALEDIR");
  const std::string dir = env && *env ? env : TS_LOCALE_DIR;
  // gettext's order for LANGUAGE=zh_CN: the catalog of zh_CN, else of zh. None: English.
  for (const char* name : {"zh_CN", "zh"}) {
    const std::string bytes = read_file(dir + "/" + name + "/LC_MESSAGES/" + kDomain + ".mo");
    Catalog c;
    if (!bytes.empty() && parse_mo(bytes, c)) {
      read_plural_forms(c);
      g_catalog = std::move(c);
      return "";
    }
  }
  return dir + "/zh_CN/LC_MESSAGES/" + kDomain + ".mo";
}

Lang current_lang() { return g_lang; }

const char* tr(const char* msgid) {
  if (g_lang == Lang::En || !*msgid) return msgid;
  const auto it = g_catalog.messages.find(msgid);
  return it == g_catalog.messages.end() || it->second.empty() ? msgid : it->second.c_str();
}

const char* trn(const char* singular, const char* plural, unsigned long n) {
  const char* english = n == 1 ? singular : plural;
  if (g_lang == Lang::En) return english;
  const auto it = g_catalog.messages.find(singular);
  if (it == g_catalog.messages.end()) return english;
  // the forms, '\0'-separated: the one plural_form names
  const std::string& forms = it->second;
  size_t at = 0;
  for (unsigned long k = plural_form(g_catalog, n); k > 0 && at != std::string::npos; --k) {
    at = forms.find('\0', at);
    if (at != std::string::npos) ++at;
  }
  return at == std::string::npos || at >= forms.size() ? english : forms.c_str() + at;
}

}  // namespace ts
