// chapter.cpp: flags, output modes and error handling shared by every chapter.
#include "course/chapter.hpp"
#include "course/fault_note.hpp"
#include "fast/isa.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "course/dump_dir.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/pager.hpp"
#include "course/svg.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "fast/blas_core.hpp"
#include "exact/npy.hpp"
#include "exact/print.hpp"
#include "exact/rng.hpp"
#include "exact/tfprint.hpp"
#include "exact/torch_version.hpp"

namespace ts {

// ---------------------------------------------------------------------------------
// Knobs: every flag and option, with what the user typed
// ---------------------------------------------------------------------------------
enum KnobKind { kFlag, kInt, kDouble, kText, kPath };

struct Chapter::Knob {
  std::vector<std::string> names;  // "--seq-len", "--pe-len"
  KnobKind kind;
  void* target;                    // bool*, int64_t*, double* or std::string*
  std::string text;                // the value as typed (CLI11 stores it here)
  std::string typed_name;          // the alias the user wrote
  bool given = false;
  bool has_range = false;          // integers: lo <= value <= hi, checked after parsing
  int64_t lo = 0, hi = 0;
  std::string why;
  NearZero near_zero;              // decimals: 0 valid?, the smallest nonzero value accepted
  Help help;                       // the English help and its values (translated when --help is built)
  std::string default_text;        // a chapter knob's value before parsing, shown as " (default X)"
  CLI::Option* option = nullptr;
};

namespace {
// Chinese asked for (lang_source: "--lang zh" or "LANG=zh_CN.UTF-8") and its catalog missing: the
// file tried (choose_language; Chapter::run refuses the run)
std::string missing_catalog, lang_source;
bool dumb_terminal();  // TERM=dumb (below)
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

struct QuitSteps {};  // q at a --step-by-step pause

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

std::string join_words(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

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

// Reports a write error on stdout the way coreutils does ("write error: No space left on
// device", exit 1), after flushing what is left. `code` is the exit code otherwise.
int Chapter::finish_output(int code) {
  std::cout.flush();
  const int err = out_ ? out_->error() : 0;
  if (err != 0 || std::cout.bad()) {
    std::cerr << trf("{id}: write error: {reason} (standard output)", fmt::arg("id", id_),
                     fmt::arg("reason", std::strerror(err != 0 ? err : EIO)))
              << "\n";
    return code == 0 ? 1 : code;
  }
  return code;
}

// --lang (else LC_ALL / LC_MESSAGES / LANG) chosen before anything is printed, so that --help
// and the first error message are already in the learner's language; a bad --lang value is
// refused later, with the other knobs (read_knobs).
void Chapter::choose_language(int argc, char** argv) {
  Lang lang = lang_from_env();
  missing_catalog.clear(), lang_source.clear();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string v;
    if (a == "--lang" && i + 1 < argc)
      v = argv[i + 1];
    else if (a.rfind("--lang=", 0) == 0)
      v = a.substr(7);
    else
      continue;
    Lang chosen;
    if (parse_lang(v, chosen)) lang = chosen, lang_source = "--lang " + v;
    break;
  }
  missing_catalog = set_lang(lang);
  if (!missing_catalog.empty() && lang_source.empty())  // the variable lang_from_env read
    for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"})
      if (const char* v = std::getenv(name); v && *v) {
        lang_source = std::string(name) + "=" + v;
        break;
      }
  title_ = tr(title_.c_str());
  follows_ = cite(sources_);
  app_->description(trf("{title} (follows {follows})", fmt::arg("title", title_), fmt::arg("follows", follows_)));
  app_->get_formatter()->label("Usage", _("Usage"));
  app_->get_formatter()->label("OPTIONS", _("OPTIONS"));
  app_->get_formatter()->label("Options", _("Options"));
  for (const auto& k : knobs_) {
    if (!k->option) continue;
    std::string help = k->help.text();
    if (!k->default_text.empty()) help += trf(" (default {value})", fmt::arg("value", k->default_text));
    if (k->has_range) help += fmt::format(" [{}..{}]", k->lo, k->hi);
    k->option->description(help);
  }
  app_->get_help_ptr()->description(_("Print this help message and exit"));
}

int Chapter::run(int argc, char** argv, const std::function<void(Chapter&)>& body) {
  choose_language(argc, argv);
  install_fault_note(id_);  // an edit that reads past a tensor's end: one paragraph before the signal ends the run
  // Chinese asked for, and no catalog to read it from: the run would be English, exit 0, without
  // a word. Bad input (the setting or the build), said in English, the only language left.
  if (!missing_catalog.empty()) {
    const char* env = std::getenv("TS_LOCALEDIR");
    std::cerr << one_line(env && *env ? fmt::format("{}: error: {} asks for Chinese, but TS_LOCALEDIR={} holds no catalog "
                                                    "({} cannot be read): point TS_LOCALEDIR at a folder with "
                                                    "zh_CN/LC_MESSAGES/transformer-steps.mo (scripts/po.sh preview makes "
                                                    "one), unset it, or give --lang en",
                                                    id_, lang_source, env, missing_catalog)
                                      : fmt::format("{}: error: {} asks for Chinese, but the course's catalog {} cannot be "
                                                    "read: build it (cmake --build build makes it from po/zh_CN.po), or "
                                                    "give --lang en",
                                                    id_, lang_source, missing_catalog))
              << "\n";
    return 2;
  }
  // A closed stdout (`>&-`) would lose every line, and let the next file we open take fd 1.
  if (::fcntl(STDOUT_FILENO, F_GETFD) == -1 && errno == EBADF) {
    std::cerr << trf("{id}: write error: standard output is closed ({reason}): run with stdout open, e.g. > out.txt",
                     fmt::arg("id", id_), fmt::arg("reason", std::strerror(EBADF)))
              << "\n";
    return 1;
  }
  // OpenBLAS on the widest kernel this CPU runs, before the first product (exact/matmul.hpp)
  use_widest_blas_core();
  command_line_ = join_words(argc, argv);
  StdoutBuf out;
  out_ = &out;
  struct Restore {  // std::cout outlives `out`: give it back its own buffer on every return
    std::streambuf* old;
    Chapter* ch;
    ~Restore() {
      std::cout.unsetf(std::ios::unitbuf);
      std::cout.rdbuf(old);
      ch->out_ = nullptr;
    }
  } restore{std::cout.rdbuf(&out), this};
  struct NoSink {  // figures go nowhere once the chapter has run
    ~NoSink() { set_figure_sink(nullptr); }
  } no_sink;
  // on a terminal, show each line as it comes (as stdio's line buffering did)
  const bool tty = isatty(STDOUT_FILENO);
  if (tty) std::cout.setf(std::ios::unitbuf);
  try {
    scan_args(argc, argv);
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help
      std::cout << app_->help();
      return finish_output(0);
    }
    std::cerr << id_ << ": error: " << one_line(e.what()) << " (see " << id_ << " --help)\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << trf("{id}: error: {message}", fmt::arg("id", id_), fmt::arg("message", one_line(e.what()))) << "\n";
    return 2;
  }
  try {
    try {  // TS_ISA caps the fast path's SIMD route (isa.hpp): a bad value is bad input;
      active_isa();
    } catch (const IsaEnvError& e) {
      throw UsageError(trf(e.unknown ? N_("TS_ISA={value} is not a route: use avx512, avx2, neon or scalar (this CPU "
                                          "supports {routes})")
                                     : N_("TS_ISA={value}: this CPU cannot run that route; it supports {routes} (unset "
                                          "TS_ISA to use the widest)"),
                           fmt::arg("value", in_quotes(e.value)), fmt::arg("routes", e.supported)));
    }
    // OPENBLAS_CORETYPE (the README's pin): a name OpenBLAS does not run would be dropped without a word
    if (const BlasCoreMismatch m = blas_core_env_mismatch(); !m.asked.empty())
      throw UsageError(trf("OPENBLAS_CORETYPE={value} is not a core this OpenBLAS runs here: it runs {core} instead "
                           "(OpenBLAS falls back without a word on a name it does not know or a core this CPU lacks): "
                           "set it to a core it runs, such as {core}, or unset it",
                           fmt::arg("value", in_quotes(m.asked)), fmt::arg("core", m.runs)));
    try {  // TS_AVX512_CORE (isa.hpp): a testing override of the packed GEMM's kind of core, English only
      active_avx512_core();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    check_columns_env();  // TS_COLUMNS likewise (layout.hpp): throws a UsageError
    read_knobs();
    if (plain && transcript) throw UsageError(_("--plain and --transcript are exclusive: pick one"));
    auto s = parse_seed(seed_text);
    if (!s)
      throw UsageError(trf("--seed needs an integer in [-2^63, 2^64), got {value}", fmt::arg("value", in_quotes(seed_text))));
    seed = *s;
    if (color_mode_ != "auto" && color_mode_ != "always" && color_mode_ != "never")
      throw UsageError(trf("--color must be auto, always or never, got {value}", fmt::arg("value", in_quotes(color_mode_))));
    if (no_color_ && given("--color") && color_mode_ != "never")
      throw UsageError(trf("--no-color and --color={mode} disagree: give one of them", fmt::arg("mode", color_mode_)));
    if (no_color_) color_mode_ = "never";
    // NO_COLOR (no-color.org) turns the automatic colour off; --color=always still wins
    color = !plain && !transcript &&
            (color_mode_ == "always" ||
             (color_mode_ == "auto" && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
              !dumb_terminal()));
    if (given("--dump") && given("--svg") && same_folder(dump_dir, svg_dir_))
      throw UsageError(trf("--svg and --dump name the same folder {dir}: each keeps its own manifest there, so give "
                           "each its own folder",
                           fmt::arg("dir", in_quotes(svg_dir_))));
    if (given("--dump")) dump_ = std::make_unique<DumpDir>(dump_dir, id_, command_line_);
    if (given("--svg")) {
      try {
        svg_ = std::make_unique<DumpDir>(svg_dir_, id_, command_line_);
      } catch (const UsageError& e) {  // DumpDir's message names --dump: here the directory is --svg's
        std::string m = e.what();
        for (size_t at = m.find("--dump"); at != std::string::npos; at = m.find("--dump", at)) m.replace(at, 6, "--svg");
        throw UsageError(m);
      }
      set_figure_sink([this](const FigureData& f) { write_figure(f); });
    }
    if (naive) {
      set_matmul_path(MatmulPath::Naive);
      set_kernel_path(KernelPath::Naive);
    }
    if (rich()) {
      // tensors printed as torch.set_printoptions(linewidth=W) and np.set_printoptions(linewidth=W)
      // print them, W = the screen's columns when it is narrower than the library's default
      // (--plain and --transcript print at the defaults, as the twins do)
      if (const size_t cols = terminal_width(0)) {
        set_print_linewidth(std::min(kTorchLineWidth, cols));
        set_np_linewidth(std::min(kNumpyLineWidth, cols));
      }
      // on a terminal (or TS_COLUMNS), wrapped to its width; TS_COLUMNS=0, one line each
      const size_t width = terminal_width(std::string::npos);
      const std::string follows =
          trf("follows {follows} · seed {seed} · {mode}", fmt::arg("follows", follows_), fmt::arg("seed", seed_text),
              fmt::arg("mode", eval ? _("eval") : _("train mode"))) +
          (naive ? std::string(" · ") + _("naive loops") : std::string()) +
          // the PyTorch whose arithmetic the exact path reproduces (TS_TORCH, torch_version.hpp)
          " · PyTorch " + torch_version_name();
      const std::string title = hang(id_ + " · " + title_, width, "", ""), by = hang(follows, width, "", "");
      // shown with the chapter's first output: a knob the body refuses prints no header
      out.header = bold(title.substr(0, title.size() - 1)) + "\n" + dim(by.substr(0, by.size() - 1)) + "\n";
    }
    if (given("--step") && !rich())
      throw UsageError(_("--step picks a step of the default mode's explanation: drop --plain / --transcript"));
    manual_seed(seed);
    if (rich()) recorder_ = std::make_unique<CodeSiteRecorder>(step_sites_);
    std::cout.flush();
    if (start_step_ > 1) out.mute = true;  // the lines before step 1 belong to no step
    if (stepping()) {
      out.recording = true;
      winsize ws{};  // a step taller than the screen pauses inside it, page by page
      if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 2) out.rows = ws.ws_row;
      out.cols = terminal_width(80);
    }
    try {
      body(*this);
      end_step();
      pause_after_step();
    } catch (const QuitSteps&) {  // q at a pause: the learner has read enough
      recorder_.reset();
      return finish_output(0);
    }
    std::cout.flush();
    out.mute = false;
    recorder_.reset();
    if (rich() && start_step_ > section_no_)
      throw UsageError(trf("--step {n}: this chapter has {steps} steps: pick one of 1 to {steps}",
                           fmt::arg("n", start_step_), fmt::arg("steps", section_no_)));
    // an output folder this run left empty must not look like a run that failed to write
    if (dump_ && dump_->count() == 0)
      std::cerr << trf("{id}: note: --dump {dir}: this run printed no tensor, so the folder holds only its manifest",
                       fmt::arg("id", id_), fmt::arg("dir", dump_dir))
                << "\n";
    if (svg_ && svg_->count() == 0)
      std::cerr << (rich() ? trf("{id}: note: --svg {dir}: this run drew no figure, so the folder holds only its manifest",
                                 fmt::arg("id", id_), fmt::arg("dir", svg_dir_))
                           : trf("{id}: note: --svg {dir}: --plain and --transcript draw no figure, so the folder holds only "
                                 "its manifest: drop them to get the figures",
                                 fmt::arg("id", id_), fmt::arg("dir", svg_dir_)))
                << "\n";
    // an empty --plain is what the article prints, but it must not look like a broken run
    if (plain && plain_shown_ == 0)
      std::cerr << trf("{id}: --plain printed nothing: the article's code for this chapter calls print() on no "
                       "tensor. Run without --plain for the explanation, or with --transcript for every tensor.",
                       fmt::arg("id", id_))
                << "\n";
    if (!out.header.empty()) {  // a run that printed nothing else still shows its title
      std::cout << out.header;
      out.header.clear();
    }
    if (!failed_checks_.empty()) {
      std::cout.flush();
      std::cerr << trf("{id}: {n} check(s) did not hold (NOT OK): {first}: something changed in the code or the "
                       "knobs makes the numbers differ",
                       fmt::arg("id", id_), fmt::arg("n", failed_checks_.size()), fmt::arg("first", one_line(failed_checks_[0])))
                << "\n";
      return finish_output(3);
    }
    return finish_output(0);
  } catch (const CheckFailure& e) {
    // a check the run could not go past: NOT OK, exit 3 as a failed check
    std::cout << "NOT OK: " << one_line(e.what()) << "\n";
    std::cout.flush();
    std::cerr << trf("{id}: {n} check(s) did not hold (NOT OK): {first}: something changed in the code or the "
                     "knobs makes the numbers differ",
                     fmt::arg("id", id_), fmt::arg("n", 1), fmt::arg("first", one_line(e.what())))
              << "\n";
    return finish_output(3);
  } catch (const UsageError& e) {
    std::cout.flush();
    std::cerr << trf("{id}: error: {message}", fmt::arg("id", id_), fmt::arg("message", one_line(e.what()))) << "\n";
    return 2;
  } catch (const IoError& e) {
    std::cout.flush();
    std::cerr << trf("{id}: error: {message}", fmt::arg("id", id_), fmt::arg("message", one_line(e.what()))) << "\n";
    return finish_output(1);
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << trf("{id}: error: out of memory: choose smaller sizes", fmt::arg("id", id_)) << "\n";
    return 2;
  } catch (const std::logic_error& e) {
    // A function refused what it was given (shapes that do not fit, an index past the end).
    // The course's code is the learner's to edit, so that is the code's doing: a NOT OK (exit 3)
    // naming the step's line and the functions it had run, not an internal error.
    std::vector<std::string> sites;
    if (step_file_ != nullptr) sites.push_back(fmt::format("{}:{}", code_site_path(step_file_), step_line_));
    for (const CodeSite* s : step_sites_) {
      std::string w = fmt::format("{}:{} {}", code_site_path(s->file), s->line, code_site_name(s->func));
      if (std::find(sites.begin(), sites.end(), w) == sites.end()) sites.push_back(std::move(w));
    }
    const std::string message =
        sites.empty() ? one_line(e.what())
                      : trf("{what}: a function was given what it cannot take (look at {sites}: the step's line and "
                            "the functions it had run)",
                            fmt::arg("what", one_line(e.what())), fmt::arg("sites", fmt::join(sites, ", ")));
    std::cout << "NOT OK: " << message << "\n";
    std::cout.flush();
    std::cerr << trf("{id}: {n} check(s) did not hold (NOT OK): {first}: something changed in the code or the "
                     "knobs makes the numbers differ",
                     fmt::arg("id", id_), fmt::arg("n", 1), fmt::arg("first", message))
              << "\n";
    return finish_output(3);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << trf("{id}: internal error: {message}", fmt::arg("id", id_), fmt::arg("message", e.what())) << "\n";
    return 1;
  }
}

void Chapter::budget(double bytes, double madds, const std::string& knobs, double other_seconds,
                     const std::string& up_to) const {
  // Refuse above ~4 GB; warn above ~10 s. The rates are what this course's loops reach on a
  // 2-core Zen 3 shared with other work (OpenBLAS ~10 G multiply-adds/s in the chapters, the
  // plain loops ~0.15 G/s: ch05 --naive at T=100, C=1024, F=8192 took 86 s). The note states
  // the rate it assumed instead of claiming to know this machine's: an idle Zen 4 runs ch11's
  // default in ~8 s where the note says ~30 s.
  constexpr double kMaxBytes = 4e9, kFastRate = 10e9, kNaiveRate = 0.15e9, kWarnSeconds = 10;
  if (bytes > kMaxBytes)
    throw UsageError(trf("these sizes need about {gb:.1f} GB of memory, more than the {max:.0f} GB this course "
                         "allows: make {knobs} smaller",
                         fmt::arg("gb", bytes / 1e9), fmt::arg("max", kMaxBytes / 1e9), fmt::arg("knobs", knobs)));
  const double rate = naive ? kNaiveRate : kFastRate;
  const double seconds = madds / rate + other_seconds;
  if (seconds <= kWarnSeconds) return;
  std::string note;
  if (!up_to.empty() && madds > 0)  // a run that may stop sooner: the figures are a bound, and say so
    note = trf(naive ? N_("{id}: note: these sizes take {gb:.1f} GB and up to {n:.2g} multiply-adds on the plain loops "
                          "({up_to}): at most about {s:.0f} s at {rate:.2g} G multiply-adds/s, a busy 2-core machine's "
                          "rate (sooner on a faster one); make {knobs} smaller for a quicker run")
                     : N_("{id}: note: these sizes take {gb:.1f} GB and up to {n:.2g} multiply-adds ({up_to}): at most "
                          "about {s:.0f} s at {rate:.2g} G multiply-adds/s, a busy 2-core machine's rate (sooner on a "
                          "faster one); make {knobs} smaller for a quicker run"),
               fmt::arg("id", id_), fmt::arg("gb", bytes / 1e9), fmt::arg("n", madds), fmt::arg("s", seconds),
               fmt::arg("rate", rate / 1e9), fmt::arg("knobs", knobs), fmt::arg("up_to", up_to));
  else if (madds <= 0)
    note = trf("{id}: note: these sizes take {gb:.1f} GB and about {s:.0f} s on a busy 2-core machine (sooner on "
               "a faster one); make {knobs} smaller for a quicker run",
               fmt::arg("id", id_), fmt::arg("gb", bytes / 1e9), fmt::arg("s", seconds), fmt::arg("knobs", knobs));
  else
    note = trf(naive ? N_("{id}: note: these sizes take {gb:.1f} GB and {n:.2g} multiply-adds on the plain loops: "
                          "about {s:.0f} s at {rate:.2g} G multiply-adds/s, a busy 2-core machine's rate (sooner on "
                          "a faster one); make {knobs} smaller for a quicker run")
                     : N_("{id}: note: these sizes take {gb:.1f} GB and {n:.2g} multiply-adds: about {s:.0f} s at "
                          "{rate:.2g} G multiply-adds/s, a busy 2-core machine's rate (sooner on a faster one); "
                          "make {knobs} smaller for a quicker run"),
               fmt::arg("id", id_), fmt::arg("gb", bytes / 1e9), fmt::arg("n", madds), fmt::arg("s", seconds),
               fmt::arg("rate", rate / 1e9), fmt::arg("knobs", knobs));
  // on the terminal the pager counts its rows on the page, so that it does not push the page's
  // first lines (the chapter's header) off the screen unseen
  std::cout.flush();
  if (out_ != nullptr && !out_->aside(note + "\n")) return;
  std::cerr << note << "\n";
}

void Chapter::pace_note(const std::string& first, double seconds, double estimate, const std::string& knobs,
                        bool processor) const {
  constexpr double kWarnSeconds = 10;  // as budget()
  if (!(estimate > kWarnSeconds)) return;
  // the estimate in the unit a reader takes in at once
  const std::string how_long = estimate < 120    ? fmt::format("{:.0f} s", estimate)
                               : estimate < 7200 ? fmt::format("{:.0f} min", estimate / 60)
                                                 : fmt::format("{:.1f} h", estimate / 3600);
  const std::string note =
      trf(processor ? N_("{id}: note: {first} took {s:.2g} s of processor time; at that pace the whole takes about "
                         "{t} of processor time on this machine (the clock runs longer while other programs share "
                         "its cores): make {knobs} smaller for a quicker run")
                    : N_("{id}: note: {first} took {s:.2g} s; at that pace the whole takes about {t} on this machine "
                         "now: make {knobs} smaller for a quicker run"),
          fmt::arg("id", id_), fmt::arg("first", first), fmt::arg("s", seconds), fmt::arg("t", how_long),
          fmt::arg("knobs", knobs));
  // counted on the pager's page, as budget()'s note
  std::cout.flush();
  if (out_ != nullptr && !out_->aside(note + "\n")) return;
  std::cerr << note << "\n";
}

bool Chapter::live_progress() const { return rich() && isatty(STDOUT_FILENO) && !dumb_terminal(); }

bool Chapter::stepping() const {
  return step_by_step_ && rich() && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

// After a step, on a terminal with --step-by-step: a prompt; Enter goes on, b shows the
// step again (as it was printed), q ends the chapter (exit code 0).
void Chapter::pause_after_step() {
  if (out_ != nullptr && out_->quit) throw QuitSteps{};  // q at a page of this step
  if (!stepping() || out_ == nullptr || out_->mute || section_no_ == 0) return;
  std::cout.flush();          // the step's last lines, recorded
  out_->recording = false;    // the prompt is not part of the step
  out_->new_page();           // nor of a page
  const std::string prompt =
      fit_words(trf("step {n} · Enter: next step · b: this step again · q: quit ", fmt::arg("n", section_no_)),
                out_->cols - 1);
  for (;;) {
    const Key key = out_->ask(dim(prompt), true);  // a single key, as it is pressed
    if (key == Key::Quit) throw QuitSteps{};
    if (key == Key::Next) break;
    out_->new_page();  // b: the step again, paged as it was
    out_->replay();
    if (out_->quit) throw QuitSteps{};
    out_->new_page();
  }
  out_->clear_record();
  out_->recording = true;
}

// --svg DIR: the figure the explained mode is about to show, as NN_<title>.svg (written
// atomically, listed in DIR's manifest, as --dump writes its files)
void Chapter::write_figure(const FigureData& f) {
  if (!svg_ || !rich() || (out_ != nullptr && out_->mute)) return;
  FigureData g = f;
  std::string stem = figure_file_stem(g.title);
  if (display_width(g.title) < 16 && !step_title_.empty()) {  // "head 0": which step's head 0
    const std::string step = figure_file_stem(step_title_).substr(0, 24);
    g.title = g.title.empty() ? step_title_ : step_title_ + " · " + g.title;
    stem = g.title == step_title_ ? step : step + "_" + stem;
  }
  ++figures_;
  const std::string name = fmt::format("{:02d}_{}.svg", figures_, stem);
  save_text(svg_->add(name), svg(g));
}

void Chapter::section(const std::string& title, const std::string& article_ref, const char* file, int line) {
  fault_note_step(title);  // what a fault's note names (course/fault_note.hpp)
  if (!rich()) return;
  step_title_ = title;
  end_step();
  pause_after_step();
  ++section_no_;
  std::cout.flush();  // what came before is shown or not by its own step
  if (out_ != nullptr) out_->mute = section_no_ < start_step_;
  if (out_ != nullptr && out_->rows > 0) {  // paging: the step's title again above each page after the first
    // (the page goes on from what came before: the step's pause started it, or the chapter's start)
    // one row: the title cut at a word's end to leave room for "(continued)"
    const std::string more = " " + std::string(_("(continued)"));
    const size_t room = out_->cols > display_width(more) + 1 ? out_->cols - display_width(more) - 1 : 0;
    out_->title = accent(fit_words("── " + title, room)) + dim(more) + "\n";
    out_->prompt = dim(fit_words(trf("step {n} goes on · Enter: the next page · q: quit ", fmt::arg("n", section_no_)),
                                 out_->cols - 1));
    out_->prompt_cut = dim(fit_words(
        trf("step {n} goes on · cut between two rows · Enter: the next page · q: quit ", fmt::arg("n", section_no_)),
        out_->cols - 1));
  }
  if (out_ != nullptr) out_->clear_record();
  step_file_ = file;
  step_line_ = line;
  step_sites_.clear();
  // on a terminal (or TS_COLUMNS), wrapped to its width; piped, one line
  std::cout << "\n" << hang(accent("── " + title) + " " + dim("(" + article_ref + ")"), terminal_width(std::string::npos), "", "   ");
}

void Chapter::end_step() {
  if (!rich() || step_file_ == nullptr) return;
  // the step's own line first, then the functions it ran in the order they first ran: at most
  // kCodeEntries entries in all, unless --code-all
  // (a template's float and double instantiations are one entry: the same file, line and name)
  std::vector<std::string> ran;
  for (const CodeSite* s : step_sites_) {
    std::string e = fmt::format("{}:{} {}", code_site_path(s->file), s->line, code_site_name(s->func));
    if (std::find(ran.begin(), ran.end(), e) == ran.end()) ran.push_back(std::move(e));
  }
  std::string sites = fmt::format("{}:{}", code_site_path(step_file_), step_line_);
  const size_t shown = code_all_ ? ran.size() : std::min(ran.size(), kCodeEntries - 1);
  for (size_t i = 0; i < shown; ++i) sites += " · " + ran[i];
  if (shown < ran.size())
    sites += " · " + trfn("{n} more function (--code-all)", "{n} more functions (--code-all)", ran.size() - shown,
                          fmt::arg("n", ran.size() - shown));
  const std::string note =
      hang(trf("code: {sites}", fmt::arg("sites", sites)), terminal_width(std::string::npos), "  ", "    ");
  if (out_ != nullptr) out_->begin_block();  // its rows stay on one page
  std::cout << dim(note.substr(0, note.size() - 1)) << "\n";
  if (out_ != nullptr) out_->end_block({});
  earlier_sites_.insert(earlier_sites_.end(), step_sites_.begin(), step_sites_.end());
  step_file_ = nullptr;
  step_sites_.clear();
}

std::string Chapter::ran(const std::string& name) const {
  for (const auto* list : {&step_sites_, &earlier_sites_})
    for (const CodeSite* s : *list)
      if (code_site_name(s->func) == name) return fmt::format("{}:{} {}", code_site_path(s->file), s->line, name);
  return "";
}

void Chapter::show(const std::string& expr, const std::string& printed, const std::string& why, Shown who) {
  if (plain) {
    if (who == Shown::Article) {
      std::cout << printed << "\n";
      ++plain_shown_;
    }
    return;
  }
  if (transcript) {
    if (who != Shown::Info) std::cout << ">>> " << expr << "\n" << printed << "\n";
    return;
  }
  ++step_;
  // tensors are printed at the width already (Chapter::run sets the line width); a line still
  // wider (a closing bracket, a module repr) is folded, never cut into blocks of columns.
  // The >>> line and the value are one block for the pager: a page breaks before it, or, when it
  // is taller than a page, before one of its rows (a line that opens "[", "(" or is "...")
  const size_t width = terminal_width(std::string::npos);
  std::string block = width == std::string::npos ? dim(">>> ") + bold(expr) + "\n"
                                                 : hang(bold(expr), width, dim(">>> "), dim("... "));
  std::vector<size_t> rows;
  for (size_t b = 0; b <= printed.size();) {
    size_t e = printed.find('\n', b);
    if (e == std::string::npos) e = printed.size();
    const std::string line = printed.substr(b, e - b);
    const size_t lead = line.find_first_not_of(' ');
    if (b > 0 && lead != std::string::npos && (line[lead] == '[' || line[lead] == '(' || line.compare(lead, 3, "...") == 0))
      rows.push_back(block.size());
    block += width == std::string::npos ? line + "\n" : fold_block(line + "\n", width);
    b = e + 1;
  }
  if (out_ != nullptr) out_->begin_block();
  std::cout << block;
  if (out_ != nullptr) out_->end_block(rows);
  if (!why.empty()) {  // on a terminal, re-flowed to its width under the arrow; piped, one line
    const std::string note = hang(why, terminal_width(std::string::npos), "   ↳ ", "     ");
    std::cout << dim(note.substr(0, note.size() - 1)) << "\n";
  }
}

void Chapter::show(const std::string& expr, const Tensor& t, const PrintMeta& meta, const std::string& why,
                   Shown who) {
  // A tensor the article never prints, in the default mode: summarised as print() does
  // under torch.set_printoptions(threshold=kBriefThreshold), unless --full.
  if (rich() && !full && who != Shown::Article && t.size() > kBriefThreshold && meta.threshold > kBriefThreshold) {
    PrintMeta brief = meta;
    brief.threshold = kBriefThreshold;
    show(expr,
         str(t, brief) + "\n" +
             dim(trf("  ({n} values, summarised: --full prints them all)", fmt::arg("n", t.size()))),
         why, who);
  } else {
    show(expr, str(t, meta), why, who);
  }
  dump(expr, [&](const std::string& path) { save_npy(path, t); });
}

void Chapter::show(const std::string& expr, const ModuleRepr& m, const std::string& why, Shown who) {
  const std::string whole = m.str();
  const std::string brief = rich() && !full ? m.str_collapsed() : whole;
  if (brief == whole) return show(expr, whole, why, who);
  show(expr, brief + "\n" + dim(_("  (repeated modules collapsed, as PyTorch 2 prints them: --full prints every one)")),
       why, who);
}

void Chapter::show_parameter(const std::string& expr, const Tensor& t, const std::string& why, Shown who) {
  show(expr, parameter_str(t), why, who);
  dump(expr, [&](const std::string& path) { save_npy(path, t); });
}

void Chapter::show(const std::string& expr, const ITensor& t, const std::string& why, Shown who) {
  show(expr, str(t), why, who);
  dump(expr, [&](const std::string& path) { save_npy(path, t); });
}

void Chapter::show(const std::string& expr, const BTensor& t, const std::string& why, Shown who) {
  show(expr, str(t), why, who);
  dump(expr, [&](const std::string& path) { save_npy(path, t); });
}

void Chapter::say(const std::string& text) {
  if (!rich()) return;
  // on a terminal, re-flowed to its width; piped or redirected, as written (files and pagers
  // keep the chapter's own lines)
  const size_t width = terminal_width(0);
  std::cout << (width ? wrap(text, width) : text + "\n");
}

std::string Chapter::verdict(bool ok, const std::string& detail) {
  if (!ok) failed_checks_.push_back(detail);
  return (ok ? "OK: " : "NOT OK: ") + detail;
}

void Chapter::erratum(const std::string& where, const std::string& text) {
  if (!rich()) return;
  // on a terminal, re-flowed to its width under the mark; piped, one line
  const std::string line = trf("article errata ({where}): {text}", fmt::arg("where", where), fmt::arg("text", text));
  const std::string note = hang(line, terminal_width(std::string::npos), "  ! ", "    ");
  std::cout << accent("  !") << note.substr(3);
}

void Chapter::figure(const std::string& text) {
  if (!rich()) return;
  // a figure or table wider than the terminal shows the columns that fit and says how many it left out
  const std::string block = fit_block(text + (text.empty() || text.back() != '\n' ? "\n" : ""), terminal_width(std::string::npos));
  // one block for the pager, which may break it between any two of its rows when it is taller than a page
  std::vector<size_t> rows;
  for (size_t at = block.find('\n'); at != std::string::npos && at + 1 < block.size(); at = block.find('\n', at + 1))
    rows.push_back(at + 1);
  if (out_ != nullptr) out_->begin_block();
  std::cout << block;
  if (out_ != nullptr) out_->end_block(rows);
}

// "scores.masked_fill(mask == 0, -inf)" -> "07_scores_masked_fill_mask_0_inf.npy"
void Chapter::dump(const std::string& expr, const std::function<void(const std::string&)>& write) {
  if (!dump_) return;
  std::string name;
  for (char c : expr) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
    if (name.size() >= 48) break;
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  ++dumped_;
  std::string prefix = (dumped_ < 10 ? "0" : "") + std::to_string(dumped_) + "_";
  dump_->write(prefix + name + ".npy", write);
}

std::string Chapter::bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
std::string Chapter::dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
std::string Chapter::accent(const std::string& s) const { return color ? "\033[1;36m" + s + "\033[0m" : s; }

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
