// course/train_views.hpp: ch11's pictures and computed notes about its data and its trained
// model (introduced in ch11): what a chapter shows beside the model lines, kept out of the
// chapter so that its main reads as the training loop (issue "edit anything", item 6).
// Every sentence reads its facts from the objects (the batch, the masks, the model's config).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "train/gradcheck.hpp"
#include "train/trainer.hpp"

namespace ts {

// The parameters per top-level part of the model (encoder, decoder, ...) and their total:
// {part: sum(p.numel() for p in module.parameters())}.
std::string parameter_table(const train::Model<float>& model);

// Step 1: a batch's shapes, its three masks, and for its shortest number what each decoder
// query may see (read from the mask create_mask built), with the combined mask drawn.
void show_batch(Chapter& ch, const train::Batch& b, const train::ModelConfig& cfg);

// Step 2: where this run's hyperparameters differ from article 004's (num_layers, d_model,
// dff, num_heads, dropout_rate, BATCH_SIZE, Adam's rate, post-LN, a progress line every 500
// batches), each compared with the value the run uses.
void show_article_differences(Chapter& ch, const train::ModelConfig& cfg, int64_t batch, double lr,
                              int64_t log_every, int64_t batches_per_epoch);

// Step 2: article 004's loss_fun (/ all B*T positions) beside the per-token mean, averaged over
// the run, and what the padding in its denominator does to the gradients; acc over the real
// tokens beside the article's accuracy, which counts the padding positions too.
void show_loss_reduction(Chapter& ch, const train::Metrics& metrics);

// Step 4: the last decoder layer's cross-attention for n, each head trained beside untrained,
// and which source digit the row that predicts "hundred" looks at.
void show_cross_attention(Chapter& ch, const train::Model<float>& trained, const std::vector<float>& untrained,
                          int64_t n, int64_t max_new);

// ---- a mask's polarity, read from what the forward does (introduced in ch11; ch14 reads its
// three kinds' masks with it)
// What a forward does with a (B,Q,K) module mask (true = keep, module_inputs' or GPT::forward's):
// attention() (src/transformer/annotated.cpp) over equal scores, so a key the forward hides gets
// softmax weight 0 and every other the same share. keep[(b*Q + q)*K + k].
std::vector<bool> kept_by_attention(const BTensor& mask);
// The polarity of a mask's values, read from what the forward keeps: the value every hidden
// entry holds (hide) and the value every kept entry holds (keep). Only rows holding both values
// tell: a row the forward hides whole is softmaxed over equal -1e9s, as evenly as a row it keeps
// whole. consistent is false when a value is hidden in one place and kept in another (or nothing
// is told at all: no row holds both values).
struct Polarity {
  float hide = 1.0f, keep = 0.0f;
  bool consistent = false, told = false;
};
struct RowsOf {
  const std::vector<float>& values;  // the mask's values as the forward built them, rows of K
  const std::vector<bool>& keep;     // what the forward kept (kept_by_attention's), the same layout
  size_t K;
};
Polarity read_polarity(std::initializer_list<RowsOf> masks);
// A mask heatmap's colours and terminal legend ("{hide} = 1 = hidden, ...") from the polarity
// read: the value hidden as measured; none where pol is not consistent.
void mask_legend(HeatmapOptions& opt, const Polarity& pol);

// The verdict under a float gradient check's table (ch11 --check-grads, and ch12's, introduced
// in ch11): OK when every row of `rows` matches its finite differences within tol x max(max |grad|,
// floor), the tolerance the check itself used (passed by the caller, so the line states it); else how many differ, `first_bad` (the failing tensor the backward reaches first)
// and where to look: that module's backward (feed_forward_source(), layer_norm_source() or
// annotated_source(), by the tensor's name), and `site`, the function that
// called it ("" when the chapter runs the backward itself).
std::string grad_check_verdict(Chapter& ch, const std::vector<train::GradCheckRow>& rows,
                               const std::string& first_bad, double tol, double floor, const std::string& site = "");

}  // namespace ts
