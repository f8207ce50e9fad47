// course/three_kinds.hpp: the three kinds of Transformer of article 002 §9.1.3 side by side
// (introduced in ch14; ch12 --vs-ch11 prints its table with compare_table): what each model
// reads and writes, the masks its forward builds, and a table of measured runs. Every fact is
// read from the model objects, the masks the forwards build, or the runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "course/chapter.hpp"
#include "train/until_target.hpp"

namespace ts {

// Positions each kind runs to answer one number, the mean over the held-out numbers:
// ch11 encodes <start> digits <end> and decodes <start> words; ch12 reads digits = words <end>
// as one stream; ch13 reads [CLS] words once.
double encdec_positions();
double gpt_positions();
double classifier_positions();

// A table: an empty top-left cell and one header per column, then rows of a label and one cell
// per column; labels left-aligned in label_width, cells right-aligned in cell_width.
using CompareRow = std::pair<std::string, std::vector<std::string>>;
std::string compare_table(const std::vector<std::string>& heads, const std::vector<CompareRow>& rows,
                          size_t label_width, size_t cell_width);
// "step / seconds" at the target, or "not in N" steps
std::string at_target(int64_t step_hit, double seconds_hit, int64_t steps);

// What an attention mask (T,S), 1 = hide, hides, read from its cells: "causal", "padding",
// "causal + padding", "none" or "N of M pairs"; key_pad[s]: key s is padding.
std::string mask_kind(const std::vector<float>& mask, int64_t T, int64_t S, const std::vector<bool>& key_pad);

// One model of the three, after its run.
struct Kind {
  std::string id;             // "encoder-decoder (ch11)", untranslated: --transcript's >>> lines
  std::string name;           // the same, translated
  std::string reads, writes;  // from the model's config: vocabularies, positions, classes
  // the masks its forward built, named by mask_kind ("" where the kind has no such attention)
  std::string enc_self, dec_self, cross;
  size_t params = 0;
  double positions = 0;  // positions run per answer (mean)
  std::string score;     // what held_out measures ("exact match", "accuracy")
  train::TargetRun run;
};

// A kind before its run: it reads `vocab` ids at up to `positions` positions, writes `writes`;
// id is marked with N_() and translated here.
Kind make_kind(const char* id, int64_t vocab, int64_t positions, const std::string& writes, size_t params,
               double run_positions, const std::string& score);

// Step 2: the masks the three forwards build for one batch of {short_n, long_n}, drawn for
// short_n (the padded row) as heatmaps; fills each kind's mask words from what each forward
// applied: one eval-mode forward per model (no draw), the keys its first layer's attention gave
// weight 0. ed: the encoder-decoder's Trainer (its forward runs once here, on this batch).
void show_masks(Chapter& ch, train::Trainer& ed, const train::Gpt& gpt, train::Classifier& cls,
                int64_t short_n, int64_t long_n, Kind& k_ed, Kind& k_gpt, Kind& k_cls);

// Step 4: the table of the three runs, then which kind fits which task, each sentence from the
// figures (a model that missed its target is said to have missed it).
// defaults: every run used its chapter's defaults (course/settings.cpp), as the note then says
void show_kinds_table(Chapter& ch, const std::vector<Kind>& kinds, const train::TargetPlan& plan, int64_t classes,
                      bool defaults);

}  // namespace ts
