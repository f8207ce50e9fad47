// i18n.cpp: see i18n.hpp.
//
// gettext chooses the catalog from LANGUAGE, but only when the locale of LC_MESSAGES is not
// "C". A minimal Debian has no zh_CN locale installed, so set_lang(Zh) sets LC_MESSAGES to
// C.UTF-8 (built into glibc) and LANGUAGE to zh_CN: the catalog is found on every machine,
// and nothing else (numbers, collation) changes.
#include "course/i18n.hpp"

#include <libintl.h>

#include <clocale>
#include <cstdlib>

namespace ts {
namespace {
constexpr char kDomain[] = "transformer-steps";
Lang g_lang = Lang::En;
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

void set_lang(Lang lang) {
  g_lang = lang;
  if (lang != Lang::Zh) return;
  setenv("LANGUAGE", "zh_CN", 1);
  std::setlocale(LC_MESSAGES, "C.UTF-8");
  // TS_LOCALEDIR: a translator's catalogs, tried without rebuilding (scripts/po.sh preview)
  const char* dir = std::getenv("TS_LOCALEDIR");
  bindtextdomain(kDomain, dir && *dir ? dir : TS_LOCALE_DIR);
  bind_textdomain_codeset(kDomain, "UTF-8");
}

Lang current_lang() { return g_lang; }

const char* tr(const char* msgid) { return g_lang == Lang::En ? msgid : dgettext(kDomain, msgid); }

const char* trn(const char* singular, const char* plural, unsigned long n) {
  if (g_lang == Lang::En) return n == 1 ? singular : plural;
  return dngettext(kDomain, singular, plural, n);
}

}  // namespace ts
