// chapter_options.cpp: every chapter's flags and options (the knobs), read and checked: what the
// user typed, its one-line echo in a message, the shared input checks (--d-model, --heads, a
// sentence, a vocabulary file).
#include "course/chapter_detail.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "course/dump_dir.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "exact/rng.hpp"

namespace ts {
using namespace chapter_detail;

namespace {
// What --help shows as a chapter knob's default: its variable's value when declared. Nothing
// for a flag, an empty text, or a value that stands for "not given" (a negative count, \x01).
std::string default_of(int kind, const void* target) {
  switch (kind) {
    case kInt: {
      const int64_t v = *static_cast<const int64_t*>(target);
      return v < 0 ? std::string() : std::to_string(v);
    }
    case kDouble: return fmt::format("{}", *static_cast<const double*>(target));  // 0.001, 0.1, 0
    case kText: {
      const std::string& v = *static_cast<const std::string*>(target);
      return v.empty() || v.find_first_of("\x01\n") != std::string::npos ? std::string() : "\"" + v + "\"";
    }
    default: return {};
  }
}
}  // namespace

namespace {


// What the user typed for each knob, by every alias: check_range and typed() echo it.
struct TypedKnob {
  std::string name, text;
};
std::vector<std::pair<std::string, TypedKnob>>& typed_knobs() {
  static std::vector<std::pair<std::string, TypedKnob>> knobs;
  return knobs;
}
const TypedKnob* find_typed(const std::string& flag) {
  for (const auto& [name, knob] : typed_knobs())
    if (name == flag) return &knob;
  return nullptr;
}

// argparse's rule: "-x", "--plain" look like options; "-1", "-.5", "-" and anything with a
// space do not (so `--seed -1` and `--text "- a list"` work as they do in the twins).
bool looks_like_option(const std::string& a) {
  if (a.size() < 2 || a[0] != '-' || a.find(' ') != std::string::npos) return false;
  size_t i = 1, digits = 0;
  while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) ++i, ++digits;
  if (i == a.size()) return false;  // -12
  if (a[i] == '.') {
    ++i;
    size_t frac = 0;
    while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) ++i, ++frac;
    if (i == a.size() && frac > 0) return false;  // -1.5, -.5
  }
  return true;
}

// A character a learner cannot see, or cannot tell from a space, a hyphen or a digit on screen,
// by its Unicode name: the look-alikes (visible, but not what they seem) and the common invisible
// ones. Every other invisible one is found by its category in the Unicode tables (C* or Zs,
// text/tokenizer.hpp) and described by invisible_kind.
const char* invisible_name(uint32_t cp) {
  switch (cp) {
    case 0x00A0: return "NO-BREAK SPACE";
    case 0x00AD: return "SOFT HYPHEN";
    case 0x061C: return "ARABIC LETTER MARK";
    case 0x1680: return "OGHAM SPACE MARK";
    case 0x180E: return "MONGOLIAN VOWEL SEPARATOR";
    case 0x2007: return "FIGURE SPACE";
    case 0x2009: return "THIN SPACE";
    case 0x200B: return "ZERO WIDTH SPACE";
    case 0x200C: return "ZERO WIDTH NON-JOINER";
    case 0x200D: return "ZERO WIDTH JOINER";
    case 0x200E: return "LEFT-TO-RIGHT MARK";
    case 0x200F: return "RIGHT-TO-LEFT MARK";
    case 0x2010: return "HYPHEN";
    case 0x2011: return "NON-BREAKING HYPHEN";
    case 0x2012: return "FIGURE DASH";
    case 0x2013: return "EN DASH";
    case 0x2014: return "EM DASH";
    case 0x202A: return "LEFT-TO-RIGHT EMBEDDING";
    case 0x202B: return "RIGHT-TO-LEFT EMBEDDING";
    case 0x202C: return "POP DIRECTIONAL FORMATTING";
    case 0x202D: return "LEFT-TO-RIGHT OVERRIDE";
    case 0x202E: return "RIGHT-TO-LEFT OVERRIDE";
    case 0x202F: return "NARROW NO-BREAK SPACE";
    case 0x205F: return "MEDIUM MATHEMATICAL SPACE";
    case 0x2060: return "WORD JOINER";
    case 0x2066: return "LEFT-TO-RIGHT ISOLATE";
    case 0x2067: return "RIGHT-TO-LEFT ISOLATE";
    case 0x2068: return "FIRST STRONG ISOLATE";
    case 0x2069: return "POP DIRECTIONAL ISOLATE";
    case 0x2028: return "LINE SEPARATOR";
    case 0x2029: return "PARAGRAPH SEPARATOR";
    case 0x2212: return "MINUS SIGN";
    case 0x3000: return "IDEOGRAPHIC SPACE";
    case 0xFEFF: return "ZERO WIDTH NO-BREAK SPACE";
    default: break;
  }
  if (cp >= 0x2000 && cp <= 0x200A) return "SPACE";  // EN QUAD .. HAIR SPACE: widths of space
  if (cp >= 0xFF10 && cp <= 0xFF19) return "FULLWIDTH DIGIT";
  return nullptr;
}
// The same for a character the course has no name for: what its category makes it ("" if visible).
std::string invisible_kind(uint32_t cp) {
  if (cp >= 0x80 && is_category_c(cp))
    return _("an invisible character (Unicode category C: format, control, private use or unassigned)");
  if (cp >= 0x80 && is_category_zs(cp)) return _("a space character other than U+0020 (Unicode category Zs)");
  return {};
}
}  // namespace

namespace chapter_detail {
// An error message kept to ONE line whatever the user typed into it: control bytes as \xNN, and
// what a terminal would not show as typed (a byte that is not UTF-8, an invisible or bidi format
// character such as U+202E, which would reorder the rest of the line) as \xNN or \uNNNN.
std::string one_line(const std::string& msg) {
  std::string out;
  for (size_t i = 0; i < msg.size();) {
    const unsigned char c = static_cast<unsigned char>(msg[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        out += fmt::format("\\x{:02x}", unsigned(c));
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    const std::string one = n != 0 && i + n <= msg.size() ? msg.substr(i, n) : std::string();
    if (one.empty() || !utf8_error(one).empty()) {  // not UTF-8: the byte itself
      out += fmt::format("\\x{:02x}", unsigned(c));
      ++i;
      continue;
    }
    uint32_t cp = c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(msg[i + k]) & 0x3F);
    // (U+2028 and U+2029, Zl and Zp, break the line where a terminal or an editor honours them)
    const bool hide = is_category_c(cp) || cp == 0x2028 || cp == 0x2029;
    out += !hide ? one : cp > 0xFFFF ? fmt::format("\\U{:08x}", cp) : fmt::format("\\u{:04x}", cp);
    i += n;
  }
  return out;
}

// A value echoed in a message: one line, at most 60 bytes, cut where a character starts.
std::string printable(const std::string& v) {
  if (v.size() <= 60) return one_line(v);
  size_t cut = 60;
  while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;
  return one_line(v.substr(0, cut)) + "...";
}
std::string in_quotes(const std::string& v) { return quoted_input(v); }

// TERM=dumb: a terminal that shows escape sequences as text.
bool dumb_terminal() {
  const char* term = std::getenv("TERM");
  return term != nullptr && std::strcmp(term, "dumb") == 0;
}

// Two paths naming one folder (either may not exist yet).
bool same_folder(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto pa = std::filesystem::weakly_canonical(a, ea), pb = std::filesystem::weakly_canonical(b, eb);
  if (ea || eb) return a == b;
  return pa.lexically_normal() == pb.lexically_normal() ||
         (pa.lexically_normal() / "").lexically_normal() == (pb.lexically_normal() / "").lexically_normal();
}
}  // namespace chapter_detail

std::string quoted_input(const std::string& v) {
  std::string out = "'" + printable(v) + "'";
  if (v.size() > 60) out += " " + trf("({n} bytes, the first ones shown)", fmt::arg("n", v.size()));
  // the first character one cannot see or tell apart, with the byte it starts at (valid UTF-8 only)
  for (size_t i = 0; i < v.size();) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > v.size()) break;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(v[i + k]) & 0x3F);
    const char* name = invisible_name(cp);
    const std::string kind = name ? std::string() : invisible_kind(cp);
    if (name || !kind.empty()) {
      out += name ? fmt::format(" (U+{:04X} {} {})", cp, name, trf("at byte {i}", fmt::arg("i", i)))
                  : fmt::format(" (U+{:04X}: {}, {})", cp, kind, trf("at byte {i}", fmt::arg("i", i)));
      break;
    }
    i += n;
  }
  return out;
}

int64_t whole_number(const std::string& flag, const std::string& text, int64_t max) {
  // spaces around the digits are read as Python's int() and every number flag reads them
  const size_t b = text.find_first_not_of(" \t\n\r\f\v"), e = text.find_last_not_of(" \t\n\r\f\v");
  const std::string t = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  // at most as many digits as `max` has, so std::stoll cannot overflow
  const bool digits = !t.empty() && t.size() <= std::to_string(max).size() &&
                      std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(t) > max)
    throw UsageError(trf("{flag} needs a whole number from 0 to {max} written with digits, got {text}",
                         fmt::arg("flag", flag), fmt::arg("max", max), fmt::arg("text", quoted_input(text))));
  return std::stoll(t);
}

double decimal_number(const std::string& flag, const std::string& text, NearZero near_zero) {
  // as Python's float() reads it, spaces around included: decimal only (no "0x1p3"), nothing
  // infinite or NaN ("inf" and "nan" hold an n)
  const size_t b = text.find_first_not_of(" \t\n\r\f\v"), e = text.find_last_not_of(" \t\n\r\f\v");
  const std::string t = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  char* end = nullptr;
  errno = 0;
  const double d = t.empty() ? 0.0 : std::strtod(t.c_str(), &end);
  const bool out_of_range = errno == ERANGE;
  if (t.empty() || end != t.c_str() + t.size() || t.find_first_of("xXnN") != std::string::npos ||
      (!out_of_range && !std::isfinite(d)))
    throw UsageError(trf("{flag} needs a finite decimal number (e.g. {flag} 0.5), got {value}", fmt::arg("flag", flag),
                         fmt::arg("value", quoted_input(text))));
  // beyond a double's range (strtod says ERANGE): too large, or so small that it is subnormal
  // (fewer significant bits) or 0; a finite number that Python would read as inf or as a
  // subnormal is refused for what it is
  constexpr double kLargest = std::numeric_limits<double>::max(), kSmallest = std::numeric_limits<double>::min();
  if (out_of_range && std::fabs(d) > 1.0)
    throw UsageError(trf("{flag} {value} is too large: a double holds at most {max}", fmt::arg("flag", flag),
                         fmt::arg("value", quoted_input(text)), fmt::arg("max", kLargest)));
  // the fix named is one the flag accepts: 0 only where 0 is valid, and the flag's own smallest value
  if ((out_of_range || d != 0.0) && std::fabs(d) < kSmallest)
    throw UsageError(trf(near_zero.zero_ok
                             ? N_("{flag} {value} is too small: below {min}, the smallest normal double, it is "
                                  "subnormal (fewer significant digits) or 0; write 0 or a number of at least {least}")
                             : N_("{flag} {value} is too small: below {min}, the smallest normal double, it is "
                                  "subnormal (fewer significant digits) or 0, and {flag} takes no 0; write a number "
                                  "of at least {least}"),
                         fmt::arg("flag", flag), fmt::arg("value", quoted_input(text)), fmt::arg("min", kSmallest),
                         fmt::arg("least", std::max(kSmallest, near_zero.smallest))));
  return d == 0.0 ? 0.0 : d;  // -0 reads as 0
}

std::string Help::text() const {
  if (msgid_.empty()) return std::string();
  const char* translated = tr(msgid_.c_str());
  return args_ ? fmt::vformat(translated, *args_) : std::string(translated);
}

Chapter::Chapter(std::string id, std::string title, std::vector<Source> follows)
    : id_(std::move(id)), title_(std::move(title)), follows_(cite(follows)), sources_(std::move(follows)),
      app_(std::make_unique<CLI::App>(title_ + " (follows " + follows_ + ")", id_)) {
  // The knobs every chapter takes, in --help's order (a chapter's own knobs follow them).
  const struct {
    const char* names;
    int kind;
    void* target;
    const char* help;
  } common[] = {
      {"--seed", kText, &seed_text, N_("torch.manual_seed(S) before the article's code (default 0)")},
      {"--eval", kFlag, &eval, N_("modules in eval mode: dropout off (default: train mode, like a fresh nn.Module)")},
      {"--plain", kFlag, &plain, N_("print only what the article's print() calls show, in its order (nothing, and a "
                                    "note on stderr, where it prints nothing)")},
      {"--transcript", kFlag, &transcript, N_("print every tensor shown as '>>> expr' + value (the twin test format)")},
      {"--color", kText, &color_mode_, N_("auto (colour when stdout is a terminal), always (e.g. for `| less -R`) or "
                                          "never (default: auto)")},
      {"--no-color", kFlag, &no_color_, N_("the same as --color=never")},
      {"--full", kFlag, &full, N_("print every tensor in full, also those the article never prints "
                                  "(default: a summary)")},
      {"--lang", kText, &lang_text_, N_("language of the explanations, --help and messages: zh or en (default: LC_ALL,"
                                        " LC_MESSAGES or LANG; what PyTorch prints is never translated)")},
      {"--dump", kPath, &dump_dir, N_("write every printed tensor as a .npy file into DIR (a new or empty directory, "
                                      "or one an earlier --dump wrote: its files are replaced)")},
      {"--naive", kFlag, &naive, N_("run matmuls and row kernels on the plain reference loops")},
      {"--svg", kPath, &svg_dir_, N_("write each figure the explained mode shows (heatmap, mask, positional encoding, "
                                     "loss curve, histogram, merge tree) as an SVG file into DIR (a new or empty directory, or one an earlier --svg "
                                     "wrote: its files are replaced)")},
      {"--code-all", kFlag, &code_all_, N_("end each step with every function it ran on its code: line (default: the "
                                           "step's own line and the first two functions it ran, then how many more)")},
      {"--step-by-step", kFlag, &step_by_step_, N_("on a terminal, pause after each step: Enter shows the next, b this "
                                                   "one again, q quits (piped, --plain or --transcript: no pauses)")},
  };
  for (const auto& k : common) add_knob(k.names, k.kind, k.target, k.help);
  knobs_[0]->option->type_name("N");  // --seed: read as text to take all of [-2^63, 2^64)
  Knob& step = add_knob("--step", kInt, &start_step_, N_("start at step N: the steps before it run but are not shown"));
  step.has_range = true;
  step.lo = 1;
  step.hi = 1000;
}

Chapter::~Chapter() = default;

Chapter::Knob& Chapter::add_knob(const std::string& names, int kind, void* target, const Help& help) {
  auto knob = std::make_unique<Knob>();
  knob->kind = static_cast<KnobKind>(kind);
  knob->target = target;
  for (size_t b = 0; b <= names.size();) {
    size_t e = names.find(',', b);
    if (e == std::string::npos) e = names.size();
    knob->names.push_back(names.substr(b, e - b));
    b = e + 1;
  }
  knob->help = help;
  if (kind == kFlag) {
    knob->option = app_->add_flag(names, *static_cast<bool*>(target));  // described in choose_language
  } else {
    if (kind == kText || kind == kPath) knob->text = *static_cast<std::string*>(target);
    knob->option = app_->add_option(names, knob->text);
    // --help names the kind of value: N a whole number, X a decimal one, DIR a folder, TEXT words
    knob->option->type_name(kind == kInt ? "N" : kind == kDouble ? "X" : kind == kPath ? "DIR" : "TEXT");
  }
  knobs_.push_back(std::move(knob));
  return *knobs_.back();
}

void Chapter::flag(const std::string& name, bool& value, const Help& help) {
  add_knob(name, kFlag, &value, help);
}
void Chapter::option(const std::string& name, int64_t& value, const Help& help) {
  add_knob(name, kInt, &value, help).default_text = default_of(kInt, &value);
}
void Chapter::option(const std::string& name, int64_t& value, const Help& help, int64_t lo, int64_t hi,
                     const std::string& why) {
  Knob& k = add_knob(name, kInt, &value, help);
  k.default_text = default_of(kInt, &value);
  k.has_range = true;
  k.lo = lo;
  k.hi = hi;
  k.why = why;
}
void Chapter::option(const std::string& name, double& value, const Help& help, NearZero near_zero) {
  Knob& k = add_knob(name, kDouble, &value, help);
  k.default_text = default_of(kDouble, &value);
  k.near_zero = near_zero;
}
void Chapter::option(const std::string& name, std::string& value, const Help& help) {
  add_knob(name, kText, &value, help).default_text = default_of(kText, &value);
}
void Chapter::value_kind(const std::string& name, const char* kind) {
  for (const auto& k : knobs_)
    if (k->names[0] == name && k->option != nullptr) k->option->type_name(kind);
}
void Chapter::folder(const std::string& name, std::string& value, const Help& help) {
  add_knob(name, kPath, &value, help).default_text = default_of(kText, &value);
}

void Chapter::add_sentence_flags() {
  add_knob("--text", kText, &text, N_("input sentence (default: \"time flies like an arrow\")"));
  add_vocab_flag();
}

void Chapter::add_sentence_flags(int64_t& d_model, const Help& d_model_help) {
  add_sentence_flags();
  option("--d-model", d_model, d_model_help, 1, 2048, N_("the 30522-row table must fit in memory"));
}

void Chapter::add_vocab_flag() {
  vocab_path = TS_DEFAULT_VOCAB;
  if (const char* env = std::getenv("TS_VOCAB")) vocab_path = env;
  add_knob("--vocab", kPath, &vocab_path, N_("bert-base-uncased vocab.txt (default: data/, fetched by make deps)"))
      .option->type_name("FILE");
}

bool Chapter::given(const std::string& name) const {
  for (const auto& k : knobs_)
    for (const std::string& n : k->names)
      if (n == name) return k->given;
  return false;
}

// The command line, checked word by word before CLI11 sees it, so every mistake gets a
// message in the course's form (what is wrong, what to do) and none slips through CLI11's
// leniencies (a flag taken as a value, a knob given twice, --plain=1).
void Chapter::scan_args(int argc, char** argv) {
  const std::string help = trf(" (see {id} --help)", fmt::arg("id", id_));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return;  // CLI11 prints the help
    if (a.size() < 2 || a[0] != '-' || !looks_like_option(a))
      throw UsageError(trf("unexpected argument {arg}: each value goes right after its option, as in --seed 1",
                           fmt::arg("arg", in_quotes(a))) + help);
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    Knob* knob = nullptr;
    for (const auto& k : knobs_)
      for (const std::string& n : k->names)
        if (n == name) knob = k.get();
    if (knob == nullptr)
      throw UsageError(trf("unknown option {name}: `{id} --help` lists the options", fmt::arg("name", in_quotes(name)),
                           fmt::arg("id", id_)));
    if (knob->given)
      throw UsageError(knob->kind == kFlag ? trf("{name} is given twice: give it once", fmt::arg("name", name))
                                           : trf("{name} is given twice: give it once (with the value you mean)",
                                                 fmt::arg("name", name)));
    knob->given = true;
    knob->typed_name = name;
    if (knob->kind == kFlag) {
      if (eq != std::string::npos)
        throw UsageError(trf("{name} is a switch and takes no value: write {name} alone", fmt::arg("name", name)));
      continue;
    }
    if (eq != std::string::npos) {
      knob->text = a.substr(eq + 1);
    } else {
      if (i + 1 >= argc) throw UsageError(trf("{name} needs a value: write {name} VALUE", fmt::arg("name", name)) + help);
      knob->text = argv[++i];
      if (looks_like_option(knob->text))
        throw UsageError(trf("{name} is missing its value ({value} looks like an option): to pass it as the value, "
                             "write {name}={raw}",
                             fmt::arg("name", name), fmt::arg("value", in_quotes(knob->text)), fmt::arg("raw", knob->text)));
    }
  }
}

// Typed text -> the knobs' values, each checked: integers in decimal, text in UTF-8.
void Chapter::read_knobs() {
  typed_knobs().clear();
  for (const auto& k : knobs_) {
    if (!k->given || k->kind == kFlag) continue;
    for (const std::string& n : k->names) typed_knobs().push_back({n, {k->typed_name, k->text}});
    const std::string& name = k->typed_name;
    switch (k->kind) {
      case kInt: {
        const PyInt v = parse_py_int(k->text);
        if (!v.ok)
          throw UsageError(trf("{name} needs a whole number in decimal digits (e.g. {name} 8), got {value}",
                               fmt::arg("name", name), fmt::arg("value", in_quotes(k->text))));
        // beyond int64: saturate; check_range then refuses it, echoing what was typed
        const uint64_t limit = v.negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
        const uint64_t m = v.too_big ? limit : std::min(v.magnitude, limit);
        *static_cast<int64_t*>(k->target) = v.negative ? static_cast<int64_t>(uint64_t{0} - m) : static_cast<int64_t>(m);
        break;
      }
      case kDouble:
        *static_cast<double*>(k->target) = decimal_number(name, k->text, k->near_zero);
        break;
      case kText: {
        const std::string bad = utf8_error(k->text);
        if (!bad.empty()) {  // "invalid UTF-8 at byte 3 of the input (0xE9): ..." -> "... of --text ..."
          const size_t at = bad.find("the input");
          throw UsageError(bad.substr(0, at) + name + bad.substr(at + 9) + ": the text must be UTF-8");
        }
        *static_cast<std::string*>(k->target) = k->text;
        break;
      }
      case kPath:
        if (k->text.empty()) throw UsageError(trf("{name} needs a path, got ''", fmt::arg("name", name)));
        *static_cast<std::string*>(k->target) = k->text;
        break;
      case kFlag:
        break;
    }
  }
  // (a knob whose default is a "not given" sentinel, -1, shows no default and is checked only when given)
  for (const auto& k : knobs_)
    if (k->has_range && (given(k->names[0]) || !k->default_text.empty()))
      check_range(k->names[0], *static_cast<int64_t*>(k->target), k->lo, k->hi, k->why);
  Lang lang;
  if (given("--lang") && !parse_lang(lang_text_, lang))
    throw UsageError(trf("--lang must be zh or en, got {value}", fmt::arg("value", in_quotes(lang_text_))));
}

std::string typed(const std::string& flag, int64_t value) {
  const TypedKnob* k = find_typed(flag);
  return k ? k->text : std::to_string(value);
}

// The name the user wrote for `flag` (an alias such as --pe-len), else flag itself.
static std::string typed_name(const std::string& flag) {
  const TypedKnob* k = find_typed(flag);
  return k ? k->name : flag;
}

void check_model_dims(int64_t d_model, int64_t heads, int64_t min_d_model) {
  check_range("--d-model", d_model, min_d_model, 8192,
              min_d_model > 1 ? _("LayerNorm's unbiased std divides by d_model - 1") : "");
  if (heads < 1 || heads > d_model)
    throw UsageError(trf("{flag} must be between 1 and d_model ({d_model}), got {heads}", fmt::arg("flag", typed_name("--heads")),
                         fmt::arg("d_model", printable(typed("--d-model", d_model))),
                         fmt::arg("heads", printable(typed("--heads", heads)))));
  if (d_model % heads != 0)
    throw UsageError(trf("d_model ({d_model}) is not divisible by heads ({heads}): each head gets d_model / heads "
                         "dimensions; pick heads that divide d_model",
                         fmt::arg("d_model", printable(typed("--d-model", d_model))),
                         fmt::arg("heads", printable(typed("--heads", heads)))));
}

void check_seq_len(int64_t seq_len, int64_t max_positions) {
  if (seq_len < 1)
    throw UsageError(_("the sequence is empty: give at least one token"));
  if (seq_len > max_positions)
    throw UsageError(trf("sequence of {n} tokens is longer than the {max} positions the model has: shorten the input",
                         fmt::arg("n", seq_len), fmt::arg("max", max_positions)));
}

void check_range(const std::string& flag, int64_t value, int64_t lo, int64_t hi, const std::string& why) {
  if (value < lo || value > hi)
    throw UsageError(why.empty() ? trf("{flag} must be between {lo} and {hi}, got {value}", fmt::arg("flag", typed_name(flag)),
                                       fmt::arg("lo", lo), fmt::arg("hi", hi), fmt::arg("value", printable(typed(flag, value))))
                                 : trf("{flag} must be between {lo} and {hi} ({why}), got {value}",
                                       fmt::arg("flag", typed_name(flag)), fmt::arg("lo", lo), fmt::arg("hi", hi),
                                       fmt::arg("why", tr(why.c_str())), fmt::arg("value", printable(typed(flag, value)))));
}

Sentence read_sentence(const Chapter& ch, int64_t max_positions, bool add_special_tokens) {
  WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
  Sentence s;
  s.pieces = tokenizer.tokenize(ch.text);
  if (s.pieces.empty())
    throw UsageError(trf("--text has no tokens: give a non-empty sentence, got {text}", fmt::arg("text", quoted_input(ch.text))));
  std::vector<int64_t> ids = tokenizer.encode(ch.text, add_special_tokens);
  check_seq_len(static_cast<int64_t>(ids.size()), max_positions);
  s.tokens = s.pieces;
  if (add_special_tokens) {
    s.tokens.insert(s.tokens.begin(), "[CLS]");
    s.tokens.push_back("[SEP]");
  }
  s.input_ids = ITensor::from_shape({1, ids.size()});  // (B,T), B = 1
  std::copy(ids.begin(), ids.end(), s.input_ids.begin());
  return s;
}

WordPieceTokenizer load_tokenizer(const std::string& path) {
  // bert-base-uncased's embedding table has one row per line of its vocabulary
  constexpr size_t kBertRows = 30522;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    throw UsageError(trf("vocabulary not found at {path}: run `make deps` (or scripts/fetch_vocab.sh), or pass --vocab PATH",
                         fmt::arg("path", path)));
  std::optional<WordPieceTokenizer> tok;
  try {
    tok.emplace(path);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(trf("{reason}: pass --vocab a bert-base-uncased vocab.txt (`make deps` fetches one)",
                         fmt::arg("reason", e.what())));
  }
  if (tok->vocab_size() > kBertRows)
    throw UsageError(trf("vocabulary {path} has {n} lines, more than the {rows} rows of bert-base-uncased's embedding "
                         "table: use one of at most {rows} lines",
                         fmt::arg("path", path), fmt::arg("n", tok->vocab_size()), fmt::arg("rows", kBertRows)));
  return std::move(*tok);
}


}  // namespace ts
