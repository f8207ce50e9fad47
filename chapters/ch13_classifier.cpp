// ch13_classifier: an encoder-only Transformer (BERT's shape) learns to classify sentences.
//
// Follows: article 000's TransformerEncoder (learned positions, pre-LN layers, GELU feed-forward,
//          one Linear per head) with a [CLS] position whose final vector feeds a classifier;
//          article 002 §9.1.3 (an encoder-only Transformer turns a sentence into vectors, and
//          sentences with similar vectors can be put in the same class).
// Task:    read a number written in English words ("forty eight") and say its last digit (8):
//          10 classes; the deciding word sits at the end of sentences of 1..6 words.
// Formula: h = Encoder([CLS] w_1 .. w_n)  (B,T,C);  v = h[:, 0]  (B,C)  (or the mean over [CLS] and the words);
//          logits = v W^T + b  (B,10);  loss = mean CE(logits, n % 10);  grads by hand, then Adam
// Run:     ./build/ch13_classifier                          # train, evaluate, look inside
//          ./build/ch13_classifier --pool mean              # the mean of every real position ([CLS] too)
//          ./build/ch13_classifier --save ckpt && ./build/ch13_classifier --load ckpt --classify "forty eight"
//          ./build/ch13_classifier --check-grads            # every module's backward vs finite differences
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/classifier_report.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/loop_trace.hpp"  // check_step_finite
#include "exact/matmul.hpp"  // set_blas_threads
#include "exact/rng.hpp"     // manual_seed
#include "train/checkpoint.hpp"
#include "train/classifier.hpp"
#include "train/classifier_gradcheck.hpp"
#include "train/numbers.hpp"
#include "course/model_probes.hpp"
#include "course/plot.hpp"
#include "course/settings.hpp"
#include "course/train_knobs.hpp"

using namespace ts;
using namespace ts::train;

// The chapter's helpers, after main.
// The words of a batch row: "[CLS] forty eight" (padding left out).
static std::vector<std::string> tokens_of(const ClsBatch& b, int64_t i);
// A (rows, cols) float matrix as a Tensor, for heatmap().
static Tensor matrix(const std::vector<float>& v, int64_t rows, int64_t cols);
// Held-out numbers (from 20 on), per_class of each of `classes`: the sentences the similarity heatmap shows.
static std::vector<int64_t> pick_sentences(const std::vector<int64_t>& held_out, const std::vector<int64_t>& classes,
                                           int64_t per_class);
// The verdict and heatmaps of Step 4: the sentence vectors before and after training.
static void similarity_step(Chapter& ch, Classifier& before, Classifier& after, bool trained);
static bool grad_check_step(Chapter& ch, const Classifier& m, bool full);

int main(int argc, char** argv) {
  Chapter ch("ch13_classifier", _("An encoder-only Transformer learns to classify: [CLS], a head, the vectors it learns"),
             {{0, N_("(TransformerEncoder: learned positions, pre-LN, GELU)")},
              {2, N_("§9.1.3 (encoder-only Transformers classify)")}});
  Ch13Settings knobs = ch13_defaults();  // the defaults, in course/settings.cpp: ch14 trains this model with the same
  ClassifierConfig cfg;
  cfg.layers = knobs.layers, cfg.d_model = knobs.d_model, cfg.heads = knobs.heads, cfg.d_ff = knobs.d_ff;
  int64_t &steps = knobs.steps, &batch = knobs.batch, &log_every = knobs.log_every;
  double &lr = knobs.lr, &dropout = knobs.dropout;
  const std::string not_given = "\x01";  // --classify "" must be refused, not ignored
  std::string pool = "cls", classify_text = not_given, save_dir, load_dir;
  ch.option("--steps", steps, _("training steps (batches) (0 more with --load unless given)"));
  ch.option("--batch", batch, _("B, sentences per batch"), 1, 4096);
  ch.option("--layers", cfg.layers, _("N encoder layers"), 1, 12);
  width_options(ch, cfg.d_model, cfg.heads, cfg.d_ff);
  adam_options(ch, dropout, lr);
  ch.option("--log-every", log_every, _("print a progress line every N steps"), 1, 1000000);
  ch.option("--pool", pool, _("the sentence vector EncoderClassifier::pool gives the head: cls (BERT's choice) or "
                              "mean; Step 1 says which final vectors it reads, measured"));
  ch.option("--classify", classify_text, _("also classify this number written in words, e.g. \"forty eight\""));
  checkpoint_options(ch, save_dir, load_dir);
  bool check_grads = false;
  ch.flag("--check-grads", check_grads,
          _("check every entry of each module's gradient against finite differences, then stop (a few sampled "
            "entries are checked at step 0 of every training run)"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    for (const char* flag : {"--save", "--load", "--steps", "--classify"})
      if (check_grads && ch.given(flag))
        throw UsageError(trf("--check-grads checks the gradients of the untrained model and trains, loads or saves "
                             "nothing: drop {flag} (or --check-grads)",
                             fmt::arg("flag", flag)));
    if (ch.given("--steps")) check_range("--steps", steps, load_dir.empty() ? 1 : 0, 1000000);
    check_model_dims(cfg.d_model, cfg.heads, 2);
    check_adam_knobs(dropout, lr);
    if (pool != "cls" && pool != "mean")
      throw UsageError(trf("--pool must be 'cls' or 'mean', got {v}", fmt::arg("v", quoted_input(pool))));
    const int64_t number = classify_text == not_given ? -1 : parse_number_words(classify_text);
    if (!load_dir.empty() && !ch.given("--steps")) steps = 0;
    if (!save_dir.empty()) checkpoint_io("--save", [&] { prepare_save_folder(save_dir); });  // before training
    cfg.vocab = classifier_vocab();
    cfg.dropout = ch.eval ? 0.0 : dropout;
    cfg.mean_pool = pool == "mean";
    if (!load_dir.empty())  // the sizes (and the pooling, unless --pool is given) come from the checkpoint
      cfg = checkpoint_io("--load", [&] {
        return classifier_checkpoint_config(load_dir, cfg, [&](const std::string& f) { return ch.given(f); });
      });
    {  // memory: parameters, gradients and Adam's two moments; the held-out batch's activations (500 x 7 positions)
      const double C = double(cfg.d_model), F = double(cfg.d_ff), params = double(cfg.layers) * (4 * C * C + 2 * C * F);
      const double held_rows = 500.0 * 7.0, acts = double(cfg.layers) * held_rows * (16 * C + 2 * F);
      ch.budget(4.0 * (4 * params + acts), 3.0 * double(steps) * double(batch) * 7.0 * params,
                "--layers / --d-model / --d-ff / --steps / --batch");
    }
    // ---------------------------------------------------------------- the model
    Classifier model = init_classifier(cfg, ch.seed);
    Classifier untrained = model;  // the weights before training (Step 4 compares)
    if (check_grads) {
      ch.section(_("Gradient check: each module's hand-written backward vs finite differences of its forward"),
                 _("llm.c test_gpt2.c style; float, dropout off"));
      grad_check_step(ch, model, true);
      return;
    }
    Adam adam;  // torch.optim.Adam(lr, betas=(0.9, 0.98), eps=1e-9), as ch11
    if (!load_dir.empty()) {
      checkpoint_io("--load", [&] { load_classifier(load_dir, model, adam); });
    }
    adam.lr = lr;
    const int64_t K = cfg.classes, H = cfg.heads, L = cfg.layers;
    // which final vectors the head reads, measured on "[CLS] forty eight" (not read from --pool), padded to the
    // length of 7015's row so that a head that reads the padding is seen
    const Pooling pooling = measure_pooling(model, make_cls_batch({48, 7015}));

    // ---------------------------------------------------------------- 1) task and model
    const Split& split = number_split();
    // the label rule, measured in Step 1 from make_cls_batch's labels (the last digit, or not)
    bool label_is_last_digit = false;
    ch.section(pooling.has_cls      ? _("Step 1: the task, the input with its [CLS] position, the model")
               : pooling.cls_at > 0 ? trf("Step 1: the task, the input ([CLS] at position {p}, not 0: where "
                                          "make_cls_batch put it), the model",
                                          fmt::arg("p", pooling.cls_at))
                                    : _("Step 1: the task, the input (no [CLS] position: make_cls_batch put none), the model"),
               _("article 000 §TransformerEncoder; article 002 §9.1.3"));
    {
      const ClsBatch ex = make_cls_batch({48, 12, 300, 7015});
      std::string text;
      for (int64_t i = 0; i < ex.B; ++i) {
        std::string ids, words;
        for (const std::string& t : tokens_of(ex, i)) words += (words.empty() ? "" : " ") + t;
        for (int64_t t = 0; t < ex.T && ex.ids[size_t(i * ex.T + t)] != kPad; ++t)
          ids += fmt::format("{}{}", t ? " " : "", ex.ids[size_t(i * ex.T + t)]);
        text += fmt::format("{:<28} [{}] -> class {}\n", words, ids, ex.labels[size_t(i)]);
      }
      text.pop_back();
      // the label rule, read from make_cls_batch's labels of every number, not from the task's name
      std::vector<int64_t> all = split.train;
      all.insert(all.end(), split.held_out.begin(), split.held_out.end());
      const ClsBatch every = make_cls_batch(all);
      int64_t other = 0, first = -1;
      for (int64_t i = 0; i < every.B; ++i)
        if (every.labels[size_t(i)] != every.numbers[size_t(i)] % 10) first = first < 0 ? i : first, ++other;
      label_is_last_digit = other == 0;
      const std::string rule =
          other == 0 ? trf("the class is the last digit, n % 10, for all {N} numbers (make_cls_batch's labels): it "
                           "depends on the last word, wherever that falls",
                           fmt::arg("N", every.B))
                     : trf("the class is NOT the last digit for {k} of the {N} numbers (e.g. {n} -> class {c}): the "
                           "labels {site} gives",
                           fmt::arg("k", other), fmt::arg("N", every.B), fmt::arg("n", every.numbers[size_t(first)]),
                           fmt::arg("c", every.labels[size_t(first)]), fmt::arg("site", make_cls_batch_site()));
      // whether make_cls_batch put [CLS] first, read from the rows it gave
      int64_t no_cls = -1;
      for (int64_t i = 0; i < ex.B && no_cls < 0; ++i)
        if (ex.ids[size_t(i * ex.T)] != cls_id()) no_cls = i;
      ch.show("[(tokens, ids, label) for n in (48, 12, 300, 7015)]", text,
              no_cls < 0 ? trf("[CLS] (id {cls}) is put before the words of ch11's vocabulary; {rule}",
                               fmt::arg("cls", cls_id()), fmt::arg("rule", rule))
                         : trf("no [CLS] (id {cls}) is put before the words: the row of {n} starts with '{w}' ({site}); "
                               "{rule}",
                               fmt::arg("cls", cls_id()), fmt::arg("n", ex.numbers[size_t(no_cls)]),
                               fmt::arg("w", classifier_token(ex.ids[size_t(no_cls * ex.T)])),
                               fmt::arg("site", make_cls_batch_site()), fmt::arg("rule", rule)),
              Shown::Info);
    }
    ch.say(trf("  {train} numbers train, {held} are held out (ch11's split) and only evaluated.",
               fmt::arg("train", split.train.size()), fmt::arg("held", split.held_out.size())));
    ch.show("{part: sum(p.numel() for p in module.parameters())}", classifier_parameter_table(model),
            trfn("TransformerEncoder(vocab={V}, positions={P}, N={N}, C={C}, H={H} head of {D}, F={F}, {act}, {ln}) + "
                 "Linear({C}, {K}); the sentence vector: {pool}",
                 "TransformerEncoder(vocab={V}, positions={P}, N={N}, C={C}, H={H} heads of {D}, F={F}, {act}, {ln}) + "
                 "Linear({C}, {K}); the sentence vector: {pool}",
                 H,
                fmt::arg("act", activation_words(feed_forward_activation(
                                    make_classifier_module(cfg).encoder.layers.at(0).feed_forward))),
                fmt::arg("ln", wiring_words(classifier_block_wiring())),
                fmt::arg("V", cfg.vocab), fmt::arg("P", cfg.max_len), fmt::arg("N", L), fmt::arg("C", cfg.d_model),
                fmt::arg("H", H), fmt::arg("D", cfg.d_model / H), fmt::arg("F", cfg.d_ff), fmt::arg("K", K),
                fmt::arg("pool", pooling.words)),
            Shown::Info);

    // ---------------------------------------------------------------- 2) train
    ch.section(_("Step 2: the training step: forward, loss, zero the gradients, backward, Adam"),
               _("article 004 §模型训练和测试 train_step; llm.c's loop"));
    set_blas_threads(1);  // (B*T, 64) products: waking more BLAS threads costs more than it saves
    ClsWorkspace ws;
    manual_seed(ch.seed * 1000003ull + 1);  // dropout masks: every Dropout module draws from the default generator
    Epochs epochs(batch, ch.seed);
    std::vector<double> curve;
    if (steps > 0) {
      ch.say(trf("  {steps} steps of B = {B} ({per} batches per epoch), Adam(lr={lr}), dropout {p}",
                 fmt::arg("steps", steps), fmt::arg("B", batch), fmt::arg("per", epochs.batches_per_epoch()),
                 fmt::arg("lr", lr), fmt::arg("p", cfg.dropout)));
      if (!grad_check_step(ch, model, false)) return;  // the backward no longer matches its forward: no training
      const bool tty = ch.live_progress();
      double run_loss = 0;
      int64_t run_n = 0, run_correct = 0;
      const auto t0 = std::chrono::steady_clock::now();
      TrainedNumbers trained;  // every training batch's numbers
      for (int64_t s = 0; s < steps; ++s) {
        int64_t epoch = 0, bi = 0;
        const ClsBatch b = make_cls_batch(epochs.next(&epoch, &bi));
        trained.add(b.numbers);  // the numbers this step trains on, against the held-out ones (after the loop)
        classifier_forward(model, ws, b, true);                                   // forward
        const float loss = classifier_loss(ws, b, K);                             // loss
        classifier_backward(model, ws, b);                                        // zero the gradients, backward
        adam.update(model.model.named_parameters(), ws.grad.named_parameters());  // Adam
        // a NaN or inf named where it was measured: the forward (step 1), the backward (a finite loss), else --lr
        check_step_finite(loss, ws.grad.named_parameters(), keys_of(ws.grad.named_parameters()), s + 1,
                          classifier_forward_site(), classifier_backward_site());
        curve.push_back(loss);
        const auto pred = predictions(ws, K);
        for (int64_t i = 0; i < b.B; ++i) run_correct += pred[size_t(i)] == b.labels[size_t(i)];
        run_loss += loss, run_n += b.B;
        if ((s + 1) % log_every == 0 || s + 1 == steps) {
          if (tty) std::cout << "\r\033[K";
          ch.show(fmt::format("step {}", s + 1),
                  fmt::format("step {}, epoch {}, loss:{:.4f}, acc:{:.4f}", s + 1, epoch,
                              run_loss / double(run_n / b.B), double(run_correct) / double(run_n)),
                  "", Shown::Article);
          run_loss = 0, run_n = 0, run_correct = 0;
        }
        if (tty && (s % 5 == 0 || s + 1 == steps)) {
          const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::cout << "\r\033[K" << progress_bar(s + 1, steps, loss, double(s + 1) / dt) << std::flush;
        }
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (tty) std::cout << "\r\033[K";
      ch.say(trf("  {n} steps in {s:.1f} s: {r:.1f} steps/s (loss and acc: the mean over the steps since the last "
                 "line, in training mode)",
                 fmt::arg("n", steps), fmt::arg("s", secs), fmt::arg("r", double(steps) / secs)));
      ch.figure(_("loss per step (log scale):") + std::string("\n") + loss_curve(curve));
      show_train_eval_overlap(ch, trained, split.held_out, number_split_site() + ", " + epochs_next_site());
    }

    // ---------------------------------------------------------------- 3) held-out accuracy
    ch.section(_("Step 3: held-out accuracy, and classify()"), _("article 002 §9.1.3"));
    const ClsBatch held = make_cls_batch(split.held_out);
    classifier_forward(model, ws, held, false);
    const auto pred = predictions(ws, K);
    int64_t right = 0;
    std::vector<size_t> wrong;
    for (size_t i = 0; i < pred.size(); ++i) {
      right += pred[i] == held.labels[i];
      if (pred[i] != held.labels[i]) wrong.push_back(i);
    }
    ch.show("held-out accuracy",
            fmt::format("held-out accuracy: {}/{} ({:.1f} %)", right, held.B, 100.0 * double(right) / double(held.B)),
            trf("argmax of the {K} logits of each of the {n} numbers never seen in training", fmt::arg("K", K),
                fmt::arg("n", held.B)),
            Shown::Article);
    for (size_t k = 0; k < wrong.size() && k < 3; ++k)
      ch.say(trf("  wrong: {n} (\"{w}\") -> {p}, its label is {d}", fmt::arg("n", held.numbers[wrong[k]]),
                 fmt::arg("w", number_to_words(held.numbers[wrong[k]])), fmt::arg("p", pred[wrong[k]]),
                 fmt::arg("d", held.labels[wrong[k]])));
    // why one position can stand for the sentence: its row of every layer's attention
    float lo = 1.0f;
    for (int64_t l = 0; l < L; ++l) lo = std::min(lo, min_cls_weight(ws.layers[size_t(l)].p, held.ids, held.B, H, held.T));
    const MaskRow cls_mask = cls_mask_row(ws.mask, held.ids, held.B, held.T);
    // and whether the attention applied that mask: the weight it gave the keys the mask hides
    float hidden_w = 0.0f;
    for (int64_t l = 0; l < L; ++l)
      hidden_w = std::max(hidden_w, hidden_cls_weight(ws.layers[size_t(l)].p, ws.mask, held.B, H, held.T));
    const std::string hides =
        !(hidden_w == 0.0f)
            ? ch.verdict(false, trf("its query row's mask hides {k} keys, yet the attention gave them weight up to "
                                    "{w:.3g}: the mask was not applied (look at {site})",
                                    fmt::arg("k", cls_mask.hidden_real + cls_mask.hidden_pad), fmt::arg("w", hidden_w),
                                    fmt::arg("site", ch.ran("attention_heads"))))
        : cls_mask.hidden_real > 0 ? trf("its query row hides {k} real tokens", fmt::arg("k", cls_mask.hidden_real))
        : cls_mask.hidden_pad == cls_mask.pads ? std::string(_("its query row hides only the padding"))
                                               : trf("its query row leaves {v} of the {p} padded keys visible",
                                                     fmt::arg("v", cls_mask.pads - cls_mask.hidden_pad),
                                                     fmt::arg("p", cls_mask.pads));
    if (pooling.cls_only)
      ch.say(trf("  Why [CLS] can summarise the sentence: {hides}, and over the {n} held-out sentences, {H} heads and {L} "
                 "layers the smallest weight it gives a real token is {lo:.1e}{gt}: every layer mixes every word into "
                 "position 0, which holds no word of its own.",
                 fmt::arg("hides", hides), fmt::arg("n", held.B), fmt::arg("H", H), fmt::arg("L", L), fmt::arg("lo", lo),
                 fmt::arg("gt", lo > 0.0f ? " > 0" : _(" (some token gets no weight at all)"))));
    else
      ch.say(trf("  The head reads {pool}, not [CLS] alone ({site}, called by {head}). Position 0: {hides}; over the "
                 "{n} held-out sentences, {H} heads and {L} layers the smallest weight it gives a real token is {lo:.1e}.",
                 fmt::arg("pool", pooling.words), fmt::arg("site", classifier_head_site()),
                 fmt::arg("head", ch.ran("EncoderClassifier::head")), fmt::arg("hides", hides),
                 fmt::arg("n", held.B), fmt::arg("H", H), fmt::arg("L", L), fmt::arg("lo", lo)));
    if (number >= 0) {
      const ClsBatch one = make_cls_batch({number});
      classifier_forward(model, ws, one, false);
      const int64_t p = predictions(ws, K)[0], label = one.labels[0];
      ch.show(fmt::format("classify(\"{}\")", number_to_words(number)), fmt::format("class: {}", p),
              p == label ? _("correct") : trf("WRONG: the label of {n} is {d}", fmt::arg("n", number),
                                              fmt::arg("d", label)),
              Shown::Article);
    }

    // ---------------------------------------------------------------- 4) the sentence vectors
    ch.section(_("Step 4: do sentences of one class now have similar vectors? (§9.1.3's claim, measured)"),
               _("article 002 §9.1.3"));
    similarity_step(ch, untrained, model, steps > 0 || !load_dir.empty());

    // ---------------------------------------------------------------- 5) what [CLS] reads
    if (pooling.has_cls)
      ch.section(_("Step 5: what [CLS] reads: its row of the last layer's attention"), _("article 000 §Self-Attention"));
    else
      ch.section(_("Step 5: what position 0 reads (a word: no [CLS] was put there): its row of the last layer's "
                   "attention"),
                 _("article 000 §Self-Attention"));
    {
      if (!pooling.has_cls)
        ch.say(trf("  make_cls_batch put no [CLS] at position 0 ({site}): the rows below are a word's.",
                   fmt::arg("site", make_cls_batch_site())));
      if (!pooling.cls_only && pooling.has_cls)
        ch.say(trf("  The classifier does not read [CLS] alone but {pool}: the rows below are what position 0 "
                   "attends to, not the vector the head reads.",
                   fmt::arg("pool", pooling.words)));
      classifier_forward(model, ws, held, false);
      const std::vector<float>& p = ws.layers.back().p;
      int64_t on_last = 0;  // sentences whose [CLS] row peaks on the last word
      for (int64_t i = 0; i < held.B; ++i) {
        int64_t len = 0;
        for (int64_t t = 0; t < held.T; ++t) len += held.ids[size_t(i * held.T + t)] != kPad;
        on_last += most_attended(cls_row(p, i, H, held.T), H, held.T) == len - 1;
      }
      std::vector<std::string> heads;
      for (int64_t h = 0; h < H; ++h) heads.push_back(fmt::format("head {}", h));
      HeatmapOptions opt;
      opt.mode = heatmap_mode(ch.color);
      opt.vmin = 0, opt.vmax = 1;
      opt.cell_width = 9;
      for (int64_t n : pick_sentences(split.held_out, {8, 2, 0}, 1)) {
        const size_t i = size_t(std::lower_bound(split.held_out.begin(), split.held_out.end(), n) - split.held_out.begin());
        const std::vector<std::string> cols = tokens_of(held, int64_t(i));
        const int64_t T = int64_t(cols.size());
        std::vector<float> row = cls_row(p, int64_t(i), H, held.T), cut;
        for (int64_t h = 0; h < H; ++h) cut.insert(cut.end(), row.begin() + h * held.T, row.begin() + h * held.T + T);
        const int64_t top = most_attended(cut, H, T);
        opt.title = trf(pooling.has_cls ? N_("layer {l}, [CLS]'s row for {n}: rows = heads, columns = keys; the "
                                             "heads together weight '{w}' most{last}")
                                        : N_("layer {l}, position 0's row for {n}: rows = heads, columns = keys; "
                                             "the heads together weight '{w}' most{last}"),
                        fmt::arg("l", L - 1), fmt::arg("n", n), fmt::arg("w", cols[size_t(top)]),
                        fmt::arg("last", top != T - 1        ? ""
                                         : label_is_last_digit ? _(" (the last word, which decides the class)")
                                                               : _(" (the last word)")));
        ch.figure(heatmap(matrix(cut, H, T), heads, cols, opt));
      }
      ch.say(trf(pooling.has_cls ? N_("  Over the {n} held-out sentences, [CLS]'s row (summed over the {H} heads) "
                                      "in layer {l} weights the last word most in {k} ({pct:.1f} %).")
                                 : N_("  Over the {n} held-out sentences, position 0's row (summed over the {H} "
                                      "heads) in layer {l} weights the last word most in {k} ({pct:.1f} %)."),
                 fmt::arg("n", held.B), fmt::arg("H", H), fmt::arg("l", L - 1), fmt::arg("k", on_last),
                 fmt::arg("pct", 100.0 * double(on_last) / double(held.B))));
    }

    // ---------------------------------------------------------------- 6) save
    if (!save_dir.empty()) {
      ch.section(_("Step 6: save the weights and the optimizer as safetensors"), _("article 004 ckpt_manager.save()"));
      checkpoint_io("--save", [&] { save_classifier(save_dir, model, adam); });
      ch.show("save", fmt::format("saved {}/model.safetensors and {}/optimizer.safetensors (step {})", save_dir, save_dir,
                                  adam.step),
              _("the twin's state_dict keys; load them with --load DIR"), Shown::Info);
    }
  });
}

static std::vector<std::string> tokens_of(const ClsBatch& b, int64_t i) {
  std::vector<std::string> out;
  for (int64_t t = 0; t < b.T && b.ids[size_t(i * b.T + t)] != kPad; ++t)
    out.push_back(classifier_token(b.ids[size_t(i * b.T + t)]));
  return out;
}

static Tensor matrix(const std::vector<float>& v, int64_t rows, int64_t cols) {
  Tensor t = Tensor::from_shape({size_t(rows), size_t(cols)});
  std::copy_n(v.begin(), rows * cols, t.begin());
  return t;
}

static std::vector<int64_t> pick_sentences(const std::vector<int64_t>& held_out, const std::vector<int64_t>& classes,
                                           int64_t per_class) {
  std::vector<int64_t> out;
  for (int64_t c : classes) {
    int64_t k = 0;
    for (int64_t n : held_out)
      if (n % 10 == c && n >= 20 && k < per_class) out.push_back(n), ++k;
  }
  return out;
}

static void similarity_step(Chapter& ch, Classifier& before, Classifier& after, bool trained) {
  const Split& split = number_split();
  const ClsBatch held = make_cls_batch(split.held_out);
  const std::vector<int64_t> shown = pick_sentences(split.held_out, {8, 2, 0, 5}, 2);
  const ClsBatch few = make_cls_batch(shown);
  ClsWorkspace ws;
  const int64_t C = after.cfg.d_model;
  std::vector<std::string> labels;
  for (size_t i = 0; i < shown.size(); ++i) labels.push_back(fmt::format("{}:{}", shown[i], few.labels[i]));
  HeatmapOptions opt;
  opt.mode = heatmap_mode(ch.color);
  opt.vmin = -1, opt.vmax = 1;
  opt.cell_width = 8;
  Similarity all[2];
  for (int k = 0; k < 2; ++k) {
    Classifier& m = k ? after : before;
    classifier_forward(m, ws, held, false);
    all[k] = cosine_similarity(ws.pooled, C, held.labels);
    classifier_forward(m, ws, few, false);
    const Similarity s = cosine_similarity(ws.pooled, C, few.labels);
    opt.title = k ? trf("cosine similarity of the sentence vectors AFTER training (labels: number:class)")
                  : trf("the same {n} sentences BEFORE training", fmt::arg("n", few.B));
    ch.figure(heatmap(matrix(s.cos, few.B, few.B), labels, labels, opt));
  }
  const std::string figures =
      trf("over the {n} held-out sentences, the mean cosine of same-class pairs is {s:.3f} and of different-class "
          "pairs {d:.3f} (before training: {s0:.3f} and {d0:.3f})",
          fmt::arg("n", held.B), fmt::arg("s", all[1].same), fmt::arg("d", all[1].different),
          fmt::arg("s0", all[0].same), fmt::arg("d0", all[0].different));
  if (!trained) {
    ch.say("  " + figures + _(". Nothing was trained (--steps 0): there is no claim to check."));
    return;
  }
  const bool ok = all[1].same > all[1].different;
  ch.say("  " + ch.verdict(ok, ok ? figures + _(": sentences of one class now sit closer together than sentences of "
                                                "different classes, as §9.1.3 says")
                                  : figures + _(": same-class sentences do NOT sit closer than the others: the "
                                                "vectors have not learned the classes")));
}

// The gradient check of train/classifier_gradcheck.hpp on the model's weights: one line, OK or
// NOT OK naming the module (and its backward's file:line) whose gradient first disagrees.
// full: every entry of each module (--check-grads); else 3 sampled entries of each tensor (step 0).
static bool grad_check_step(Chapter& ch, const Classifier& m, bool full) {
  const ClsGradCheck c = check_classifier_grads(m, make_cls_batch({48, 12, 300, 7015}), full ? 0 : 3);
  if (c.nonfinite > 0) {  // NaN or inf: nothing to compare, and no OK over them
    const std::string what = c.tensor == "output"           ? _("output")
                             : c.tensor == "input gradient"   ? _("input gradient")
                             : c.tensor == "parameter gradient" ? _("parameter gradients")
                                                                : _("finite differences");
    ch.say("  " + ch.verdict(false, trf("gradient check: the {what} of {module} holds {n} NaN or inf values, so no "
                                        "gradient can be compared; the trace of its forward first saw one in {where}; "
                                        "training stopped",
                                        fmt::arg("what", what), fmt::arg("module", c.module), fmt::arg("n", c.nonfinite),
                                        fmt::arg("where", c.first_nonfinite.empty() ? c.module : c.first_nonfinite))));
    return false;
  }
  ch.say("  " + ch.verdict(c.ok,
                           N_("gradient check: {n} modules' backwards (leaves first, up to the whole "
                              "EncoderClassifier) agree with central finite differences of their forwards on {e} "
                              "entries of {t} parameter tensors and inputs; largest |grad - fd| {d:.2g} of its "
                              "tensor's largest gradient (<= {tol:g}, float)"),
                           N_("gradient check: the backward of {module} disagrees with finite differences of "
                              "its forward: {tensor} grad {g:.4g} vs fd {fd:.4g} ({r:.2g} of the tensor's largest "
                              "gradient, above {tol:g}); {site} no longer matches its forward: change it with the "
                              "forward (or undo the edit); training stopped"),
                           fmt::arg("n", c.modules), fmt::arg("e", c.entries), fmt::arg("t", c.tensors),
                           fmt::arg("d", c.maxrel), fmt::arg("tol", kClsFdTolerance), fmt::arg("module", c.module),
                           fmt::arg("tensor", c.tensor), fmt::arg("g", c.grad), fmt::arg("fd", c.fd),
                           fmt::arg("r", c.rel), fmt::arg("site", c.site)));
  return c.ok;
}
