// i18n.hpp: the course in its readers' language (gettext catalogs, read by i18n.cpp; introduced in ch01).
//
// Everything a learner reads is translated -- step titles, notes, say() text, tables'
// headers, --help, bad-input messages -- except what PyTorch or TensorFlow would print:
// --plain and --transcript are byte-identical in every language. The catalogs are po/*.po,
// compiled by the build into BUILD/locale/<lang>/LC_MESSAGES/transformer-steps.mo.
//
// Mark an English message with _() where it is used; a message with values is ONE format
// string with named arguments, so a translation may put them in its own order:
//   ch.say(trf("the mean weight on the diagonal is {diag:.3f}", fmt::arg("diag", d)));
// scripts/po.sh update refreshes po/ from the marked messages; `make test` fails while one
// has no translation.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

namespace ts {

enum class Lang { En, Zh };

// The language the environment asks for: LC_ALL, else LC_MESSAGES, else LANG (the first of
// them that is set and not empty), Chinese if it starts with "zh", else English.
Lang lang_from_env();
// Parse --lang's value: "zh" (also zh_CN, zh-CN, zh_CN.UTF-8) or "en"; false if neither.
bool parse_lang(const std::string& text, Lang& out);
// Use `lang` from now on (binds the catalog). English needs no catalog. Chinese reads
// <dir>/zh_CN/LC_MESSAGES/transformer-steps.mo (else zh/), dir = $TS_LOCALEDIR if set, else the
// build's locale folder; returns "" when it read one, else the file it tried first (the
// messages then stay in English: Chapter::run refuses such a run as bad input).
std::string set_lang(Lang lang);
Lang current_lang();

// The translation of `msgid` in the current language, or msgid itself.
const char* tr(const char* msgid);

// ngettext: the translation of `singular` or `plural`, the form the language uses for n
// (English: singular for n = 1; Chinese has one form).
const char* trn(const char* singular, const char* plural, unsigned long n);

// tr(msgid) formatted with fmt's named or positional arguments.
template <class... Args>
std::string trf(const char* msgid, Args&&... args) {
  return fmt::format(fmt::runtime(tr(msgid)), std::forward<Args>(args)...);
}

// trn(...) formatted: trfn("{H} head of {D}", "{H} heads of {D}", H, fmt::arg("H", H), ...).
template <class... Args>
std::string trfn(const char* singular, const char* plural, unsigned long n, Args&&... args) {
  return fmt::format(fmt::runtime(trn(singular, plural, n)), std::forward<Args>(args)...);
}

}  // namespace ts

// _("...") marks a message for xgettext and translates it; N_("...") only marks it (a table
// of messages translated where it is used).
#define _(msgid) ::ts::tr(msgid)
#define N_(msgid) msgid
