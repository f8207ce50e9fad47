// ch11_training: the Transformer learns. Teacher forcing, create_mask, loss_fun, Adam, the
// progress lines, then evaluate()/translate() and the attention the model learned.
//
// Follows: article 004 "模型训练和测试" (hyperparameters; Adam(0.001, beta_1=0.9, beta_2=0.98,
//          epsilon=1e-9); loss_fun; train_step with tar_inp = targets[:, :-1], tar_real =
//          targets[:, 1:] and create_mask; the 'epoch {}, batch {}, loss:{:.4f}, acc:{:.4f}' lines;
//          evaluate() and translate() printing 输入: / 预测输出:), on the course's own
//          encoder-decoder (article 002's create_model, ch10) with article 004's ReLU FFN.
// Task:    numbers written as digits -> English words ("2048" -> "two thousand forty eight").
// Formula: loss = reduce_mean(CE(tar_real, model(inputs, tar_inp)) * mask)   over all B*T positions
//          grads by hand (src/train/ops.hpp: one *_backward per forward op), then
//          m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr m^ / (sqrt(v^) + eps)
// Run:     ./build/ch11_training                         # train ~1000 steps, evaluate, look inside
//          ./build/ch11_training --save ckpt && ./build/ch11_training --load ckpt --translate 1234
//          ./build/ch11_training --check-grads           # every gradient vs finite differences
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "exact/print.hpp"
#include "train/budget.hpp"
#include "train/checkpoint.hpp"
#include "train/gradcheck.hpp"
#include "train/plot.hpp"
#include "train/trainer.hpp"
#include "transformer/kv_cache.hpp"  // thousands()

using namespace ts;
using namespace ts::train;

// The chapter's helpers, after main.
// --translate's value: a whole number 0..9999 written with digits only.
static int64_t parse_number(const std::string& text);
// ids -> their words, for the heatmaps' labels ("<start> 2 0 4 8 <end>").
static std::vector<std::string> tokens_of(const Vocab& v, const std::vector<int64_t>& ids);
// The parameters per top-level part of the model (encoder, decoder, ...) and their total.
static std::string parameter_table(const Model<float>& model);
// One line per parameter tensor of --check-grads: OK / NOT OK, max difference, first values.
template <class Rows>
static std::string grad_table(const Rows& rows);
// Runs a --save/--load action: a checkpoint that is not right is bad input (exit 2), a failing
// disk an I/O failure (exit 1); the message starts with the flag.
template <class Work>
static auto checkpoint_io(const char* flag, const Work& work) {
  try {
    return work();
  } catch (const FileIoError& e) {
    throw IoError(std::string(flag) + ": " + e.translated(tr(e.msgid)));
  } catch (const FileError& e) {
    throw UsageError(std::string(flag) + ": " + e.translated(tr(e.msgid)));
  }
}
// translate(n): the article's 输入: / 预测输出: lines, and whether the words are right.
static void translation(Chapter& ch, int64_t n, const std::string& predicted);

int main(int argc, char** argv) {
  Chapter ch("ch11_training", _("The Transformer learns: train_step, loss_fun, Adam, evaluate and translate"),
             _("article 004 《GPT （一）transformer原理和代码详解》 §模型训练和测试 (train_step, create_mask, loss_fun, "
               "Adam, evaluate/translate)"));
  int64_t steps = -1, batch = 64, layers = 2, d_model = 64, heads = 4, d_ff = 256, log_every = 50, threads = 2;
  double dropout = 0.1, lr = 0.001, label_smoothing = 0.0;
  bool post_ln = false, no_look_ahead = false, no_scale = false, check_grads = false;
  const std::string not_given = "\x01";  // --translate "" must be refused, not ignored
  std::string translate_text = not_given, save_dir, load_dir, loss_name = "article";
  ch.option("--steps", steps, _("training steps (batches) (default 1000; 0 more with --load unless given)"));
  ch.option("--batch", batch, _("B, numbers per batch (default 64, the article's BATCH_SIZE)"), 1, 4096);
  ch.option("--layers", layers, _("N encoder and N decoder layers (default 2)"), 1, 12);
  ch.option("--d-model", d_model, _("C, the model width (default 64)"), 2, 1024);
  ch.option("--heads", heads, _("H, attention heads; must divide --d-model (default 4)"));
  ch.option("--d-ff", d_ff, _("F, the feed-forward width (default 256)"), 1, 8192);
  ch.option("--dropout", dropout, _("dropout_rate (default 0.1)"));
  ch.option("--lr", lr, _("Adam's learning rate (default 0.001, the article's)"));
  ch.option("--label-smoothing", label_smoothing, _("spread this much target probability over all words (default 0)"));
  ch.option("--loss", loss_name,
            _("the loss to train on: article (loss_fun: mean over all B*T positions) or token (mean over real tokens) "
              "(default article)"));
  ch.option("--log-every", log_every, _("print the article's progress line every N batches (default 50)"), 1, 1000000);
  ch.option("--threads", threads, _("threads for training, 1 or 2 (default 2; results depend on it)"), 1, 2);
  ch.flag("--post-ln", post_ln, _("post-LN (article 004, the paper) instead of pre-LN (article 002)"));
  ch.flag("--no-look-ahead", no_look_ahead, _("exercise: create_mask without the look-ahead mask"));
  ch.flag("--no-scale", no_scale, _("exercise: do not divide the scores by sqrt(d_k)"));
  ch.option("--translate", translate_text, _("also translate this number (0..9999) with the trained model"));
  ch.option("--save", save_dir, _("write the weights and Adam's state to DIR as safetensors"));
  ch.option("--load", load_dir, _("start from the checkpoint in DIR (then train only if --steps is given)"));
  ch.flag("--check-grads", check_grads, _("check every gradient against finite differences (double, tiny model)"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    // ---------------------------------------------------------------- knobs
    if (ch.given("--steps")) check_range("--steps", steps, 1, 1000000);  // not given: 1000, or 0 after --load
    check_model_dims(d_model, heads);
    if (!(dropout >= 0.0 && dropout < 1.0))
      throw UsageError(trf("--dropout must be in [0, 1), got {v}", fmt::arg("v", dropout)));
    if (!(lr > 0.0 && lr <= 1.0)) throw UsageError(trf("--lr must be in (0, 1], got {v}", fmt::arg("v", lr)));
    if (!(label_smoothing >= 0.0 && label_smoothing < 1.0))
      throw UsageError(trf("--label-smoothing must be in [0, 1), got {v}", fmt::arg("v", label_smoothing)));
    if (loss_name != "article" && loss_name != "token")
      throw UsageError(trf("--loss must be 'article' or 'token', got '{v}'", fmt::arg("v", loss_name)));
    const int64_t number = translate_text == not_given ? -1 : parse_number(translate_text);
    for (const auto& [flag, dir] : {std::pair{"--save", &save_dir}, std::pair{"--load", &load_dir}})
      if (ch.given(flag) && dir->empty()) throw UsageError(trf("{flag} needs a folder, got ''", fmt::arg("flag", flag)));
    if (!load_dir.empty() && steps == -1) steps = 0;
    if (steps == -1) steps = 1000;
    // refuse an unusable --save before training, not after (train/checkpoint.hpp)
    if (!save_dir.empty()) checkpoint_io("--save", [&] { prepare_save_folder(save_dir); });
    const Reduction reduction = loss_name == "article" ? Reduction::ArticleMean : Reduction::TokenMean;
    const Vocab& sv = source_vocab();
    const Vocab& tv = target_vocab();
    ModelConfig cfg;
    cfg.src_vocab = sv.size();
    cfg.tgt_vocab = tv.size();
    cfg.layers = layers, cfg.d_model = d_model, cfg.heads = heads, cfg.d_ff = d_ff;
    cfg.dropout = ch.eval ? 0.0 : dropout;
    cfg.pre_ln = !post_ln, cfg.look_ahead = !no_look_ahead, cfg.scale_scores = !no_scale;
    cfg.label_smoothing = label_smoothing;
    if (!load_dir.empty()) {
      // the checkpoint's settings: a flag not given takes them, a flag given must agree
      cfg = checkpoint_io("--load", [&] {
        return adopt_checkpoint_settings(cfg, checkpoint_settings(load_dir, cfg),
                                         [&](const std::string& flag) { return ch.given(flag); });
      });
      layers = cfg.layers, d_model = cfg.d_model, heads = cfg.heads, d_ff = cfg.d_ff;
    }

    if (check_grads) {
      // ---------------------------------------------------------------- --check-grads
      ch.section(_("Gradient check: every parameter, hand-written backward vs finite differences"),
                 _("llm.c test_gpt2.c style; double precision, dropout off"));
      ModelConfig tiny = tiny_config();
      tiny.src_vocab = cfg.src_vocab, tiny.tgt_vocab = cfg.tgt_vocab;
      tiny.pre_ln = cfg.pre_ln, tiny.look_ahead = cfg.look_ahead, tiny.scale_scores = cfg.scale_scores;
      tiny.label_smoothing = cfg.label_smoothing;
      const std::vector<int64_t> nums = {7, 42, 905, 2048};
      const auto rows = check_grads_fd(tiny, ch.seed, nums);
      ch.say(trf("  tiny model: {n}+{n} layers, d_model {C}, {H} heads, d_ff {F}; batch = {{7, 42, 905, 2048}} "
                 "(padding on both sides); central differences, h = 1e-5",
                 fmt::arg("n", tiny.layers), fmt::arg("C", tiny.d_model), fmt::arg("H", tiny.heads),
                 fmt::arg("F", tiny.d_ff)));
      ch.show("check every gradient", grad_table(rows),
              _("a backward function edited wrongly shows up here as NOT OK"), Shown::Twin);
      const size_t bad = static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return !r.ok; }));
      ch.say("  " + ch.verdict(bad == 0, bad == 0 ? trf("all {n} parameter tensors match finite differences "
                                                         "(maxdiff <= 1e-6 x max |grad|)",
                                                         fmt::arg("n", rows.size()))
                                                   : trf("{bad} of {n} parameter tensors differ from finite "
                                                         "differences: a *_backward no longer matches its forward",
                                                         fmt::arg("bad", bad), fmt::arg("n", rows.size()))));
      return;
    }

    const TrainCost cost = training_cost(cfg, batch, steps, threads, int64_t(number_split().held_out.size()), 10);
    ch.budget(cost.bytes, cost.madds, "--batch, --d-model, --d-ff, --layers or --steps");
    Model<float> model = init_model(cfg, ch.seed);
    const std::vector<float> untrained = model.params;
    Adam loaded;
    if (!load_dir.empty()) {
      // read and check the whole checkpoint before anything else happens
      checkpoint_io("--load", [&] { load_checkpoint(load_dir, model, loaded); });
    }

    // ---------------------------------------------------------------- 1) data, model, masks
    ch.section(_("Step 1: the task, the model, one batch and its three masks"),
               _("article 004 §模型训练和测试, 1) 超参设置"));
    {
      std::string ex;
      for (int64_t n : {2048, 907, 15, 0, 9999}) ex += fmt::format("{:>6} -> {}\n", n, number_to_words(n));
      ex.pop_back();
      ch.show("[(n, number_to_words(n)) for n in examples]", ex,
              _("a translation generated in code: digits in, English words out (no 'and', no hyphens)"), Shown::Twin);
    }
    ch.show("input_vocab_size, target_vocab_size", fmt::format("{} {}", sv.size(), tv.size()),
            trf("article 004's convention: pad = 0, start = vocab_size ({ss} / {ts}), end = vocab_size + 1 ({se} / "
                "{te}); source: 10 digits, target: {w} words",
                fmt::arg("ss", sv.start()), fmt::arg("ts", tv.start()), fmt::arg("se", sv.end()),
                fmt::arg("te", tv.end()), fmt::arg("w", tv.vocab_size - 1)),
            Shown::Twin);
    const Split& split = number_split();
    ch.say(trf("  {train} numbers train, {held} are held out (the same for every seed) and only evaluated.",
               fmt::arg("train", split.train.size()), fmt::arg("held", split.held_out.size())));
    ch.show("{part: sum(p.numel() for p in module.parameters())}", parameter_table(model),
            trf("create_model(V_src={vs}, V_tgt={vt}, N={N}, d_model={C}, d_ff={F}, h={H}), {ln}, ReLU feed-forward, "
                "dropout {p}",
                fmt::arg("vs", cfg.src_vocab), fmt::arg("vt", cfg.tgt_vocab), fmt::arg("N", layers),
                fmt::arg("C", d_model), fmt::arg("F", d_ff), fmt::arg("H", heads),
                fmt::arg("ln", cfg.pre_ln ? "pre-LN" : "post-LN"), fmt::arg("p", cfg.dropout)),
            Shown::Twin);
    Epochs epochs(batch, ch.seed);
    {
      // a demo batch: the first training batch of this seed
      Epochs peek(batch, ch.seed);
      int64_t e = 0, bi = 0;
      const Batch b = make_batch(peek.next(&e, &bi));
      int64_t shortest = b.S, longest = 0;  // source lengths without padding
      for (int64_t i = 0; i < b.B; ++i) {
        int64_t len = 0;
        for (int64_t s = 0; s < b.S; ++s) len += b.inputs[size_t(i * b.S + s)] != 0;
        shortest = std::min(shortest, len), longest = std::max(longest, len);
      }
      ch.show("inputs.shape, targets.shape",
              fmt::format("{} {}", size_str({size_t(b.B), size_t(b.S)}), size_str({size_t(b.B), size_t(b.T + 1)})),
              shortest < longest
                  ? trf("padded to the longest number in the batch: its sources hold {lo} to {hi} tokens, so every "
                        "padding mask matters",
                        fmt::arg("lo", shortest), fmt::arg("hi", longest))
                  : trf("every source of this batch holds {n} tokens: no padding here, but other batches have some",
                        fmt::arg("n", longest)),
              Shown::Twin);
      ch.show("create_mask(inputs, tar_inp)",
              fmt::format("encode_padding_mask {}\ncombined_mask       {}\ndecode_padding_mask {}",
                          size_str({size_t(b.B), 1, 1, size_t(b.S)}), size_str({size_t(b.B), 1, size_t(b.T), size_t(b.T)}),
                          size_str({size_t(b.B), 1, 1, size_t(b.S)})),
              _("1 = hide: source padding (encoder), max(target padding, look-ahead) (decoder self-attention), source "
                "padding again (cross-attention)"),
              Shown::Twin);
      // the shortest number of the batch: the most padding
      int64_t row = 0;
      for (int64_t i = 0; i < b.B; ++i)
        if (b.numbers[size_t(i)] < b.numbers[size_t(row)]) row = i;
      const auto m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T, cfg.look_ahead);
      // combined_mask[row]   (T,T)
      Tensor comb = Tensor::from_shape({size_t(b.T), size_t(b.T)});
      for (int64_t q = 0; q < b.T; ++q)
        for (int64_t s = 0; s < b.T; ++s) comb(size_t(q), size_t(s)) = m.dec_self[size_t((row * b.T + q) * b.T + s)];
      std::vector<int64_t> ti(b.tar_inp.begin() + row * b.T, b.tar_inp.begin() + (row + 1) * b.T);
      HeatmapOptions opt;
      opt.mode = heatmap_mode(ch.color);
      opt.vmin = 0, opt.vmax = 1;
      opt.cell_width = 8;
      opt.title = trf("combined_mask of {n} (\"{words}\"): rows = queries, columns = keys, dark = hidden",
                      fmt::arg("n", b.numbers[size_t(row)]), fmt::arg("words", number_to_words(b.numbers[size_t(row)])));
      ch.figure(heatmap(comb, tokens_of(tv, ti), tokens_of(tv, ti), opt));
    }

    // ---------------------------------------------------------------- 2) train
    ch.section(_("Step 2: train_step, repeated"), _("article 004 §模型训练和测试, 2) loss_fun + Adam, 4) 训练模型"));
    Trainer trainer(std::move(model), static_cast<int>(threads), ch.seed);
    Adam& adam = trainer.adam();
    if (!load_dir.empty()) {
      adam = loaded;
      ch.say(trf("  loaded {dir} (after {n} steps of training)", fmt::arg("dir", load_dir), fmt::arg("n", adam.step)));
    }
    adam.lr = lr;
    std::vector<double> curve;
    double ratio_sum = 0, ratio_min = 1, ratio_max = 0, sum_article = 0, sum_token = 0;
    if (steps > 0) {
      ch.say(trf("  {steps} steps of B = {B} ({per} batches per epoch), Adam(lr={lr}, beta_1=0.9, beta_2=0.98, "
                 "epsilon=1e-9), loss: {loss}, {threads} thread(s)",
                 fmt::arg("steps", steps), fmt::arg("B", batch), fmt::arg("per", epochs.batches_per_epoch()),
                 fmt::arg("lr", lr),
                 fmt::arg("loss", reduction == Reduction::ArticleMean ? _("article 004's loss_fun") : _("per-token mean")),
                 fmt::arg("threads", threads)));
      const bool tty = ch.rich() && isatty(STDOUT_FILENO);
      // train_loss and train_accuracy: reset at each epoch, as the article's metrics
      double epoch_loss = 0;
      int64_t epoch_n = 0, epoch_correct = 0, epoch_tokens = 0, last_epoch = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t s = 0; s < steps; ++s) {
        int64_t epoch = 0, bi = 0;
        const Batch b = make_batch(epochs.next(&epoch, &bi));
        if (epoch != last_epoch) {
          epoch_loss = 0, epoch_n = 0, epoch_correct = 0, epoch_tokens = 0;
          last_epoch = epoch;
        }
        const StepStats st = trainer.step(b, reduction);
        const double loss = reduction == Reduction::ArticleMean ? st.loss_article : st.loss_token;
        if (!std::isfinite(loss))
          throw UsageError(trf("the loss became {loss} at step {s}: lower --lr", fmt::arg("loss", loss),
                               fmt::arg("s", s + 1)));
        curve.push_back(loss);
        sum_article += st.loss_article, sum_token += st.loss_token;
        const double ratio = double(st.tokens) / double(st.positions);
        ratio_sum += ratio, ratio_min = std::min(ratio_min, ratio), ratio_max = std::max(ratio_max, ratio);
        epoch_loss += loss, ++epoch_n, epoch_correct += st.correct, epoch_tokens += st.tokens;
        if (bi % log_every == 0) {
          if (tty) std::cout << "\r\033[K";
          // the article's own progress line (what it prints, so never translated)
          ch.show(fmt::format("epoch {} batch {}", epoch, bi),
                  fmt::format("epoch {}, batch {}, loss:{:.4f}, acc:{:.4f}", epoch, bi, epoch_loss / double(epoch_n),
                              double(epoch_correct) / double(epoch_tokens)),
                  "", Shown::Article);
        }
        if (tty && (s % 5 == 0 || s + 1 == steps)) {
          const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::cout << "\r\033[K" << progress_bar(s + 1, steps, loss, double(s + 1) / dt) << std::flush;
        }
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (tty) std::cout << "\r\033[K";
      ch.say(trf("  {n} steps in {s:.1f} s: {r:.1f} steps/s", fmt::arg("n", steps), fmt::arg("s", secs),
                 fmt::arg("r", double(steps) / secs)));
      ch.figure(_("loss per step (log scale):") + std::string("\n") + loss_curve(curve));
      // the article's loss_fun beside the per-token mean
      const double mean_ratio = ratio_sum / double(steps);
      ch.show("loss_fun vs per-token mean (averaged over the run)",
              trf("article loss_fun (/ all B*T positions): {a:.4f}\nper-token mean (/ real tokens):        {t:.4f}",
                  fmt::arg("a", sum_article / double(steps)), fmt::arg("t", sum_token / double(steps))),
              trf("the article divides by padding too: its loss is the per-token mean times real/all = {m:.3f} on "
                  "average ({lo:.3f}..{hi:.3f} per batch)",
                  fmt::arg("m", mean_ratio), fmt::arg("lo", ratio_min), fmt::arg("hi", ratio_max)),
              Shown::Twin);
      ch.say(trf("  What it does: every gradient is scaled by that batch's real/all ratio, so batches with more padding "
                 "(short numbers) count less. With SGD this would lower the learning rate by about {pct:.0f}%; Adam "
                 "divides m by sqrt(v), so a scale that varies only between {lo:.3f} and {hi:.3f} mostly cancels. Try "
                 "--loss token.",
                 fmt::arg("pct", 100.0 * (1.0 - mean_ratio)), fmt::arg("lo", ratio_min), fmt::arg("hi", ratio_max)));
    }

    // ---------------------------------------------------------------- 3) evaluate
    ch.section(_("Step 3: evaluate() on the held-out numbers, translate()"), _("article 004 §模型训练和测试, 4) 模型测试"));
    const Model<float>& trained = trainer.model();
    const int64_t max_new = 10;  // MAX_LENGTH: the longest answer has 6 words + <end>
    const auto t_eval = std::chrono::steady_clock::now();
    const auto pred = greedy_translate(trained, split.held_out, max_new);
    int64_t exact = 0;
    std::vector<size_t> wrong;
    for (size_t i = 0; i < pred.size(); ++i) {
      const bool ok = tv.decode(pred[i]) == number_to_words(split.held_out[i]);
      exact += ok;
      if (!ok) wrong.push_back(i);
    }
    const double eval_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_eval).count();
    ch.show("held-out exact match",
            fmt::format("held-out exact match: {}/{} ({:.1f} %)", exact, split.held_out.size(),
                        100.0 * double(exact) / double(split.held_out.size())),
            trf("greedy decoding, all {n} numbers at once, in {s:.2f} s; a number counts only if every word is right",
                fmt::arg("n", split.held_out.size()), fmt::arg("s", eval_s)),
            Shown::Article);
    {
      // translate(): a few held-out numbers (and the wrong ones first, if any)
      std::vector<size_t> show;
      for (size_t i = 0; i < wrong.size() && show.size() < 2; ++i) show.push_back(wrong[i]);
      for (size_t i : {size_t(17), size_t(123), size_t(250), size_t(499)})
        if (show.size() < 4 && std::find(show.begin(), show.end(), i) == show.end()) show.push_back(i);
      for (size_t i : show) translation(ch, split.held_out[i], tv.decode(pred[i]));
    }
    if (wrong.empty())
      ch.say(_("  Every held-out number is translated exactly."));
    else
      ch.say(trf("  {n} held-out numbers are wrong (e.g. {first}).", fmt::arg("n", wrong.size()),
                 fmt::arg("first", split.held_out[wrong[0]])));
    if (number >= 0) translation(ch, number, tv.decode(greedy_translate(trained, {number}, max_new)[0]));

    // ---------------------------------------------------------------- 4) look inside
    ch.section(_("Step 4: what the cross-attention learned"),
               _("article 004 §模型训练和测试, translate(sentence, plot=...): attention_weights"));
    {
      const int64_t n = number >= 0 ? number : 3907;  // three thousand nine hundred seven
      Model<float> before = trained;
      before.params = untrained;
      std::vector<float> pa, pb;
      int64_t Ta = 0, Sa = 0, Tb = 0, Sb = 0;
      const auto after_ids = greedy_translate(trained, {n}, max_new, &pa, &Ta, &Sa)[0];
      const auto before_ids = greedy_translate(before, {n}, max_new, &pb, &Tb, &Sb)[0];
      const std::vector<std::string> cols = tokens_of(sv, encode_source(n));
      // rows: the decoder input at the final step, <start> + predicted words
      auto rows_of = [&](const std::vector<int64_t>& ids, int64_t T) {
        std::vector<std::string> r = {"<start>"};
        for (size_t i = 0; i + 1 < size_t(T) && i < ids.size(); ++i) r.push_back(tv.words[size_t(ids[i])]);
        while (r.size() < size_t(T)) r.push_back(tv.words[size_t(tv.end())]);
        return r;
      };
      HeatmapOptions opt;
      opt.mode = heatmap_mode(ch.color);
      opt.vmin = 0, opt.vmax = 1;
      opt.cell_width = 7;
      const int64_t H = cfg.heads, last = cfg.layers - 1;
      for (int64_t h = 0; h < H; ++h) {
        // head h of the last decoder layer's cross-attention   (T,S), trained and untrained
        Tensor a = Tensor::from_shape({size_t(Ta), size_t(Sa)}), b = Tensor::from_shape({size_t(Tb), size_t(Sb)});
        std::copy_n(pa.begin() + h * Ta * Sa, Ta * Sa, a.begin());
        std::copy_n(pb.begin() + h * Tb * Sb, Tb * Sb, b.begin());
        opt.title = trf("decoder layer {l} cross-attention, head {h}, TRAINED: rows = decoder input, columns = source "
                        "digits of {n}",
                        fmt::arg("l", last), fmt::arg("h", h), fmt::arg("n", n));
        ch.figure(heatmap(a, rows_of(after_ids, Ta), cols, opt));
        opt.title = trf("the same head UNTRAINED (its greedy output: \"{words}\")",
                        fmt::arg("words", tv.decode(before_ids)));
        ch.figure(heatmap(b, rows_of(before_ids, Tb), cols, opt));
      }
      // which digit does the row that predicts "hundred" look at? (the query row whose next word is "hundred")
      const auto hundred = std::find(tv.words.begin(), tv.words.end(), "hundred") - tv.words.begin();
      const auto it = std::find(after_ids.begin(), after_ids.end(), hundred);
      if (it != after_ids.end() && n >= 100) {
        const int64_t q = it - after_ids.begin();  // the query row that predicted "hundred"
        // the hundreds digit's column in the source: <start> d d d d <end>, digits left to right
        const std::string digits = std::to_string(n);
        const std::string hundreds(1, digits[digits.size() - 3]);
        std::string line;
        int64_t on_digit = 0;
        for (int64_t h = 0; h < H; ++h) {
          const float* r = pa.data() + (h * Ta + q) * Sa;
          const int64_t s = std::max_element(r, r + Sa) - r;
          on_digit += s == static_cast<int64_t>(digits.size()) - 2;  // column 0 is <start>
          line += fmt::format("{}head {}: '{}' ({:.2f})", h ? ", " : "", h, cols[size_t(s)], r[s]);
        }
        ch.say(trf("  The row that predicts \"hundred\" (query '{q}') looks most at: {line}. The hundreds digit of {n} "
                   "is '{d}': {k} of the {H} heads look at it most.",
                   fmt::arg("q", q == 0 ? std::string("<start>") : tv.words[size_t(after_ids[size_t(q - 1)])]),
                   fmt::arg("line", line), fmt::arg("n", n), fmt::arg("d", hundreds), fmt::arg("k", on_digit),
                   fmt::arg("H", H)));
      }
    }

    // ---------------------------------------------------------------- 5) save
    if (!save_dir.empty()) {
      ch.section(_("Step 5: save the weights and the optimizer as safetensors"), _("article 004 ckpt_manager.save()"));
      checkpoint_io("--save", [&] { save_checkpoint(save_dir, trained, adam); });
      ch.show("ckpt_manager.save()",
              fmt::format("saved {}/model.safetensors and {}/optimizer.safetensors (step {})", save_dir, save_dir,
                          adam.step),
              _("state_dict keys of the PyTorch twin; load them with --load DIR"), Shown::Twin);
    }
  });
}

static int64_t parse_number(const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 4 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    throw UsageError(trf("--translate needs a whole number from 0 to 9999 written with digits, got '{text}'",
                         fmt::arg("text", text)));
  return std::stoll(text);
}

static std::vector<std::string> tokens_of(const Vocab& v, const std::vector<int64_t>& ids) {
  std::vector<std::string> out;
  for (int64_t id : ids) out.push_back(v.words[static_cast<size_t>(id)]);
  return out;
}

static std::string parameter_table(const Model<float>& model) {
  std::vector<std::pair<std::string, size_t>> parts;
  for (const ParamSpec& s : model.layout.specs) {
    const std::string part = s.name.substr(0, s.name.find('.'));
    if (parts.empty() || parts.back().first != part) parts.emplace_back(part, 0);
    parts.back().second += s.numel;
  }
  std::string table;
  for (const auto& [part, n] : parts) table += fmt::format("{:<10} {:>10}\n", part, thousands(n));
  return table + fmt::format("{:<10} {:>10}", "total", thousands(model.layout.total));
}

template <class Rows>
static std::string grad_table(const Rows& rows) {
  std::string table;
  for (const auto& r : rows) {
    std::string firsts;
    for (size_t i = 0; i < r.ours.size(); ++i) firsts += fmt::format(" {:+.6e}/{:+.6e}", r.ours[i], r.fd[i]);
    table += fmt::format("{:<6} {:<45} maxdiff {:.2e} (max |grad| {:.2e})  first ours/fd:{}\n",
                         r.ok ? "OK" : "NOT OK", r.name, r.maxdiff, r.maxgrad, firsts);
  }
  table.pop_back();
  return table;
}

static void translation(Chapter& ch, int64_t n, const std::string& predicted) {
  const std::string right = number_to_words(n);
  ch.show(fmt::format("translate('{}')", n), fmt::format("输入: {}\n预测输出: {}", n, predicted),
          predicted == right ? _("correct") : trf("WRONG: the right answer is \"{words}\"", fmt::arg("words", right)),
          Shown::Article);
}
