// chapter.cpp: a chapter's run, shared by every chapter: its language, the output mode, the
// error handling and exit codes, the budget and pace notes, --step-by-step's pauses. The flags
// are read in chapter_options.cpp, the steps printed by chapter_output.cpp.
#include "course/chapter_detail.hpp"
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
using namespace chapter_detail;

namespace {
// Chinese asked for (lang_source: "--lang zh" or "LANG=zh_CN.UTF-8") and its catalog missing: the
// file tried (choose_language; Chapter::run refuses the run)
std::string missing_catalog, lang_source;
}  // namespace

namespace chapter_detail {
std::string join_words(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}
}  // namespace chapter_detail

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

}  // namespace ts
