// chapter_output.cpp: what a step prints: its heading and code line, shown tensors and reprs,
// sentences, verdicts, errata, figures (and --svg, --dump), in the chosen output mode.
#include "course/chapter_detail.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "course/dump_dir.hpp"
#include "course/fault_note.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/pager.hpp"
#include "course/svg.hpp"
#include "exact/npy.hpp"
#include "exact/print.hpp"
#include "exact/tfprint.hpp"

namespace ts {
using namespace chapter_detail;

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

}  // namespace ts
