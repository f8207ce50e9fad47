// course/classifier_report.hpp: ch13's statistics and pictures about a trained classifier,
// kept out of the chapter so its main reads as the model (introduced in ch13).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/classifier.hpp"

namespace ts {

// The parameters per top-level part ("encoder.embeddings", "encoder.layers.0", ..., "classifier")
// and their total, one line each.
std::string classifier_parameter_table(train::Classifier& m);

// Cosine similarity of the sentence vectors v (n,C): the (n,n) matrix, and the mean over the
// pairs i < j of the same label and of different labels.
struct Similarity {
  std::vector<float> cos;  // (n,n)
  double same = 0, different = 0;
  int64_t same_pairs = 0, different_pairs = 0;
};
Similarity cosine_similarity(const std::vector<float>& v, int64_t C, const std::vector<int64_t>& labels);

// The [CLS] row of a layer's attention weights p (B,H,T,T) for sentence i: (H, T) as floats.
std::vector<float> cls_row(const std::vector<float>& p, int64_t i, int64_t H, int64_t T);
// The position the head-mean of that row weights most.
int64_t most_attended(const std::vector<float>& row, int64_t H, int64_t T);
// The smallest weight the [CLS] row (t = 0) gives to a real (unpadded) key, over every
// sentence and head of p (B,H,T,T): > 0 means [CLS] reads every word.
float min_cls_weight(const std::vector<float>& p, const std::vector<int64_t>& ids, int64_t B, int64_t H, int64_t T);

// What the padding mask (B,T,T), 1 = hide, does to the [CLS] rows (query 0): the real keys and
// the padded keys it hides, and how many keys are padding.
struct MaskRow {
  int64_t hidden_real = 0, hidden_pad = 0, pads = 0;
};
MaskRow cls_mask_row(const std::vector<float>& mask, const std::vector<int64_t>& ids, int64_t B, int64_t T);
// The largest weight [CLS]'s row of the attention weights p (B,H,T,T) gives a key its mask row
// hides (mask (B,T,T), 1 = hide): 0 when the attention applied the mask it was given.
float hidden_cls_weight(const std::vector<float>& p, const std::vector<float>& mask, int64_t B, int64_t H, int64_t T);

// Which final vectors the head reads, measured: the last layer's output of sentence 0 of b is
// moved by d (every channel + 1) at one position at a time and the module's head
// (EncoderClassifier::head: pool, dropout off, classifier) run again; weight[t] is how far the
// logits moved along W d, per unit (1 for the one position a [CLS] head reads, 1/n for each of n
// averaged). words: the sentence's tokens, for the description.
struct Pooling {
  std::vector<double> weight;  // (real positions of sentence 0); its padded positions are moved too, and named if read
  std::vector<bool> moves;     // whether moving position t moved the logits at all
  std::string words;           // "the final vector of position 0, [CLS]", "the mean of ...", ...
  bool cls_only = false;       // [CLS] at position 0, and it alone read, with weight 1
  bool has_cls = false;        // make_cls_batch put [CLS] at position 0 of sentence 0
  int64_t cls_at = -1;         // where sentence 0's first [CLS] is, if make_cls_batch put one anywhere (-1: none)
  bool linear = true;          // every move of the logits lies along W d: the head is a Linear of a weighted sum
};
Pooling measure_pooling(train::Classifier& m, const train::ClsBatch& b);

// --classify's text: a number 0..9999 written in words as train/numbers.hpp writes them
// ("forty eight"), case and spaces aside; throws UsageError naming the fix otherwise.
int64_t parse_number_words(const std::string& text);

}  // namespace ts
