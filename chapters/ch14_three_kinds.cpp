// ch14_three_kinds: the three kinds of Transformer side by side: encoder-decoder (ch11),
// decoder-only (ch12), encoder-only (ch13), each trained here until its held-out target.
//
// Follows: article 002 §9.1.3 (three kinds of Transformer: an encoder-only one turns a sequence
//          into vectors and classifies text; a decoder-only one continues a prompt one token at a
//          time; an encoder-decoder one reads with its encoder and writes with its decoder).
// Task:    ch11's and ch12's numbers -> English words (held-out exact match), ch13's last digit of
//          a number written in words (held-out accuracy): the same 500 held-out numbers.
// Formula: encoder-decoder  y_t = Dec(y_<t, Enc(x))   masks: source padding, causal self, cross
//          decoder-only     y_t = Dec([x, y_<t])       mask: causal over prompt + answer
//          encoder-only     c   = Head(Enc([CLS] x)[0]) mask: padding only
// Run:     ./build/ch14_three_kinds                     # train all three to 95 %, then the table
//          ./build/ch14_three_kinds --max-steps 100     # a quick look (the targets may be missed)
#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <tuple>
#include <vector>

#include "course/chapter.hpp"
#include "course/counts.hpp"
#include "course/gpt_report.hpp"  // kCheckEvery, kTarget: how ch12 --vs-ch11 scores its runs
#include "course/i18n.hpp"
#include "course/settings.hpp"
#include "course/three_kinds.hpp"
#include "course/train_knobs.hpp"  // encdec_config, encdec_trainer: ch11's model and Trainer
#include "exact/matmul.hpp"  // set_blas_threads
#include "train/numbers.hpp"
#include "train/until_target.hpp"

using namespace ts;
using namespace ts::train;

// One kind's run: the held-out line its chapter prints, and the run's figures.
static void show_run(Chapter& ch, const Kind& k);

int main(int argc, char** argv) {
  Chapter ch("ch14_three_kinds",
             _("Three kinds of Transformer side by side: encoder-decoder, decoder-only, encoder-only"),
             {{2, N_("§9.1.3 (不同类型的 Transformer)")}});
  // the cap: ch11's --steps default, read from ch11's settings (course/settings.cpp), not copied
  int64_t max_steps = ch11_defaults().steps, check_every = kCheckEvery, target_pct = int64_t(100 * kTarget);
  ch.option("--max-steps", max_steps,
            _("stop each run after this many steps if its target is not reached (ch11's --steps)"), 1,
            1000000);
  ch.option("--check-every", check_every, _("score the held-out numbers every N steps (as ch12 does)"), 1,
            1000000);
  ch.option("--target", target_pct, _("the held-out score, in percent, at which a run stops"), 1, 100);

  return ch.run(argc, argv, [&](Chapter& ch) {
    const TargetPlan plan{check_every, max_steps, double(target_pct) / 100.0};
    // each chapter's own defaults (course/settings.cpp), the structs those chapters bind their flags to
    const Ch11Settings s11 = ch11_defaults();
    const Ch12Settings s12 = ch12_defaults();
    const Ch13Settings s13 = ch13_defaults();

    // ---------------------------------------------------------------- 1) the three models
    ch.section(_("Step 1: three models with their chapters' defaults: what each reads and writes"),
               _("article 002 §9.1.3"));
    // ch11: ch10's EncoderDecoder with article 004's differences, built and trained as ch11 does
    // (course/train_knobs.hpp): the config its flags start from, its Trainer, threads and Adam
    ModelConfig ed_cfg = encdec_config(s11);
    Trainer ed = encdec_trainer(ed_cfg, s11, ch.seed);
    // ch12: GPT-2's layout with ch12's defaults, tied LM head, causal mask; Adam at ch12's lr
    GptConfig gpt_cfg;
    gpt_cfg.vocab = seq_vocab().size();
    gpt_cfg.layers = s12.layers, gpt_cfg.d_model = s12.d_model, gpt_cfg.heads = s12.heads, gpt_cfg.d_ff = s12.d_ff;
    gpt_cfg.dropout = s12.dropout;
    Gpt gpt(gpt_cfg, ch.seed, int(s12.threads));
    Adam gpt_adam;
    gpt_adam.lr = s12.lr;
    // ch13: article 000's encoder with a [CLS] head, ch13's defaults
    ClassifierConfig cls_cfg;
    cls_cfg.vocab = classifier_vocab();
    cls_cfg.layers = s13.layers, cls_cfg.d_model = s13.d_model, cls_cfg.heads = s13.heads, cls_cfg.d_ff = s13.d_ff;
    cls_cfg.dropout = s13.dropout;
    Classifier cls = init_classifier(cls_cfg, ch.seed);
    Adam cls_adam;
    cls_adam.lr = s13.lr;
    // what each run uses, read back from the objects built above, against its chapter's defaults
    Ch11Settings u11 = s11;
    const ModelConfig& ed_used = ed.model().cfg;
    u11.lr = ed.adam().lr, u11.dropout = ed_used.dropout, u11.layers = ed_used.layers, u11.d_model = ed_used.d_model;
    u11.heads = ed_used.heads, u11.d_ff = ed_used.d_ff, u11.label_smoothing = ed_used.label_smoothing;
    u11.threads = ed.threads();
    Ch12Settings u12 = s12;
    u12.lr = gpt_adam.lr, u12.dropout = gpt.cfg.dropout, u12.layers = gpt.cfg.layers, u12.d_model = gpt.cfg.d_model;
    u12.heads = gpt.cfg.heads, u12.d_ff = gpt.cfg.d_ff;
    Ch13Settings u13 = s13;
    u13.lr = cls_adam.lr, u13.dropout = cls.cfg.dropout, u13.layers = cls.cfg.layers, u13.d_model = cls.cfg.d_model;
    u13.heads = cls.cfg.heads, u13.d_ff = cls.cfg.d_ff;
    bool all_defaults = true;
    for (const auto& [name, used, defaults] : {std::tuple{"ch11", describe(u11), describe(s11)},
                                               std::tuple{"ch12", describe(u12), describe(s12)},
                                               std::tuple{"ch13", describe(u13), describe(s13)}}) {
      all_defaults = all_defaults && used == defaults;
      ch.say(used == defaults
                 ? trf("  {name}'s model runs with its chapter's defaults (src/course/settings.cpp): {used}.",
                       fmt::arg("name", name), fmt::arg("used", used))
                 : trf("  {name}'s model runs with {used}, NOT its chapter's defaults ({defaults}, "
                       "src/course/settings.cpp): this chapter changed them.",
                       fmt::arg("name", name), fmt::arg("used", used), fmt::arg("defaults", defaults)));
    }

    const std::vector<int64_t> held = number_split().held_out;
    // what each reads and writes, read from its config; the score its chapter prints
    Kind k_ed = make_kind(N_("encoder-decoder (ch11)"), ed_cfg.src_vocab, ed_cfg.max_len,
                          trf("1 of {V} per step", fmt::arg("V", ed_cfg.tgt_vocab)), ed.model().layout.total,
                          encdec_positions(), "exact match");
    Kind k_gpt = make_kind(N_("decoder-only (ch12)"), gpt_cfg.vocab, gpt_cfg.ctx,
                           trf("1 of {V} per step", fmt::arg("V", gpt_cfg.vocab)), gpt.parameter_count(), gpt_positions(),
                           "exact match");
    Kind k_cls = make_kind(N_("encoder-only (ch13)"), cls_cfg.vocab, cls_cfg.max_len,
                           trf("1 of {K} classes, once", fmt::arg("K", cls_cfg.classes)), cls.parameter_count(),
                           classifier_positions(), "accuracy");
    ch.say(trf("  {name} reads the digits of a number (vocabulary {vs}, positions up to {P}) with its encoder and the "
               "words written so far with its decoder, and writes the next of {tgt} words, until <end>: {p} "
               "parameters.",
               fmt::arg("name", k_ed.name), fmt::arg("vs", ed_cfg.src_vocab), fmt::arg("P", ed_cfg.max_len),
               fmt::arg("tgt", ed_cfg.tgt_vocab), fmt::arg("p", thousands(k_ed.params))));
    ch.say(trf("  {name} reads the digits, '=' and the words so far as one stream (vocabulary {V}, positions up to "
               "{P}) and writes the next token of the same {V}, until <end>: {p} parameters.",
               fmt::arg("name", k_gpt.name), fmt::arg("P", gpt_cfg.ctx), fmt::arg("V", gpt_cfg.vocab),
               fmt::arg("p", thousands(k_gpt.params))));
    {  // the label rule, read from make_cls_batch's labels of the held-out numbers
      const ClsBatch hb = make_cls_batch(held);
      int64_t other = 0;  // held-out numbers whose label is not their last digit
      for (int64_t i = 0; i < hb.B; ++i) other += hb.labels[size_t(i)] != hb.numbers[size_t(i)] % 10;
      ch.say(trf("  {name} reads [CLS] and the words of a number (vocabulary {V}, positions up to {P}) and writes one "
                 "of {K} classes, {what}, in one pass: {p} parameters.",
                 fmt::arg("name", k_cls.name), fmt::arg("V", cls_cfg.vocab), fmt::arg("P", cls_cfg.max_len),
                 fmt::arg("K", cls_cfg.classes),
                 fmt::arg("what", other == 0 ? std::string(_("its last digit"))
                                             : trf("the label {site} gives, NOT the last digit for {k} of the {n} "
                                                   "held-out numbers",
                                                   fmt::arg("site", make_cls_batch_site()), fmt::arg("k", other),
                                                   fmt::arg("n", hb.B))),
                 fmt::arg("p", thousands(k_cls.params))));
    }
    {  // the budget: every run to its cap, each step ~3 x (2 x params) multiply-adds per position;
       // a run stops at its target, so that is a bound, and the note says so
      double madds = 0, bytes = 0;
      const Kind* const kinds[] = {&k_ed, &k_gpt, &k_cls};
      for (const Kind* k : kinds) {
        const int64_t batch = k == &k_ed ? s11.batch : k == &k_gpt ? s12.batch : s13.batch;
        madds += 3.0 * double(max_steps) * double(batch) * k->positions * double(k->params);
        bytes += 4.0 * 4.0 * double(k->params);
      }
      ch.budget(bytes, madds, "--max-steps", 0,
                trf("if each of the {n} runs goes on to --max-steps {max}, not reaching its {pct} % target first",
                    fmt::arg("n", std::size(kinds)), fmt::arg("max", max_steps), fmt::arg("pct", target_pct)));
    }

    // ---------------------------------------------------------------- 2) the masks
    ch.section(_("Step 2: the attention masks each forward builds"), _("article 002 §9.1.3; ch08, ch11, ch12, ch13"));
    show_masks(ch, ed, gpt, cls, held[17], held[499], k_ed, k_gpt, k_cls);

    // ---------------------------------------------------------------- 3) train each to its target
    ch.section(_("Step 3: train each model until its held-out target"), _("article 004 §模型训练和测试 train_step"));
    k_ed.run = train_encdec_until(ed, s11.batch, ch.seed, plan);
    show_run(ch, k_ed);
    k_gpt.run = train_gpt_until(gpt, gpt_adam, s12.batch, ch.seed, plan);
    show_run(ch, k_gpt);
    set_blas_threads(1);  // as ch13: (B*T, 64) products gain nothing from more BLAS threads
    k_cls.run = train_classifier_until(cls, cls_adam, s13.batch, ch.seed, plan);
    show_run(ch, k_cls);

    // ---------------------------------------------------------------- 4) side by side
    ch.section(_("Step 4: side by side, and which kind fits which task"), _("article 002 §9.1.3"));
    show_kinds_table(ch, {k_ed, k_gpt, k_cls}, plan, cls_cfg.classes, all_defaults);
  });
}

static void show_run(Chapter& ch, const Kind& k) {
  const size_t n = number_split().held_out.size();
  const int64_t right = std::llround(k.run.held_out * double(n));
  ch.show(
      fmt::format("{}: held-out {}", k.id, k.score),
      fmt::format("held-out {}: {}/{} ({:.1f} %)", k.score, right, n, 100.0 * k.run.held_out),
      k.run.hit()
          ? trf("target reached at step {s}, {t:.1f} s into training; {r:.1f} steps/s", fmt::arg("s", k.run.step_hit),
                fmt::arg("t", k.run.seconds_hit), fmt::arg("r", k.run.steps_per_second()))
          : trfn("target NOT reached: stopped after {s} step ({t:.1f} s, {r:.1f} steps/s)",
                 "target NOT reached: stopped after {s} steps ({t:.1f} s, {r:.1f} steps/s)",
                 static_cast<unsigned long>(k.run.steps), fmt::arg("s", k.run.steps),
                 fmt::arg("t", k.run.seconds), fmt::arg("r", k.run.steps_per_second())),
      Shown::Article);
}
