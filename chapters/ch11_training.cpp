// ch11_training: the Transformer learns. Teacher forcing, create_mask, loss_fun, Adam, the
// progress lines, then evaluate()/translate() and the attention the model learned.
//
// Follows: article 004 "模型训练和测试" (hyperparameters; Adam(0.001, beta_1=0.9, beta_2=0.98,
//          epsilon=1e-9); loss_fun; train_step with tar_inp = targets[:, :-1], tar_real =
//          targets[:, 1:] and create_mask; the 'epoch {}, batch {}, loss:{:.4f}, acc:{:.4f}' lines;
//          evaluate() and translate() printing 输入: / 预测输出:), on the course's own
//          encoder-decoder (article 002's create_model, ch10) with article 004's ReLU FFN.
// Trains:  ch10's EncoderDecoder itself (src/transformer/annotated.cpp), article 004's differences
//          as its settings (train/trainer.hpp module_settings); --check-grads checks its backward.
// Task:    numbers written as digits -> English words ("2048" -> "two thousand forty eight").
// Formula: loss = reduce_mean(CE(tar_real, model(inputs, tar_inp)) * mask)   over all B*T positions
//          grads by hand (annotated.cpp: each module's backward below its forward), then
//          m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr m^ / (sqrt(v^) + eps)
// Run:     ./build/ch11_training                         # train ~1000 steps, evaluate, look inside
//          ./build/ch11_training --save ckpt && ./build/ch11_training --load ckpt --translate 1234
//          ./build/ch11_training --check-grads           # every gradient vs finite differences
//          ./build/ch11_training --steps 300 --beam 4 --translate 2007   # beam search, step by step
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

#include "course/beam_report.hpp"
#include "course/chapter.hpp"
#include "course/i18n.hpp"
#include "course/decoder_notes.hpp"
#include "course/loop_trace.hpp"
#include "course/model_probes.hpp"
#include "exact/print.hpp"
#include "course/plot.hpp"
#include "course/settings.hpp"
#include "course/train_knobs.hpp"
#include "course/train_views.hpp"
#include "train/adam_probe.hpp"
#include "train/beam_models.hpp"
#include "train/budget.hpp"
#include "train/checkpoint.hpp"
#include "train/gradcheck.hpp"
#include "train/trainer.hpp"

using namespace ts;
using namespace ts::train;

// The chapter's helpers, after main.
// The knobs' values: refused with the fix unless in range (UsageError); --translate's number, or -1.
static int64_t check_knobs(Chapter& ch, int64_t steps, const ModelConfig& cfg, double dropout, double lr,
                           const std::string& loss_name, const std::string& translate_text);
// Step 2's first lines: the module ch11 trains and its settings, read from the module itself.
static void show_module(Chapter& ch, const EncoderDecoder& module);
// translate(n): the article's 输入: / 预测输出: lines, and whether the words are right.
static void translation(Chapter& ch, int64_t n, const std::string& predicted);

int main(int argc, char** argv) {
  Chapter ch("ch11_training", _("The Transformer learns: train_step, loss_fun, Adam, evaluate and translate"),
             {{4, N_("§模型训练和测试 (train_step, create_mask, loss_fun, Adam, evaluate/translate)")}});
  const Ch11Settings d = ch11_defaults();  // the defaults, once (course/settings.cpp): ch14 and ch12 --vs-ch11 read the same
  ModelConfig cfg = encdec_config(d);  // create_model's sizes (the knobs below change them), as ch14 builds it
  int64_t steps = d.steps, batch = d.batch, log_every = d.log_every, threads = d.threads;
  double dropout = d.dropout, lr = d.lr;
  bool post_ln = false, no_look_ahead = false, no_scale = false, check_grads = false;
  std::string translate_text = "\x01", save_dir, load_dir, loss_name = "article";  // \x01: not given
  ch.option("--steps", steps, _("training steps (batches) (0 more with --load unless given)"));
  ch.option("--batch", batch, _("B, numbers per batch, the article's BATCH_SIZE by default"), 1, 4096);
  ch.option("--layers", cfg.layers, _("N encoder and N decoder layers"), 1, 12);
  width_options(ch, cfg.d_model, cfg.heads, cfg.d_ff);
  adam_options(ch, dropout, lr, _("Adam's learning rate, the article's by default"));
  ch.option("--label-smoothing", cfg.label_smoothing, _("spread this much target probability over all words"));
  ch.option("--loss", loss_name,
            _("the loss to train on: article (loss_fun: mean over all B*T positions) or token (mean over real tokens)"));
  loop_options(ch, log_every, threads, _("print the article's progress line every N batches"));
  ch.flag("--post-ln", post_ln, _("post-LN (article 004, the paper) instead of pre-LN (article 002)"));
  ch.flag("--no-look-ahead", no_look_ahead, _("exercise: create_mask without the look-ahead mask"));
  ch.flag("--no-scale", no_scale, _("exercise: do not divide the scores by sqrt(d_k)"));
  ch.option("--translate", translate_text,
            Help(N_("also translate this number (0..{max}) with the trained model"), fmt::arg("max", kMaxNumber)));
  ch.value_kind("--translate", "N");
  int64_t beam = -1;  // not given: greedy only
  double length_penalty = 0.0;
  ch.option("--beam", beam, _("decode with beam search of width N (translate() and the held-out numbers), shown step by step (greedy unless given)"),
            1, kMaxBeam, _("the step-by-step tables list every beam"));
  ch.option("--length-penalty", length_penalty,
            _("with --beam: rank finished beams by sum log p / ((5 + |Y|) / 6)^A, GNMT's penalty; 0 = the plain sum"));
  checkpoint_options(ch, save_dir, load_dir);
  ch.flag("--check-grads", check_grads, _("check every gradient against finite differences (float, tiny model)"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    if (check_grads) check_grads_alone(ch, {"--save", "--load", "--steps", "--translate", "--beam"});
    const int64_t number = check_knobs(ch, steps, cfg, dropout, lr, loss_name, translate_text);
    check_beam_knobs(ch, beam, length_penalty);
    for (const auto& [flag, dir] : {std::pair{"--save", &save_dir}, std::pair{"--load", &load_dir}})
      if (ch.given(flag) && dir->empty()) throw UsageError(trf("{flag} needs a folder, got ''", fmt::arg("flag", flag)));
    const Vocab& sv = source_vocab();
    const Vocab& tv = target_vocab();
    cfg.src_vocab = sv.size(), cfg.tgt_vocab = tv.size(), cfg.dropout = ch.eval ? 0.0 : dropout;
    cfg.pre_ln = !post_ln, cfg.look_ahead = !no_look_ahead, cfg.scale_scores = !no_scale;
    if (!load_dir.empty()) {
      // the checkpoint's settings: a flag not given takes them, a flag given must agree
      cfg = checkpoint_io("--load", [&] {
        return adopt_checkpoint_settings(cfg, checkpoint_settings(load_dir, cfg),
                                         [&](const std::string& flag) { return ch.given(flag); });
      });
    }
    if (!load_dir.empty() && !ch.given("--steps")) steps = 0;
    // refuse an unusable --save before training, not after (train/checkpoint.hpp)
    if (!save_dir.empty()) checkpoint_io("--save", [&] { prepare_save_folder(save_dir); });
    const Reduction reduction = loss_name == "article" ? Reduction::ArticleMean : Reduction::TokenMean;

    if (check_grads) {
      // ---------------------------------------------------------------- --check-grads
      ch.section(_("Gradient check: every parameter, hand-written backward vs finite differences"),
                 _("llm.c test_gpt2.c style; ch10's float32 modules, dropout off"));
      ModelConfig tiny = tiny_config();
      tiny.src_vocab = cfg.src_vocab, tiny.tgt_vocab = cfg.tgt_vocab;
      tiny.pre_ln = cfg.pre_ln, tiny.look_ahead = cfg.look_ahead, tiny.scale_scores = cfg.scale_scores;
      tiny.label_smoothing = cfg.label_smoothing;
      const std::vector<int64_t> nums = {7, 42, 905, 2048};
      const auto rows = check_grads_fd(tiny, ch.seed, nums);
      ch.say(trf("  tiny model: {n}+{n} layers, d_model {C}, {H} heads, d_ff {F}; batch = {{{nums}}} (padding on both "
                 "sides); central differences, h = {h:g}",
                 fmt::arg("n", tiny.layers), fmt::arg("C", tiny.d_model), fmt::arg("H", tiny.heads),
                 fmt::arg("F", tiny.d_ff), fmt::arg("nums", fmt::join(nums, ", ")), fmt::arg("h", kFdStepFloat)));
      ch.show("check every gradient", grad_table(rows),
              _("a backward function edited wrongly shows up here as NOT OK"), Shown::Twin);
      // the failing tensor the backward reaches first (it runs the forward in reverse: the
      // generator, the decoder's layers from the last, tgt_embed, then the encoder's, src_embed;
      // in a layer the feed-forward before the attentions): a wrong backward spoils its own
      // module's gradients and every one the backward reaches after it
      auto backward_rank = [&](const std::string& n) {
        auto layer = [&](const std::string& pre) { return std::stoi(n.substr(pre.size())); };
        const int N = int(tiny.layers);
        int r = 0;
        if (n.rfind("generator", 0) == 0) r = 0;
        else if (n.rfind("decoder.norm", 0) == 0) r = 1;
        else if (n.rfind("decoder.layers.", 0) == 0) r = 2 + (N - 1 - layer("decoder.layers."));
        else if (n.rfind("tgt_embed", 0) == 0) r = 2 + N;
        else if (n.rfind("encoder.norm", 0) == 0) r = 3 + N;
        else if (n.rfind("encoder.layers.", 0) == 0) r = 4 + N + (N - 1 - layer("encoder.layers."));
        else r = 4 + 2 * N;
        const int part = n.find("feed_forward") != std::string::npos ? 0 : n.find("src_attn") != std::string::npos ? 1
                                                                      : n.find("self_attn") != std::string::npos ? 2 : 3;
        return r * 4 + part;
      };
      std::string first_bad;
      int best = 1 << 30;
      for (const auto& r : rows)
        if (!r.ok && backward_rank(r.name) < best) best = backward_rank(r.name), first_bad = r.name;
      ch.say("  " + grad_check_verdict(ch, rows, first_bad, train::kFdToleranceFloat, train::kFdFloorFloat));
      return;
    }

    const TrainCost cost = training_cost(cfg, batch, steps, threads, int64_t(number_split().held_out.size()), 10);
    ch.budget(cost.bytes, cost.madds, "--batch, --d-model, --d-ff, --layers or --steps");
    Model<float> model = init_model(cfg, ch.seed);  // ch10's create_model(...) with torch.manual_seed(seed)
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
      for (int64_t n : {int64_t(2048), int64_t(907), int64_t(15), int64_t(0), kMaxNumber})
        ex += fmt::format("{:>6} -> {}\n", n, number_to_words(n));
      ex.pop_back();
      ch.show("[(n, number_to_words(n)) for n in examples]", ex,
              _("a translation generated in code: digits in, English words out (no 'and', no hyphens)"), Shown::Twin);
    }
    ch.show("input_vocab_size, target_vocab_size", fmt::format("{} {}", sv.size(), tv.size()),
            trf("article 004's convention: pad = 0, start = vocab_size ({ss} / {ts}), end = vocab_size + 1 ({se} / "
                "{te}); source: {d} digits, target: {w} words",
                fmt::arg("ss", sv.start()), fmt::arg("ts", tv.start()), fmt::arg("se", sv.end()),
                fmt::arg("te", tv.end()), fmt::arg("d", sv.vocab_size - 1), fmt::arg("w", tv.vocab_size - 1)),
            Shown::Twin);
    const Split& split = number_split();
    ch.say(trf("  {train} numbers train, {held} are held out (the same for every seed) and only evaluated.",
               fmt::arg("train", split.train.size()), fmt::arg("held", split.held_out.size())));
    ch.show("{part: sum(p.numel() for p in module.parameters())}", parameter_table(model),
            // the call's arguments; where the sublayers put their norms and what the feed-forward
            // computes are measured on the module in Step 2 (show_module), not read from cfg
            trf("create_model(V_src={vs}, V_tgt={vt}, N={N}, d_model={C}, d_ff={F}, h={H}, dropout={p})",
                fmt::arg("vs", cfg.src_vocab), fmt::arg("vt", cfg.tgt_vocab), fmt::arg("N", cfg.layers),
                fmt::arg("C", cfg.d_model), fmt::arg("F", cfg.d_ff), fmt::arg("H", cfg.heads),
                fmt::arg("p", cfg.dropout)),
            Shown::Twin);
    Epochs epochs(batch, ch.seed);
    const Batch first = [&] {
      Epochs peek(batch, ch.seed);  // the first training batch of this seed, without taking it
      int64_t e = 0, bi = 0;
      return make_batch(peek.next(&e, &bi));
    }();
    show_batch(ch, first, cfg);

    // ---------------------------------------------------------------- 2) train
    ch.section(_("Step 2: train_step, repeated"), _("article 004 §模型训练和测试, 2) loss_fun + Adam, 4) 训练模型"));
    Trainer trainer(std::move(model), static_cast<int>(threads), ch.seed);
    show_module(ch, trainer.module());
    Adam& adam = trainer.adam();
    if (!load_dir.empty()) {
      adam = loaded;
      ch.say(trf("  loaded {dir} (after {n} steps of training)", fmt::arg("dir", load_dir), fmt::arg("n", adam.step)));
    }
    adam.lr = lr;
    Metrics metrics;
    if (steps > 0) {
      // Adam's settings as its update applies them: read back from a probe step (train/adam_probe.hpp),
      // shown with the setting's digits where the two agree to 1e-3
      const AdamApplied applied = measure_adam(adam);
      const auto as_applied = [](double measured, double set) {
        return std::fabs(measured - set) <= 1e-3 * std::fabs(set) ? set : measured;
      };
      const auto shown = [&](double measured, double set) {
        return std::fabs(measured - set) <= 1e-3 * std::fabs(set) ? fmt::format("{}", set)
                                                                  : fmt::format("{:.3g}", measured);
      };
      ch.say(trf("  {steps} steps of B = {B} ({per} batches per epoch), Adam(lr={lr}, beta_1={b1}, beta_2={b2}, "
                 "epsilon={eps}), loss: {loss}, {threads} thread(s)",
                 fmt::arg("steps", steps), fmt::arg("B", batch), fmt::arg("per", epochs.batches_per_epoch()),
                 fmt::arg("lr", shown(applied.lr, adam.lr)), fmt::arg("b1", shown(applied.beta1, adam.beta1)),
                 fmt::arg("b2", shown(applied.beta2, adam.beta2)), fmt::arg("eps", shown(applied.eps, adam.eps)),
                 fmt::arg("loss", (reduction == Reduction::ArticleMean ? _("article 004's loss_fun") : _("per-token mean")) +
                                      (cfg.label_smoothing > 0 ? trf(" with label smoothing {ls}",
                                                                     fmt::arg("ls", cfg.label_smoothing))
                                                               : std::string())),
                 fmt::arg("threads", trainer.threads())));
      if (!applied.formula)
        ch.say("  " + ch.verdict(false, trf("Adam's update, probed: its first step applied lr {lr:.3g}, decayed m by {b1:.3g} "
                                            "and v by {b2:.3g}, eps {e:.3g}, but its second step is {g:.2g} (relative) "
                                            "off torch.optim.Adam's formula with those values: look at Adam::update "
                                            "(src/train/adam.cpp)",
                                            fmt::arg("lr", applied.lr), fmt::arg("b1", applied.beta1),
                                            fmt::arg("b2", applied.beta2), fmt::arg("e", applied.eps),
                                            fmt::arg("g", applied.step2_gap))));
      show_article_differences(ch, cfg, batch, as_applied(applied.lr, adam.lr), log_every, epochs.batches_per_epoch());
      const bool tty = ch.live_progress();
      Model<float>& m = trainer.model();
      const auto t0 = std::chrono::steady_clock::now();
      TrainedNumbers trained;              // every training batch's numbers
      std::vector<std::string> unreached;  // the parameter tensors the first step's backward left at gradient 0
      int64_t examined = 0;                // that step (1-based), as the loop ran it
      std::vector<std::string> zero_with_dropout;  // the same, before the rerun without dropout (below)
      for (int64_t s = 0; s < steps; ++s) {
        int64_t epoch = 0, bi = 0;
        const Batch b = make_batch(epochs.next(&epoch, &bi));
        trained.add(b.numbers);  // the numbers this step trains on, against the held-out ones (after the loop)
        // train_step(inp, tar), as llm.c's loop: forward (and loss_fun), zero the gradients,
        // backward, Adam's update. The trainer splits the batch over its threads.
        const StepStats st = trainer.forward(b, /*training=*/true);
        const double loss = reduction == Reduction::ArticleMean ? st.loss_article : st.loss_token;
        trainer.zero_grad();
        trainer.backward(reduction);
        adam.update(m.params.data(), trainer.grads().data(), m.params.size());
        // a NaN or inf named where it was measured: the forward (step 1), the backward (a finite loss), else --lr
        check_step_finite(loss, trainer.grads(), m.layout.specs, s + 1, trainer_loss_site(), trainer_backward_site());
        // what the first step's backward missed, and which step that was
        if (s == 0) unreached = zero_gradient_tensors(trainer.grads(), m.layout.specs), examined = s + 1;
        metrics.add(epoch, st, loss);  // train_loss(loss); train_accuracy(tar_real, predictions)
        if (s == 0 && !unreached.empty()) {
          // the same batch without dropout: what it reaches, dropout's zeros had cut off (no fault)
          trainer.forward(b, /*training=*/false);
          trainer.zero_grad();
          trainer.backward(reduction);
          zero_with_dropout = unreached;
          unreached = zero_gradient_tensors(trainer.grads(), m.layout.specs);
        }
        if (bi % log_every == 0) {
          if (tty) std::cout << "\r\033[K";
          // the article's own progress line (what it prints, so never translated)
          ch.show(fmt::format("epoch {} batch {}", epoch, bi),
                  fmt::format("epoch {}, batch {}, loss:{:.4f}, acc:{:.4f}", epoch, bi, metrics.train_loss(),
                              metrics.train_accuracy()),
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
      ch.figure(_("loss per step (log scale):") + std::string("\n") + loss_curve(metrics.curve));
      show_loss_reduction(ch, metrics);  // the article's loss_fun beside the per-token mean
      show_dropout_zeroed(ch, zero_with_dropout, unreached, m.layout.specs.size(), examined);
      show_unreached(ch, unreached, m.layout.specs.size(), trainer_backward_site(), examined);
      show_train_eval_overlap(ch, trained, split.held_out, number_split_site() + ", " + epochs_next_site());
    }

    // ---------------------------------------------------------------- 3) evaluate
    ch.section(_("Step 3: evaluate() on the held-out numbers, translate()"), _("article 004 §模型训练和测试, 4) 模型测试"));
    const Model<float>& trained = trainer.model();
    const int64_t max_new = 10;  // MAX_LENGTH: the longest answer has 6 words + <end>
    const BeamOptions beam_opt{beam, length_penalty, max_new};
    auto t_eval = std::chrono::steady_clock::now();
    const auto greedy = greedy_translate(trained, split.held_out, max_new);
    if (beam > 0) t_eval = std::chrono::steady_clock::now();
    // beam search: the encoder once per number, the module's decoder caches per beam (train/beam_models.hpp)
    const auto pred = beam > 0 ? beam_translate(trained, split.held_out, beam_opt) : greedy;
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
            beam > 0 ? trf("{how}, one number at a time, a cache per beam, in {s:.2f} s", fmt::arg("how", beam_name(beam_opt)),
                           fmt::arg("s", eval_s))
                     : trf("greedy decoding, all {n} numbers at once, in {s:.2f} s; a number counts only if every word "
                           "is right", fmt::arg("n", split.held_out.size()), fmt::arg("s", eval_s)),
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
    if (number >= 0)
      translation(ch, number, tv.decode(beam > 0 ? beam_translate(trained, {number}, beam_opt)[0]
                                                 : greedy_translate(trained, {number}, max_new)[0]));
    if (beam > 0) {
      // one number step by step; beam 1 against greedy; the reordered caches against recomputing
      const int64_t n = number >= 0 ? number : split.held_out[0];
      TranslationBeams beams(trained, n);
      show_beam_steps(ch, fmt::format("translate('{}')", n), beam_search(beams, beam_opt, true), beam_opt, tv.words);
      const auto beam1 = beam == 1 ? pred : beam_translate(trained, split.held_out, BeamOptions{1, length_penalty, max_new});
      show_beam_vs_greedy(
          ch, split.held_out, greedy, beam1, pred, beam_opt,
          [&](size_t i, const std::vector<int64_t>& t) { return tv.decode(t) == number_to_words(split.held_out[i]); },
          [&](const std::vector<int64_t>& t) { return tv.decode(t); });
      const std::vector<int64_t> some(split.held_out.begin(), split.held_out.begin() + 10);
      show_beam_cache_check(ch, check_translation_cache(trained, some, {std::max<int64_t>(beam, 4), length_penalty, max_new}),
                            "TranslationBeams", "forward", translation_cache_site(), translation_reorder_site(),
                            translation_mask_breaks_cache(trained.cfg, max_new));
    }

    // ---------------------------------------------------------------- 4) look inside
    ch.section(_("Step 4: what the cross-attention learned"),
               _("article 004 §模型训练和测试, translate(sentence, plot=...): attention_weights"));
    show_cross_attention(ch, trained, untrained, number >= 0 ? number : 3907, max_new);

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

static int64_t check_knobs(Chapter& ch, int64_t steps, const ModelConfig& cfg, double dropout, double lr,
                           const std::string& loss_name, const std::string& translate_text) {
  // not given: 1000, or 0 after --load (where --steps 0 may be said)
  if (ch.given("--steps")) check_range("--steps", steps, ch.given("--load") ? 0 : 1, 1000000);
  check_model_dims(cfg.d_model, cfg.heads);
  check_adam_knobs(dropout, lr);
  if (!(cfg.label_smoothing >= 0.0 && cfg.label_smoothing < 1.0))
    throw UsageError(trf("--label-smoothing must be in [0, 1), got {v}", fmt::arg("v", cfg.label_smoothing)));
  if (loss_name != "article" && loss_name != "token")
    throw UsageError(trf("--loss must be 'article' or 'token', got {v}", fmt::arg("v", quoted_input(loss_name))));
  if (translate_text == "\x01") return -1;  // --translate not given ("" must be refused, not ignored)
  return task_number("--translate", translate_text);
}

// Where the model's sublayers put their LayerNorm, measured on each SublayerConnection it holds
// (sublayer_formula, course/decoder_notes.hpp, on a probe row): "pre-LN" or "post-LN" when every
// one computes that formula, else what they compute, by state_dict name.
static std::string measured_wiring(const EncoderDecoder& module) {
  std::vector<std::pair<std::string, std::string>> f;  // (name, formula)
  auto add = [&f](const std::string& name, const SublayerConnection& sub) {
    const size_t C = sub.norm.weight.size();
    Tensor x = Tensor::from_shape({1, 2, C});  // (B,T,C) a probe row, no draw
    for (size_t i = 0; i < x.size(); ++i) x.data()[i] = 0.25f * static_cast<float>((i * 7) % 11) - 1.25f;
    f.emplace_back(name, sublayer_formula(sub, x));
  };
  for (size_t l = 0; l < module.encoder.layers.size(); ++l)
    for (size_t i = 0; i < module.encoder.layers[l].sublayer.size(); ++i)
      add(fmt::format("encoder.layers.{}.sublayer.{}", l, i), module.encoder.layers[l].sublayer[i]);
  for (size_t l = 0; l < module.decoder.layers.size(); ++l)
    for (size_t i = 0; i < module.decoder.layers[l].sublayer.size(); ++i)
      add(fmt::format("decoder.layers.{}.sublayer.{}", l, i), module.decoder.layers[l].sublayer[i]);
  if (f.empty()) return _("no sublayer");
  auto words = [](const std::string& formula) {
    return formula.empty() ? _("none of x + f(norm(x)), norm(x + f(x)), x + f(x), f(norm(x))") : formula;
  };
  for (const auto& [name, formula] : f)
    if (formula != f[0].second)
      return trf("sublayers that differ: {a} computes {fa}, {b} computes {fb}", fmt::arg("a", f[0].first),
                 fmt::arg("fa", words(f[0].second)), fmt::arg("b", name), fmt::arg("fb", words(formula)));
  if (f[0].second == "x + f(norm(x))") return "pre-LN";
  if (f[0].second == "norm(x + f(x))") return "post-LN";
  return trf("every sublayer computes {f}", fmt::arg("f", words(f[0].second)));
}

static void show_module(Chapter& ch, const EncoderDecoder& module) {
  // what the module holds and computes (measured on its own sublayers and feed-forward), not
  // what the flags asked for
  const DecoderLayer& layer = module.decoder.layers.at(0);
  const FeedForward& ff = layer.feed_forward;
  std::vector<std::string> settings = {
      trf("feed-forward activation {act}", fmt::arg("act", activation_words(feed_forward_activation(ff)))),
      measured_wiring(module),
      trf("dropout {p} (attention weights {pa})", fmt::arg("p", ff.dropout.p), fmt::arg("pa", layer.self_attn.dropout.p))};
  if (!layer.self_attn.scale_scores) settings.push_back(_("scores not divided by sqrt(d_k) (--no-scale)"));
  ch.say(trf("  ch11 trains ch10's EncoderDecoder itself ({file}: its forward, and the backward written below each "
             "module's forward), with the settings {settings}.",
             fmt::arg("file", annotated_source()), fmt::arg("settings", fmt::join(settings, "; "))));
}

static void translation(Chapter& ch, int64_t n, const std::string& predicted) {
  const std::string right = number_to_words(n);
  ch.show(fmt::format("translate('{}')", n), fmt::format("输入: {}\n预测输出: {}", n, predicted),
          predicted == right ? _("correct") : trf("WRONG: the right answer is \"{words}\"", fmt::arg("words", right)),
          Shown::Article);
}
