// ch12_gpt: the decoder-only Transformer (GPT). It learns ch11's task as one sequence, generates
// (greedy, temperature, top-k, top-p), and a KV cache makes generation fast.
//
// Follows: article 002 §9.1.3 (the three kinds of Transformer: "decoder-only ... predicts the most
//          likely next token, appends it to the prompt and repeats"), article 004 《GPT （一）》
//          (train_step, Adam(0.001, beta_1=0.9, beta_2=0.98, epsilon=1e-9), its progress lines),
//          on GPT-2's layout at a small size, composed from the course's modules (src/transformer/gpt.hpp).
// Task:    ch11's numbers as one sequence: "2 0 4 8 = two thousand forty eight <end>"; the loss
//          counts only the answer (the words and <end>), the same 500 held-out numbers as ch11.
// Formula: x = wte[ids] + wpe[t];  N x { x = x + attn(ln_1(x)) (causal);  x = x + mlp(ln_2(x)) }
//          logits = ln_f(x) wte^T (tied);  loss = mean CE over the answer tokens;  Adam
// Run:     ./build/ch12_gpt                                # train, evaluate, sample, time the cache
//          ./build/ch12_gpt --save ckpt && ./build/ch12_gpt --load ckpt --prompt 1234 --temperature 0.8
//          ./build/ch12_gpt --check-grads                  # every gradient vs finite differences
//          ./build/ch12_gpt --steps 100 --beam 4           # beam search with a KV cache per beam

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/beam_report.hpp"
#include "exact/matmul.hpp"
#include "course/chapter.hpp"
#include "train/checkpoint.hpp"
#include "course/i18n.hpp"
#include "course/gpt_report.hpp"
#include "course/loop_trace.hpp"
#include "course/mask_stats.hpp"
#include "course/plot.hpp"
#include "course/settings.hpp"
#include "train/beam_models.hpp"
#include "course/train_knobs.hpp"
#include "train/sampling.hpp"
#include "train/until_target.hpp"

using namespace ts;
using namespace ts::train;
using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The chapter's helpers, after main.
static int64_t parse_number(const std::string& flag, const std::string& text);  // 0..kMaxNumber, digits only
static double smallest_temperature();
static void check_knobs(const Chapter& ch, double dropout, double lr, const Sampler& s);
static void show_training_arithmetic(Chapter& ch, int64_t products);  // which kernel and route the losses came from
// NOT OK unless the greedy Sampler's sample_next picks the largest logit (the trained model's, one held-out prompt)
static void check_greedy_is_argmax(Chapter& ch, const Gpt& model);

int main(int argc, char** argv) {
  Chapter ch("ch12_gpt", _("The decoder-only Transformer (GPT): it learns, it generates, the KV cache makes it fast"),
             {{2, N_("§9.1.3 (decoder-only)")}, {4, N_("§模型训练和测试")}});
  Ch12Settings knobs = ch12_defaults();  // the defaults, in course/settings.cpp: ch14 trains this model with the same
  int64_t &steps = knobs.steps, &batch = knobs.batch, &layers = knobs.layers, &d_model = knobs.d_model,
          &heads = knobs.heads, &d_ff = knobs.d_ff, &log_every = knobs.log_every, &threads = knobs.threads;
  int64_t &top_k = knobs.top_k, &samples = knobs.samples;
  double &dropout = knobs.dropout, &lr = knobs.lr, &temperature = knobs.temperature, &top_p = knobs.top_p;
  bool untied = false, no_causal = false, check_grads = false, no_cache = false, vs_ch11 = false;
  std::string save_dir, load_dir, prompt_text;
  ch.option("--steps", steps, _("training steps (0 after --load unless given)"));
  ch.option("--batch", batch, _("B, numbers per batch"), 1, 4096);
  ch.option("--layers", layers, _("N blocks"), 1, 12);
  width_options(ch, d_model, heads, d_ff);
  adam_options(ch, dropout, lr);
  loop_options(ch, log_every, threads);
  ch.flag("--untied", untied, _("give the LM head its own weights instead of sharing the token embedding"));
  ch.flag("--no-causal-mask", no_causal, _("exercise: every position attends to every other, the answer too"));
  ch.flag("--no-cache", no_cache, _("exercise: generate by recomputing the whole prefix for every token"));
  ch.option("--temperature", temperature, _("sampling temperature, >= 0 (0: greedy, the argmax)"),
            NearZero{true, smallest_temperature()});
  ch.option("--top-k", top_k, _("keep the k most likely tokens, 0 = all"), 0, 1000000);
  ch.option("--top-p", top_p, _("keep the most likely tokens up to this total probability, in (0, 1]"),
            NearZero{false, 0});
  ch.option("--samples", samples, _("repeated samples per setting when counting distinct outputs"), 1, 1000);
  int64_t beam = -1;  // not given: greedy only
  double length_penalty = 0.0;
  ch.option("--beam", beam, _("also complete with beam search of width N (the held-out numbers, --prompt), step by step (greedy unless given)"),
            1, kMaxBeam, _("the step-by-step tables list every beam"));
  ch.option("--length-penalty", length_penalty,
            _("with --beam: rank finished beams by sum log p / ((5 + |Y|) / 6)^A, GNMT's penalty; 0 = the plain sum"));
  ch.option("--prompt", prompt_text,
            Help(N_("also complete the prompt 'N =' for this number (0..{max})"), fmt::arg("max", kMaxNumber)));
  ch.value_kind("--prompt", "N");
  ch.flag("--vs-ch11", vs_ch11,
          Help(N_("also train ch11's encoder-decoder here until {pct} % held-out, and compare the two"),
               fmt::arg("pct", 100 * kTarget)));
  checkpoint_options(ch, save_dir, load_dir);
  ch.flag("--check-grads", check_grads, _("check every gradient against finite differences (double, tiny model)"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    const Sampler sampler{temperature, top_k, top_p};
    check_knobs(ch, dropout, lr, sampler);
    check_beam_knobs(ch, beam, length_penalty);
    if (check_grads) check_grads_alone(ch, {"--save", "--load", "--steps", "--prompt", "--beam", "--vs-ch11"});
    if (ch.given("--steps")) check_range("--steps", steps, load_dir.empty() ? 1 : 0, 1000000);
    check_model_dims(d_model, heads, 2);
    const int64_t number = ch.given("--prompt") ? parse_number("--prompt", prompt_text) : -1;
    if (!save_dir.empty()) checkpoint_io("--save", [&] { prepare_save_folder(save_dir); });  // before training
    if (!load_dir.empty() && !ch.given("--steps")) steps = 0;
    const SeqVocab& vocab = seq_vocab();
    GptConfig cfg;
    cfg.vocab = vocab.size(), cfg.layers = layers, cfg.d_model = d_model, cfg.heads = heads, cfg.d_ff = d_ff;
    cfg.dropout = ch.eval ? 0.0 : dropout, cfg.tied = !untied, cfg.causal = !no_causal;
    if (!load_dir.empty()) cfg = checkpoint_config_or_usage(ch, load_dir, cfg);
    if (check_grads) return show_grad_check(ch, cfg);

    // ---------------------------------------------------------------- 1) the model
    ch.section(_("Step 1: GPT-2's layout at a small size, and the task as one sequence"),
               _("article 002 §9.1.3 decoder-only; GPT-2: wte + wpe, N blocks, ln_f, lm_head"));
    Gpt model(cfg, ch.seed, static_cast<int>(threads));  // the modules' GPT, its weights flat for Adam
    Adam adam;
    if (!load_dir.empty()) load_or_usage(ch, load_dir, model, adam);
    adam.lr = lr;
    show_model(ch, model);
    show_loss_mask(ch, model, make_seq_batch({2048, 7, 915}));

    // ---------------------------------------------------------------- 2) train
    ch.section(_("Step 2: the training loop, as article 004's train_step writes it: forward, loss, zero the grads, "
                 "backward, Adam"),
               _("article 004 §模型训练和测试 train_step; llm.c's train_gpt2.c loop"));
    std::vector<TraceEvent> loop_trace;  // what the first two steps ran (base/trace.hpp)
    TrainedNumbers trained;              // every training batch's numbers
    std::vector<std::string> unreached;  // the parameter tensors the first step's backward left at gradient 0
    int64_t examined = 0;                // that step (1-based), as the loop ran it
    std::vector<std::string> zero_with_dropout;  // the same, before the rerun without dropout (below)
    Epochs epochs(batch, ch.seed);
    std::vector<double> curve;
    TrainLog log{ch, log_every, steps};
    const auto t0 = Clock::now();
    const int64_t sgemm_before = sgemm_calls();
    // every kCheckEvery steps, until it first reaches kTarget: greedy held-out exact match
    // (train/until_target.hpp, the loop ch14 trains its three kinds with)
    const TargetRun run = train_until(
        TargetPlan{kCheckEvery, steps, kTarget, /*stop=*/false},
        [&](int64_t s) {
          std::unique_ptr<TraceRecorder> traced;
          if (s < 2) traced = std::make_unique<TraceRecorder>(loop_trace);
          int64_t epoch = 0, bi = 0;
          const SeqBatch b = make_seq_batch(epochs.next(&epoch, &bi));
          trained.add(b.numbers);  // the numbers this step trains on, against the held-out ones (after the loop)
          const double loss = model.forward(b, /*training=*/true);  // logits, then CE on the answer tokens
          model.zero_grad();
          model.backward();                                          // each module's backward, last module first
          adam.update(model.parameters(), model.gradients());       // Adam
          // a NaN or inf named where it was measured: the forward (step 1), the backward (a finite loss), else --lr
          check_step_finite(loss, model.gradients(), model.keys, s + 1, gpt_forward_site(), gpt_backward_site());
          // what the first step's backward missed, and which step that was
          if (s == 0) unreached = zero_gradient_tensors(model.gradients(), model.keys), examined = s + 1;
          curve.push_back(loss);
          // the first step measured: the whole run's time at that pace (a note past ~10 s)
          if (s == 0) ch.pace_note(_("the first training step"), seconds_since(t0), seconds_since(t0) * double(steps), "--steps");
          log.step(epoch, bi, loss, model.correct(), model.tokens(), s, seconds_since(t0));
          if (s == 0 && !unreached.empty()) {
            // the same batch without dropout: what it reaches, dropout's zeros had cut off (no fault);
            // not a step of the loop, so not in the loop's trace
            traced.reset();
            model.forward(b, /*training=*/false);
            model.zero_grad();
            model.backward();
            zero_with_dropout = unreached;
            unreached = zero_gradient_tensors(model.gradients(), model.keys);
          }
          return loss;
        },
        [&] { return held_out_exact_match(model, Sampler{}, 0); });
    const int64_t step_95 = run.step_hit;
    const double seconds_95 = run.seconds_hit;
    log.finish(curve, run.seconds, step_95, seconds_95);
    show_loop_trace(ch, loop_trace);
    // of those, the ones no logit depends on (a weight only the layout holds, a head reading storage of
    // its own, a forward that drops what reads them) are not the backward's fault: measured by moving each
    const std::vector<std::string> unread = unread_by_forward(model, unreached);
    std::vector<std::string> missed;  // read by the forward, yet left at 0 by the backward
    for (const std::string& name : unreached)
      if (std::find(unread.begin(), unread.end(), name) == unread.end()) missed.push_back(name);
    show_dropout_zeroed(ch, zero_with_dropout, unreached, model.keys.size(), examined);
    show_unread(ch, unread, model.keys.size(),
                gpt_parameters_site() + ", " + gpt_head_weight_site() + ", " + gpt_forward_site(), examined);
    show_unreached(ch, missed, model.keys.size(), gpt_backward_site(), examined);
    show_train_eval_overlap(ch, trained, number_split().held_out, number_split_site() + ", " + epochs_next_site());
    if (!curve.empty()) show_training_arithmetic(ch, sgemm_calls() - sgemm_before);

    // ---------------------------------------------------------------- 3) evaluate
    ch.section(_("Step 3: greedy completion of the held-out numbers"), _("article 004 evaluate(): argmax, append, repeat"));
    std::vector<int64_t> wrong;
    const auto t_eval = Clock::now();
    const double exact = held_out_exact_match(model, Sampler{}, 0, &wrong);
    check_greedy_is_argmax(ch, model);
    show_held_out(ch, model, exact, wrong, seconds_since(t_eval));
    if (number >= 0) show_completion(ch, model, number, sampler, ch.seed, !no_cache);
    if (beam > 0) {
      // beam search: a KVCache per block per beam, copied from its parent when the beams are pruned
      const BeamOptions opt{beam, length_penalty, 0};  // max_len: until the context is full (GptBeams)
      const auto& held = number_split().held_out;
      const int64_t n = number >= 0 ? number : held[0];
      GptBeams beams(model, n);
      GptRecompute full(model, n);  // every prefix again: the column "sum log p" checked against it
      show_beam_steps(ch, fmt::format("'{} ='", n), beam_search(beams, {beam, length_penalty, beams.max_len()}, true), opt,
                      vocab.words, &full);
      std::vector<std::vector<int64_t>> greedy;
      Rng rng(0);
      GPT g = model.module();  // the modules' GPT, fed through its caches
      for (int64_t h : held) greedy.push_back(generate(g, encode_prompt(h), cfg.ctx, Sampler{}, rng));
      const auto beamK = beam_complete(model, held, opt);
      show_beam_vs_greedy(
          ch, held, greedy, beam == 1 ? beamK : beam_complete(model, held, {1, length_penalty, 0}), beamK, opt,
          [&](size_t i, const std::vector<int64_t>& t) { return vocab.decode(t) == number_to_words(held[i]); },
          [&](const std::vector<int64_t>& t) { return vocab.decode(t); });
      show_beam_cache_check(ch, check_gpt_cache(model, std::vector<int64_t>(held.begin(), held.begin() + 10),
                                                {std::max<int64_t>(beam, 4), length_penalty, 0}),
                            "GptBeams", "forward", kv_cache_append_site(), gpt_reorder_site(),
                            mask_breaks_cache(gpt_mask(cfg, cfg.ctx), cfg.ctx, gpt_causal_mask_site()));
    }

    // ---------------------------------------------------------------- 4) sampling
    ch.section(_("Step 4: one generation step, transform by transform: temperature, top-k, top-p"),
               _("GPT-2 / Hugging Face generate(): logits / T, top-k, nucleus (top-p), renormalise, draw"));
    if (ch.rich()) {  // --plain and --transcript print none of this step: they skip its work
      const bool given = ch.given("--temperature") || ch.given("--top-k") || ch.given("--top-p");
      show_sampling_step(ch, model, number >= 0 ? number : 3907, given ? sampler : Sampler{0.8, 5, 0.9}, ch.seed);
      show_settings(ch, model, sampler, samples, ch.seed);
    }

    // ---------------------------------------------------------------- 5) the KV cache
    ch.section(_("Step 5: the KV cache: the same tokens as recomputing the prefix, and faster"),
               _("every attention layer keeps the keys and values of the tokens so far"));
    show_cache_check(ch, model);
    if (ch.rich()) show_cache_speed(ch, model);

    // ---------------------------------------------------------------- 6) ch11 beside it
    if (vs_ch11) {
      ch.section(_("Step 6: the encoder-decoder (ch11) and the decoder-only model (ch12), side by side"),
                 _("article 002 §9.1.3: encoder-decoder vs decoder-only"));
      show_vs_ch11(ch, model, RunSummary{model.parameter_count(), steps, step_95, seconds_95, exact}, 2000);
    }

    // ---------------------------------------------------------------- 7) save
    if (!save_dir.empty()) {
      ch.section(_("Step 7: save the weights and the optimizer as safetensors"), _("as ch11 --save"));
      save_or_usage(save_dir, model, adam);
      ch.show("save",
              fmt::format("saved {}/model.safetensors and {}/optimizer.safetensors (step {})", save_dir, save_dir, adam.step),
              _("nanoGPT's state_dict keys; load them with --load DIR"), Shown::Twin);
    }
  });
}

static int64_t parse_number(const std::string& flag, const std::string& text) { return task_number(flag, text); }

// logits / T must stay a finite double for every float logit: T >= FLT_MAX / DBL_MAX, rounded
// up to a power of ten (train/sampling.cpp divides in double)
static double smallest_temperature() {
  return std::pow(10.0, std::ceil(std::log10(double(std::numeric_limits<float>::max()) /
                                             std::numeric_limits<double>::max())));
}

static void check_knobs(const Chapter& ch, double dropout, double lr, const Sampler& s) {
  check_adam_knobs(dropout, lr);
  if (!(s.temperature >= 0.0 && s.temperature <= 100.0))
    throw UsageError(trf("--temperature must be in [0, 100] (0 = greedy), got {v}", fmt::arg("v", s.temperature)));
  const double smallest = smallest_temperature();
  if (s.temperature > 0.0 && s.temperature < smallest)
    throw UsageError(trf("--temperature {v} is too small: logits / T overflows a double below {min} (the largest float "
                         "logit / the largest double): give 0 (greedy) or at least {min}",
                         fmt::arg("v", s.temperature), fmt::arg("min", smallest)));
  if (!(s.top_p > 0.0 && s.top_p <= 1.0))
    throw UsageError(trf("--top-p must be in (0, 1] (1 keeps every token), got {v}", fmt::arg("v", s.top_p)));
  if (s.greedy() && (ch.given("--top-k") || ch.given("--top-p")))
    throw UsageError(_("--top-k and --top-p cut a distribution that is sampled: give --temperature > 0 too "
                       "(temperature 0 is greedy)"));
}

// The losses' digits come from the order in which the products and the GELU backward add: named
// from what ran (the sgemm calls of the training and blas_core(), exact/matmul.hpp; the route of
// the last GELU backward, train/gpt.hpp), never from a setting.
static void show_training_arithmetic(Chapter& ch, int64_t products) {
  const std::string core = blas_core(), route = gelu_backward_route();
  if (products == 0 && route.empty()) {  // --naive: neither OpenBLAS nor a SIMD route ran
    ch.say(_("  The digits of these losses come from the plain loops (--naive): no OpenBLAS kernel and no SIMD route "
             "ran, so OPENBLAS_CORETYPE and TS_ISA do not change them."));
    return;
  }
  const std::string blas =
      products == 0 ? std::string(_("no product went to the BLAS (the plain loops of --naive ran)"))
      : core.empty() ? trf("{n} products ran on the system BLAS", fmt::arg("n", products))
                     : trf("{n} products ran on OpenBLAS's {core} kernel", fmt::arg("n", products), fmt::arg("core", core));
  const std::string gelu = route.empty() ? std::string(_("the GELU backward in the module's plain loop"))
                                         : trf("the GELU backward on the {isa} SIMD route", fmt::arg("isa", route));
  ch.say(trf("  The digits of these losses depend on the CPU's arithmetic: {blas}, {gelu}. Another OpenBLAS kernel "
             "(another CPU, or OPENBLAS_CORETYPE) or route (TS_ISA) adds in another order, and a few hundred steps "
             "later the printed losses differ; docs/ch12_gpt.md's samples pin OPENBLAS_CORETYPE=Haswell TS_ISA=avx2.",
             fmt::arg("blas", blas), fmt::arg("gelu", gelu)));
}

static void check_greedy_is_argmax(Chapter& ch, const Gpt& model) {
  // logits (1,L,V) for the first held-out prompt; the next token greedy decoding takes from the last row
  const std::vector<int64_t> prompt = encode_prompt(number_split().held_out[0]);
  GPT g = model.module();
  ITensor idx = ITensor::from_shape({1, prompt.size()});
  std::copy(prompt.begin(), prompt.end(), idx.begin());
  const Tensor logits = g.forward(idx);
  const int64_t V = g.config.vocab_size;
  const float* last = logits.data() + (prompt.size() - 1) * size_t(V);
  Rng unused(0);
  const int64_t picked = sample_next(last, V, Sampler{}, unused), top = std::max_element(last, last + V) - last;
  if (picked != top)
    ch.say("  " + ch.verdict(false, trf("greedy decoding took token {p} after the prompt of {n}, where the largest "
                                        "logit ({l:.4g}) is token {t}'s ({lt:.4g} for token {p}): sample_next with "
                                        "the greedy Sampler does not take the argmax (look at {site})",
                                        fmt::arg("p", picked), fmt::arg("n", number_split().held_out[0]),
                                        fmt::arg("l", last[top]), fmt::arg("t", top),
                                        fmt::arg("lt", picked >= 0 && picked < V ? last[picked] : NAN),
                                        fmt::arg("site", sample_next_site()))));
}
