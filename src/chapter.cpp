// chapter.cpp: flags, output modes and error handling shared by every chapter.
#include "chapter.hpp"
#include "isa.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "kernels.hpp"
#include "matmul.hpp"
#include "npy.hpp"
#include "rng.hpp"

namespace ts {

Chapter::Chapter(std::string id, std::string title, std::string follows)
    : id_(std::move(id)), title_(std::move(title)), follows_(std::move(follows)),
      app_(std::make_unique<CLI::App>(title_ + " (follows " + follows_ + ")", id_)) {
  app_->add_option("--seed", seed_text, "torch.manual_seed(S) before the article's code (default 0)");
  app_->add_flag("--eval", eval, "modules in eval mode: dropout off (default: train mode, like a fresh nn.Module)");
  app_->add_flag("--plain", plain, "print only what the article's print() calls show, in its order");
  app_->add_flag("--transcript", transcript, "print every tensor shown as '>>> expr' + value (the twin test format)");
  app_->add_flag("--no-color", no_color_, "never use colour (colour is used only when stdout is a terminal)");
  app_->add_option("--dump", dump_dir, "write every printed tensor as a .npy file into DIR");
  app_->add_flag("--naive", naive, "run matmuls and row kernels on the plain reference loops");
}

Chapter::~Chapter() = default;

void Chapter::flag(const std::string& name, bool& value, const std::string& help) {
  app_->add_flag(name, value, help);
}
void Chapter::option(const std::string& name, int64_t& value, const std::string& help) {
  app_->add_option(name, value, help);
}
void Chapter::option(const std::string& name, double& value, const std::string& help) {
  app_->add_option(name, value, help);
}
void Chapter::option(const std::string& name, std::string& value, const std::string& help) {
  app_->add_option(name, value, help);
}

void Chapter::add_text_flag() {
  app_->add_option("--text", text, "input sentence (default: \"time flies like an arrow\")");
}

void Chapter::add_vocab_flag() {
  vocab_path = TS_DEFAULT_VOCAB;
  if (const char* env = std::getenv("TS_VOCAB")) vocab_path = env;
  app_->add_option("--vocab", vocab_path, "bert-base-uncased vocab.txt (default: data/, fetched by make deps)");
}

int Chapter::run(int argc, char** argv, const std::function<void(Chapter&)>& body) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help
      std::cout << app_->help();
      return 0;
    }
    std::cerr << id_ << ": error: " << e.what() << " (see " << id_ << " --help)\n";
    return 2;
  }
  try {
    try {  // TS_ISA caps the fast path's SIMD route (isa.hpp): a bad value is bad input
      active_isa();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (plain && transcript) throw UsageError("--plain and --transcript are exclusive: pick one");
    auto s = parse_seed(seed_text);
    if (!s) throw UsageError("--seed needs an integer in [-2^63, 2^64), got '" + seed_text + "'");
    seed = *s;
    color = !no_color_ && !plain && !transcript && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    if (!dump_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(dump_dir, ec);
      if (ec) throw UsageError("--dump: cannot create directory '" + dump_dir + "': " + ec.message());
    }
    if (naive) {
      set_matmul_path(MatmulPath::Naive);
      set_kernel_path(KernelPath::Naive);
    }
    if (rich()) {
      std::cout << bold(id_ + " · " + title_) << "\n"
                << dim("follows " + follows_ + " · seed " + seed_text + (eval ? " · eval" : " · train mode") +
                       (naive ? " · naive loops" : "")) << "\n";
    }
    manual_seed(seed);
    body(*this);
    std::cout.flush();
    return 0;
  } catch (const UsageError& e) {
    std::cout.flush();
    std::cerr << id_ << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << id_ << ": error: out of memory: choose smaller sizes\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << id_ << ": internal error: " << e.what() << "\n";
    return 1;
  }
}

void Chapter::section(const std::string& title, const std::string& article_ref) {
  if (!rich()) return;
  std::cout << "\n" << accent("── " + title + " ") << dim("(" + article_ref + ")") << "\n";
}

void Chapter::show(const std::string& expr, const std::string& printed, const std::string& why, Shown who) {
  if (plain) {
    if (who == Shown::Article) std::cout << printed << "\n";
    return;
  }
  if (transcript) {
    if (who != Shown::Info) std::cout << ">>> " << expr << "\n" << printed << "\n";
    return;
  }
  ++step_;
  std::cout << dim(">>> ") << bold(expr) << "\n" << printed << "\n";
  if (!why.empty()) std::cout << dim("   ↳ " + why) << "\n";
}

void Chapter::show(const std::string& expr, const Tensor& t, const PrintMeta& meta, const std::string& why,
                   Shown who) {
  show(expr, str(t, meta), why, who);
  dump(expr, [&](const std::string& path) { save_npy(path, t); });
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
  if (rich()) std::cout << text << "\n";
}

void Chapter::figure(const std::string& text) {
  if (rich()) std::cout << text << (text.empty() || text.back() != '\n' ? "\n" : "");
}

// "scores.masked_fill(mask == 0, -inf)" -> "07_scores_masked_fill_mask_0_inf.npy"
void Chapter::dump(const std::string& expr, const std::function<void(const std::string&)>& write) {
  if (dump_dir.empty()) return;
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
  write((std::filesystem::path(dump_dir) / (prefix + name + ".npy")).string());
}

std::string Chapter::bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
std::string Chapter::dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
std::string Chapter::accent(const std::string& s) const { return color ? "\033[1;36m" + s + "\033[0m" : s; }

void check_model_dims(int64_t d_model, int64_t heads) {
  if (d_model < 1 || d_model > 8192)
    throw UsageError("--d-model must be between 1 and 8192, got " + std::to_string(d_model));
  if (heads < 1 || heads > d_model)
    throw UsageError("--heads must be between 1 and d_model (" + std::to_string(d_model) + "), got " +
                     std::to_string(heads));
  if (d_model % heads != 0)
    throw UsageError("d_model (" + std::to_string(d_model) + ") is not divisible by heads (" + std::to_string(heads) +
                     "): each head gets d_model / heads dimensions; pick heads that divide d_model");
}

void check_seq_len(int64_t seq_len, int64_t max_positions) {
  if (seq_len < 1)
    throw UsageError("the sequence is empty: give at least one token");
  if (seq_len > max_positions)
    throw UsageError("sequence of " + std::to_string(seq_len) + " tokens is longer than the " +
                     std::to_string(max_positions) + " positions the model has: shorten the input");
}

void check_range(const std::string& flag, int64_t value, int64_t lo, int64_t hi, const std::string& why) {
  if (value < lo || value > hi)
    throw UsageError(flag + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                     (why.empty() ? "" : " (" + why + ")") + ", got " + std::to_string(value));
}

Sentence read_sentence(const Chapter& ch, int64_t max_positions, bool add_special_tokens) {
  WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
  Sentence s;
  s.pieces = tokenizer.tokenize(ch.text);
  if (s.pieces.empty()) throw UsageError("--text has no tokens: give a non-empty sentence");
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
  if (!std::filesystem::exists(path))
    throw UsageError("vocabulary not found at " + path + ": run `make deps` (or scripts/fetch_vocab.sh), or pass --vocab PATH");
  try {
    return WordPieceTokenizer(path);
  } catch (const std::exception& e) {
    throw UsageError(std::string(e.what()) + ": run `make deps` to fetch a fresh copy, or pass --vocab PATH");
  }
}

}  // namespace ts
