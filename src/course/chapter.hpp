// chapter.hpp: what every chapter binary shares (introduced in ch01).
//
// Flags (every chapter):  --help  --seed S  --eval  --plain  --transcript
//                         --color=auto|always|never (--no-color = never)  --full  --lang zh|en
//                         --dump DIR  --svg DIR  --naive  --step-by-step  --step N
//                         (+ the chapter's own knobs, e.g. --text)
// Output modes:
//   default       for each step: a header naming the article step, the PyTorch line
//                 being mirrored, the printed value, one line of explanation.
//   --plain       only what the article's own print() calls show, in its order
//                 (diff it with the article; equals the PyTorch twin's --plain).
//   --transcript  every tensor the chapter shows, as ">>> expr" then the value
//                 (equals the PyTorch twin's --transcript, bit for bit).
// Bad input anywhere -> one line on stderr and exit code 2 (throw UsageError).
// A failed write (stdout, --dump) -> a message on stderr and exit code 1, never lost.
// A check the chapter makes that no longer holds (a learner's edit broke an invariant, see
// verdict()) -> "NOT OK" in the output, one line on stderr naming it, and exit code 3.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/args.h>

#include "base/code_site.hpp"
#include "base/figure_sink.hpp"
#include "course/articles.hpp"
#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "exact/print.hpp"
#include "exact/tensor.hpp"
#include "text/tokenizer.hpp"

namespace CLI {
class App;
}

namespace ts {

class DumpDir;
class StdoutBuf;

// Who sees an item: the article's own print (all modes), a value the twin also
// prints (default + transcript), or the chapter's own commentary (default only).
enum class Shown { Article, Twin, Info };

// A knob's help: a msgid (marked N_() or _()), translated when --help is built, after --lang is
// read, and the values its {names} stand for, bound where the knob is declared and formatted
// into the translation then:
//   ch.option("--translate", text, Help(N_("also translate this number (0..{max})"), fmt::arg("max", kMaxNumber)));
// A trf(...) there would be formatted, in English, before --lang takes effect.
class Help {
 public:
  Help() = default;
  Help(const char* msgid) : msgid_(msgid) {}  // NOLINT: a plain help converts implicitly
  Help(std::string msgid) : msgid_(std::move(msgid)) {}  // NOLINT
  template <class A, class... Rest>
  Help(const char* msgid, const A& arg, const Rest&... rest) : msgid_(msgid), args_(std::make_shared<Args>()) {
    args_->push_back(arg);  // a named argument's value is copied (its name too)
    (args_->push_back(rest), ...);
  }
  bool empty() const { return msgid_.empty(); }
  // the translation in the current language, formatted with the bound values
  std::string text() const;

 private:
  using Args = fmt::dynamic_format_arg_store<fmt::format_context>;
  std::string msgid_;
  std::shared_ptr<Args> args_;  // null: no values
};

// What a decimal knob accepts near 0: whether 0 itself is a valid value (--dropout 0 is, --lr 0 is
// not) and the smallest nonzero magnitude the chapter accepts (0: any a double holds as a normal
// number). A value too small to hold names a fix from these: "write 0 or ..." only where 0 works.
struct NearZero {
  bool zero_ok = true;
  double smallest = 0;
};

class Chapter {
 public:
  // id "ch04_multihead", title "Multi-head attention", follows {{0, N_("§Multi-head Attention")},
  // {2, N_("§9.2.1")}}: the articles and sections it follows (articles.hpp, shown as cite() words them).
  Chapter(std::string id, std::string title, std::vector<Source> follows);
  ~Chapter();

  // Chapter knobs, added before run() (kept here so chapters need not include CLI11).
  // Integers are read as Python's int() reads them (decimal only: "010" is 10, "0x10" is
  // refused); a value that looks like a flag ("--text --plain") is refused unless written
  // --text=--plain; a knob given twice is refused. `name` may list aliases: "--seq-len,--pe-len".
  void flag(const std::string& name, bool& value, const Help& help);
  void option(const std::string& name, int64_t& value, const Help& help);
  // The same, refused unless lo <= value <= hi (check_range, with `why` in the message);
  // the range is shown in --help.
  void option(const std::string& name, int64_t& value, const Help& help, int64_t lo, int64_t hi,
              const std::string& why = "");
  // A decimal knob; `near_zero` says what it accepts near 0, so that a value too small for a
  // double names a fix that works (decimal_number).
  void option(const std::string& name, double& value, const Help& help, NearZero near_zero = {});
  void option(const std::string& name, std::string& value, const Help& help);
  // A folder (--save DIR, --load DIR): '' is refused; --help shows DIR.
  void folder(const std::string& name, std::string& value, const Help& help);
  // The kind of value --help shows for `name` when its C++ type does not say it (a number read
  // as text: "N").
  void value_kind(const std::string& name, const char* kind);
  void add_sentence_flags();  // --text "..." (default: the article's sentence), then add_vocab_flag()
  void add_vocab_flag();      // --vocab PATH (default: data/bert-base-uncased-vocab.txt)
  // add_sentence_flags(), then --d-model C, the width of the rows of BERT's 30522-row embedding
  // table that turns the sentence into vectors: 1..2048, so that the table fits in memory.
  void add_sentence_flags(int64_t& d_model, const Help& d_model_help);

  // Parse argv, seed the generator, run body; maps errors to exit codes (0 ok, 2 bad input,
  // 1 a failed write or an internal error). A write error on stdout is reported as coreutils do.
  int run(int argc, char** argv, const std::function<void(Chapter&)>& body);

  // Was the knob `name` (any of its aliases) on the command line?
  bool given(const std::string& name) const;

  // Before the heavy work: `bytes` of memory and `madds` multiply-adds (or similar steps)
  // estimated from the knobs. More than about 4 GB is refused (UsageError naming `knobs`,
  // the flags to make smaller); more than about 10 s gets a one-line note on stderr.
  // `other_seconds`: work that is not multiply-adds (e.g. sin/cos tables), already in seconds.
  // `up_to`: the madds are those of a run to its cap, which it may stop before (ch14: each model
  // trains until its target); the note then gives them as a bound, saying when it is reached.
  void budget(double bytes, double madds, const std::string& knobs, double other_seconds = 0,
              const std::string& up_to = "") const;
  // The same > 10 s note, for work this run times itself: `first` (e.g. _("the first training step"))
  // took `seconds`, and at that pace the whole work takes `estimate` seconds; above about 10 s, one
  // line on stderr naming both and `knobs`, the flags to make smaller. Call it once, after the first part.
  // `processor`: the seconds are processor time (pace.hpp's cpu_seconds), and the note says so.
  void pace_note(const std::string& first, double seconds, double estimate, const std::string& knobs,
                 bool processor = false) const;

  // ---- options, valid inside body ----
  uint64_t seed = 0;
  std::string seed_text = "0";
  std::string text = "time flies like an arrow";
  std::string vocab_path;
  bool eval = false;  // --eval: dropout off (a fresh PyTorch module is in train mode)
  bool plain = false;
  bool transcript = false;
  bool color = false;  // --color: always, or auto and stdout is a terminal (never with --plain/--transcript)
  bool full = false;   // --full: every tensor in full, also those the article never prints
  bool naive = false;
  std::string dump_dir;
  bool training() const { return !eval; }
  bool rich() const { return !plain && !transcript; }  // default, explanatory mode
  // A progress line redrawn in place ("\r\033[K"): explained mode, stdout a terminal that reads
  // escape sequences (not TERM=dumb). Otherwise no progress line is drawn: a pipe, a file or a
  // dumb terminal gets only the article's own progress lines.
  bool live_progress() const;

  // ---- output ----
  // A section header: the article step this part follows. A step ends at the next section
  // (or the chapter's end) with one line naming its code (default mode only): the chapter
  // line that opened it and the TS_CODE_SITE() functions it ran (base/code_site.hpp): the first
  // two, then how many more (--code-all: every one), e.g.
  //   code: chapters/ch04_multihead.cpp:120 · src/transformer/nn.cpp:186 TransformerEncoderLayer::operator()
  // `file` and `line` are the caller's, filled in by the compiler.
  void section(const std::string& title, const std::string& article_ref, const char* file = __builtin_FILE(),
               int line = __builtin_LINE());
  // One printed value: `expr` is the PyTorch expression mirrored, `printed` what print() shows.
  void show(const std::string& expr, const std::string& printed, const std::string& why,
            Shown who = Shown::Article);
  // Same for a tensor: printed with PyTorch's formatter and dumped with --dump. In the
  // default mode, a tensor the article does not print (Twin, Info) with more than
  // kBriefThreshold values is summarised as PyTorch summarises (first and last 3 per dim),
  // unless --full; --plain and --transcript always print what PyTorch prints.
  static constexpr size_t kBriefThreshold = 200;
  void show(const std::string& expr, const Tensor& t, const PrintMeta& meta, const std::string& why,
            Shown who = Shown::Article);
  // A module's repr, print(module): torch 1.13's full repr in --plain, --transcript and with
  // --full; in the default mode, runs of equal children of a ModuleList collapse to one line
  // "(0-11): 12 x AttentionHead(...)", as PyTorch 2.x prints them.
  void show(const std::string& expr, const ModuleRepr& m, const std::string& why, Shown who = Shown::Article);
  // An nn.Parameter (a module's weight): "Parameter containing:" + the tensor, requires_grad=True.
  void show_parameter(const std::string& expr, const Tensor& t, const std::string& why, Shown who = Shown::Article);
  void show(const std::string& expr, const ITensor& t, const std::string& why, Shown who = Shown::Article);
  void show(const std::string& expr, const BTensor& t, const std::string& why, Shown who = Shown::Article);
  // Free explanation (default mode only), re-flowed to the terminal's width (100 columns
  // when stdout is not a terminal): paragraphs are split by blank lines; lines indented
  // deeper than two spaces are kept as they are (see layout.hpp, wrap).
  void say(const std::string& text);
  // An article erratum (default mode only): where the article's text or code is wrong or
  // unclear, said once, where the chapter meets it, as
  //   "  ! article errata (002 §9.2.1, line 184): <what the article says, what holds, why>"
  // `where` names the article and the place ("002 §9.2.1, line 184"); `text` is the note.
  // The chapter still follows the article's code as written; the docs page lists the same
  // errata under "## Article errata".
  void erratum(const std::string& where, const std::string& text);
  // A figure (heatmap, table): default mode only, printed as it is.
  void figure(const std::string& text);

  // A check the chapter makes on its own numbers ("the two paths agree"): returns
  // "OK: <detail>" when `ok`, else "NOT OK: <detail>", for a note. A NOT OK is also
  // remembered: when the chapter ends, one line on stderr names the first one and the exit
  // code is 3, so an edit that breaks an invariant is seen in every output mode.
  std::string verdict(bool ok, const std::string& detail);
  // "src/transformer/nn.cpp:186 MultiHeadAttention::operator()": where a TS_CODE_SITE() function
  // of that name (code_site_name) that ran in this chapter so far is, from the compiler; for a
  // NOT OK to name the code it compared ("" if none of that name ran)
  std::string ran(const std::string& name) const;
  // The same with one message per outcome, as a verdict's words must: `ok_text` under OK,
  // `not_ok_text` under NOT OK (both marked N_()), translated and formatted with `args`:
  //   ch.verdict(d <= tol, N_("agree to {d:.3g}"), N_("differ by {d:.3g}, above {tol}"), fmt::arg("d", d), ...)
  template <class... Args>
  std::string verdict(bool ok, const char* ok_text, const char* not_ok_text, Args&&... args) {
    return verdict(ok, trf(ok ? ok_text : not_ok_text, std::forward<Args>(args)...));
  }

  // ANSI helpers (no-ops without colour).
  std::string bold(const std::string& s) const;
  std::string dim(const std::string& s) const;
  std::string accent(const std::string& s) const;

 private:
  struct Knob;
  Knob& add_knob(const std::string& names, int kind, void* target, const Help& help);
  void choose_language(int argc, char** argv);
  void scan_args(int argc, char** argv);
  void read_knobs();
  int finish_output(int code);
  void end_step();  // prints the step's code line (section)
  void pause_after_step();  // --step-by-step on a terminal: Enter, b or q
  void write_figure(const FigureData& f);  // --svg: one SVG file per figure shown
  bool stepping() const;    // --step-by-step in effect (default mode, stdin and stdout terminals)
  void dump(const std::string& expr, const std::function<void(const std::string&)>& write);
  std::string id_, title_, follows_;  // follows_: cite(sources_), in the chosen language
  std::vector<Source> sources_;
  std::unique_ptr<CLI::App> app_;
  std::vector<std::unique_ptr<Knob>> knobs_;
  std::unique_ptr<DumpDir> dump_;
  StdoutBuf* out_ = nullptr;
  std::string command_line_;
  bool no_color_ = false;
  std::string color_mode_ = "auto";
  std::string lang_text_;
  std::vector<std::string> failed_checks_;
  int step_ = 0;
  bool step_by_step_ = false;
  int64_t start_step_ = 1;  // --step N: the first step shown
  int64_t section_no_ = 0;  // steps opened so far (section)
  std::string step_title_;  // the current step's title (a figure without one takes it)
  std::string svg_dir_;
  std::unique_ptr<DumpDir> svg_;
  int figures_ = 0;
  size_t plain_shown_ = 0;  // lines --plain printed: none at all gets a note on stderr
  int dumped_ = 0;
  // the current step's code: where the chapter opened it, and the marked functions it ran;
  // the code: line names kCodeEntries of them, --code-all every one
  static constexpr size_t kCodeEntries = 3;
  bool code_all_ = false;
  const char* step_file_ = nullptr;
  int step_line_ = 0;
  std::vector<const CodeSite*> step_sites_;
  std::vector<const CodeSite*> earlier_sites_;  // the steps' before this one, for ran()
  std::unique_ptr<CodeSiteRecorder> recorder_;
};

// The sentence a chapter starts from (introduced in ch01): --text, tokenized with the
// bert-base-uncased WordPiece of --vocab, as article 000's tokenizer(text, return_tensors="pt",
// add_special_tokens=...) would.
struct Sentence {
  std::vector<std::string> pieces;  // tokenizer.tokenize(text): the T word pieces, no [CLS]/[SEP]
  std::vector<std::string> tokens;  // the token of every id: pieces, with [CLS]/[SEP] if special
  ITensor input_ids;                // (B,T) with B = 1
  int64_t T() const { return static_cast<int64_t>(tokens.size()); }
};
// Throws UsageError (exit 2) for a missing vocabulary, a text with no tokens, or more ids
// than max_positions.
Sentence read_sentence(const Chapter& ch, int64_t max_positions, bool add_special_tokens = false);

// Shared checks for the knobs chapters expose (each throws UsageError with the fix).
// lo <= value <= hi, else "<flag> must be between lo and hi (why), got value", where the flag
// and the value are echoed as the user typed them (an alias, "010", "99999999999999999999").
void check_range(const std::string& flag, int64_t value, int64_t lo, int64_t hi, const std::string& why = "");
// d_model % heads == 0, 1 <= heads <= d_model, min_d_model <= d_model <= 8192 (article 002's
// LayerNorm divides by d_model - 1: chapters that use it pass min_d_model = 2)
void check_model_dims(int64_t d_model, int64_t heads, int64_t min_d_model = 1);
// A value the user typed, echoed in a message: in quotes, one line (control bytes as \xNN), at
// most 60 bytes cut where a character starts (then its length is said), and the first invisible
// or look-alike character named: "'forty eight' (U+00A0 NO-BREAK SPACE at byte 5)".
std::string quoted_input(const std::string& v);
// A whole number from 0 to `max` in digits, spaces around it allowed as every number flag allows
// them (Python's int()). UsageError naming 0..max and echoing the value otherwise. (--prompt and
// --translate call it through task_number, course/train_knobs.hpp, with the task's own bound.)
int64_t whole_number(const std::string& flag, const std::string& text, int64_t max);
// A decimal number as every X flag reads it (Python's float(), spaces around allowed): finite, in
// decimal, and 0 or at least the smallest normal double (a subnormal or an underflow is refused as
// too small, naming what to write instead: 0 only where near_zero.zero_ok, and the smallest value
// the flag accepts); -0 reads as 0. UsageError echoing the value otherwise.
double decimal_number(const std::string& flag, const std::string& text, NearZero near_zero = {});
// How the user wrote `flag`'s value, or std::to_string(value) if the flag was not given.
std::string typed(const std::string& flag, int64_t value);
void check_seq_len(int64_t seq_len, int64_t max_positions);     // 1 <= T <= positions
// The WordPiece tokenizer from `path`; a missing or unusable vocabulary (not a regular file,
// too large, a repeated line, more lines than the 30522 rows of BERT's embedding table) is a
// UsageError naming the fix.
WordPieceTokenizer load_tokenizer(const std::string& path);


}  // namespace ts
