// train/checkpoint_model.cpp: what a checkpoint holds of a model (see checkpoint.hpp): its
// tensors and Adam's moments under the state_dict keys, read back only when every key, dtype and
// shape is right (every chapter's); ch11's encoder-decoder saved and loaded with its settings.
// The folder, its lock, its checksums and its one-step swap are checkpoint.cpp's.
#include "train/checkpoint.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace ts::train {

namespace {

const char kModelFile[] = "/model.safetensors", kOptimFile[] = "/optimizer.safetensors";

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// A metadata value that must be one of `allowed`, written as it is.
std::string text_of(const StMeta& meta, const std::string& key, const std::vector<std::string>& allowed,
                    const std::string& path) {
  const auto it = meta.find(key);
  if (it == meta.end() || std::find(allowed.begin(), allowed.end(), it->second) == allowed.end())
    throw FileError(N_("{path} has no valid {key} in its __metadata__ ({allowed} expected): it was not written by "
                       "--save; train and save it again"),
                    fmt::arg("path", path), fmt::arg("key", key), fmt::arg("allowed", fmt::format("{}", fmt::join(allowed, " / "))));
  return it->second;
}

// ch11's settings out of model.safetensors' metadata (its format and kind already checked), in the
// ranges ch11's flags accept
ModelConfig settings_of(const StMeta& meta, const ModelConfig& cfg, const std::string& path) {
  ModelConfig c = cfg;
  c.layers = checkpoint_int(meta, "layers", 1, 12, path);
  c.d_model = checkpoint_int(meta, "d_model", 2, 1024, path);
  c.heads = checkpoint_int(meta, "heads", 1, c.d_model, path);
  c.d_ff = checkpoint_int(meta, "d_ff", 1, 8192, path);
  c.src_vocab = checkpoint_int(meta, "src_vocab", 1, 1000000, path);
  c.tgt_vocab = checkpoint_int(meta, "tgt_vocab", 1, 1000000, path);
  if (c.d_model % c.heads != 0)
    throw FileError(N_("{path}: its heads {H} do not divide its d_model {C}: it was not written by --save"),
                    fmt::arg("path", path), fmt::arg("H", c.heads), fmt::arg("C", c.d_model));
  c.pre_ln = text_of(meta, "norm", {"pre-LN", "post-LN"}, path) == "pre-LN";
  c.look_ahead = text_of(meta, "look_ahead", {"true", "false"}, path) == "true";
  c.scale_scores = text_of(meta, "scale_scores", {"true", "false"}, path) == "true";
  return c;
}

}  // namespace

CheckpointFiles checkpoint_files(const std::vector<ParamSpec>& specs, const std::vector<float>& params, const Adam& adam) {
  CheckpointFiles f;
  const bool moments = adam.exp_avg.size() == params.size();  // after a step of training
  for (const ParamSpec& s : specs) {
    f.weights[s.name] = st_f32(params.data() + s.offset, s.shape);
    if (moments) {
      f.optim[s.name + ".exp_avg"] = st_f32(adam.exp_avg.data() + s.offset, s.shape);
      f.optim[s.name + ".exp_avg_sq"] = st_f32(adam.exp_avg_sq.data() + s.offset, s.shape);
    }
  }
  f.ometa = {{"lr", fmt::format("{}", adam.lr)}, {"betas", fmt::format("{} {}", adam.beta1, adam.beta2)},
             {"eps", fmt::format("{}", adam.eps)}};
  return f;
}

CheckpointParams checkpoint_params(const CheckpointFiles& f, const std::string& dir, const std::vector<ParamSpec>& specs,
                                   size_t total, int64_t step) {
  const std::string mpath = dir + kModelFile, opath = dir + kOptimFile;
  // every tensor: a key this model has, the dtype and shape it expects
  const auto take = [&](const StFile& file, const std::string& path, const std::string& key,
                        const std::vector<int64_t>& shape, float* dst) {
    const auto it = file.find(key);
    if (it == file.end())
      throw FileError(N_("{path} has no tensor {key}: it was saved by another model"), fmt::arg("path", path),
                      fmt::arg("key", key));
    if (it->second.dtype != "F32")
      throw FileError(N_("{path}: {key} is {dtype}, not F32"), fmt::arg("path", path), fmt::arg("key", key),
                      fmt::arg("dtype", it->second.dtype));
    if (it->second.shape != shape)
      throw FileError(N_("{path}: {key} has shape {shape}, this model expects {expected}: it does not match its own "
                         "settings"),
                      fmt::arg("path", path), fmt::arg("key", key), fmt::arg("shape", shape_text(it->second.shape)),
                      fmt::arg("expected", shape_text(shape)));
    std::copy(it->second.data.begin(), it->second.data.end(), reinterpret_cast<unsigned char*>(dst));
  };
  // nothing this model does not have (the moments only after a step of training)
  std::set<std::string> keys, moment_keys;
  for (const ParamSpec& s : specs) {
    keys.insert(s.name);
    if (step > 0) moment_keys.insert({s.name + ".exp_avg", s.name + ".exp_avg_sq"});
  }
  for (const auto& [file, path, known] : {std::tuple{&f.weights, mpath, &keys}, std::tuple{&f.optim, opath, &moment_keys}})
    for (const auto& [key, t] : *file)
      if (known->count(key) == 0)
        throw FileError(N_("{path} has a tensor {key} this model does not have: it was saved by another model"),
                        fmt::arg("path", path), fmt::arg("key", key));
  CheckpointParams p;
  p.params.resize(total);
  if (step > 0) {
    p.exp_avg.resize(total);
    p.exp_avg_sq.resize(total);
  }
  for (const ParamSpec& s : specs) {
    take(f.weights, mpath, s.name, s.shape, p.params.data() + s.offset);
    if (step > 0) {
      take(f.optim, opath, s.name + ".exp_avg", s.shape, p.exp_avg.data() + s.offset);
      take(f.optim, opath, s.name + ".exp_avg_sq", s.shape, p.exp_avg_sq.data() + s.offset);
    }
  }
  // Adam's second moment is a mean of squares: a negative one would turn the next step into NaN
  for (const ParamSpec& s : specs)
    for (size_t i = s.offset; i < s.offset + s.numel && step > 0; ++i)
      if (p.exp_avg_sq[i] < 0)
        throw FileError(N_("{path}: tensor {tensor}.exp_avg_sq holds a negative value (a mean of squares cannot be): "
                           "the file was altered; save it again"),
                        fmt::arg("path", opath), fmt::arg("tensor", s.name));
  return p;
}

std::vector<CheckpointKey> keys_of(const NamedTensors& named) {
  std::vector<CheckpointKey> keys;
  for (size_t i = 0; i < named.size(); ++i) {
    CheckpointKey k{named[i].first, {}, {i}};
    for (size_t d : named[i].second->shape()) k.shape.push_back(static_cast<int64_t>(d));
    keys.push_back(std::move(k));
  }
  return keys;
}

uint64_t parameter_bytes(const NamedTensors& named) { return parameter_count(named) * sizeof(float); }

namespace {
// Where each key's values sit: the file's packing (specs, the keys one after another) and, for each
// of its parameters, the parameter's range in the module's packing (named_parameters() order,
// Adam's moments).
struct KeyPacking {
  std::vector<ParamSpec> specs;
  std::vector<size_t> module_offset;  // per named parameter
  size_t total = 0;
};
KeyPacking pack(const NamedTensors& named, const std::vector<CheckpointKey>& keys) {
  KeyPacking k;
  for (const auto& nt : named) k.module_offset.push_back(k.total), k.total += nt.second->size();
  size_t offset = 0, seen = 0;
  for (const CheckpointKey& key : keys) {
    ParamSpec s{key.key, key.shape, offset, 0};
    for (size_t i : key.params) s.numel += named.at(i).second->size();
    size_t numel = 1;
    for (int64_t d : key.shape) numel *= static_cast<size_t>(d);
    if (numel != s.numel) throw std::logic_error("checkpoint key " + key.key + ": its shape is not its parameters' size");
    offset += s.numel, seen += key.params.size();
    k.specs.push_back(std::move(s));
  }
  if (offset != k.total || seen != named.size())
    throw std::logic_error("checkpoint keys: they do not hold every parameter once");
  return k;
}
// from (to_file) or into the file's packing, each key's parameters in turn
void repack(const NamedTensors& named, const std::vector<CheckpointKey>& keys, const KeyPacking& k, const float* from,
            float* to, bool to_file) {
  for (size_t j = 0; j < keys.size(); ++j) {
    size_t at = k.specs[j].offset;
    for (size_t i : keys[j].params) {
      const size_t n = named[i].second->size(), m = k.module_offset[i];
      if (to_file)
        std::copy_n(from + m, n, to + at);
      else
        std::copy_n(from + at, n, to + m);
      at += n;
    }
  }
}
}  // namespace

CheckpointFiles checkpoint_files(const NamedTensors& named, const std::vector<CheckpointKey>& keys, const Adam& adam) {
  const KeyPacking k = pack(named, keys);
  std::vector<float> module(k.total), file(k.total);
  for (size_t i = 0; i < named.size(); ++i)
    std::copy_n(named[i].second->data(), named[i].second->size(), module.data() + k.module_offset[i]);
  repack(named, keys, k, module.data(), file.data(), true);
  Adam moments = adam;  // the moments in the file's packing (none before the first step)
  if (adam.exp_avg.size() == k.total) {
    repack(named, keys, k, adam.exp_avg.data(), moments.exp_avg.data(), true);
    repack(named, keys, k, adam.exp_avg_sq.data(), moments.exp_avg_sq.data(), true);
  }
  return checkpoint_files(k.specs, file, moments);
}

void load_checkpoint_tensors(const CheckpointFiles& f, const std::string& dir, int64_t step, const NamedTensors& named,
                             const std::vector<CheckpointKey>& keys, Adam& adam) {
  const KeyPacking k = pack(named, keys);
  CheckpointParams p = checkpoint_params(f, dir, k.specs, k.total, step);
  // everything read and checked: only now touch the model
  std::vector<float> module(k.total);
  repack(named, keys, k, p.params.data(), module.data(), false);
  for (size_t i = 0; i < named.size(); ++i)
    std::copy_n(module.data() + k.module_offset[i], named[i].second->size(), named[i].second->data());
  adam.step = step, adam.exp_avg.assign(p.exp_avg.size(), 0.0f), adam.exp_avg_sq.assign(p.exp_avg_sq.size(), 0.0f);
  if (step > 0) {
    repack(named, keys, k, p.exp_avg.data(), adam.exp_avg.data(), false);
    repack(named, keys, k, p.exp_avg_sq.data(), adam.exp_avg_sq.data(), false);
  }
}

void save_checkpoint(const std::string& dir, const Model<float>& m, const Adam& adam) {
  CheckpointFiles f = checkpoint_files(m.layout.specs, m.params, adam);
  const ModelConfig& c = m.cfg;
  const auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  f.wmeta = {{"format", "pt"}, {"layers", std::to_string(c.layers)}, {"d_model", std::to_string(c.d_model)},
             {"heads", std::to_string(c.heads)}, {"d_ff", std::to_string(c.d_ff)},
             {"norm", c.pre_ln ? "pre-LN" : "post-LN"}, {"look_ahead", yes(c.look_ahead)},
             {"scale_scores", yes(c.scale_scores)}, {"src_vocab", std::to_string(c.src_vocab)},
             {"tgt_vocab", std::to_string(c.tgt_vocab)}};
  save_checkpoint_folder(dir, kTransformerKind, adam.step, std::move(f));
}

ModelConfig checkpoint_settings(const std::string& dir, const ModelConfig& cfg) {
  return settings_of(checkpoint_metadata(dir, kTransformerKind), cfg, dir + kModelFile);
}

ModelConfig adopt_checkpoint_settings(const ModelConfig& asked, const ModelConfig& saved,
                                      const std::function<bool(const std::string&)>& given) {
  ModelConfig c = asked;
  const struct {
    const char* flag;
    int64_t ModelConfig::*field;
  } sizes[] = {{"--layers", &ModelConfig::layers},
               {"--d-model", &ModelConfig::d_model},
               {"--heads", &ModelConfig::heads},
               {"--d-ff", &ModelConfig::d_ff}};
  for (const auto& s : sizes) {
    if (given(s.flag) && asked.*s.field != saved.*s.field)
      throw FileError(N_("{flag} {asked} disagrees with the checkpoint, saved with {flag} {saved}: drop {flag} to use the "
                         "checkpoint's"),
                      fmt::arg("flag", s.flag), fmt::arg("asked", asked.*s.field), fmt::arg("saved", saved.*s.field));
    c.*s.field = saved.*s.field;
  }
  const struct {
    const char* flag;  // the flag that turns the setting off
    bool ModelConfig::*field;
    const char* refusal;  // the flag given, the checkpoint saved with the setting on
  } switches[] = {
      {"--post-ln", &ModelConfig::pre_ln,
       N_("--post-ln disagrees with the checkpoint, saved pre-LN: drop --post-ln to use the checkpoint's")},
      {"--no-look-ahead", &ModelConfig::look_ahead,
       N_("--no-look-ahead disagrees with the checkpoint, saved with the look-ahead mask: drop --no-look-ahead to use "
          "the checkpoint's")},
      {"--no-scale", &ModelConfig::scale_scores,
       N_("--no-scale disagrees with the checkpoint, saved with the scores scaled by sqrt(d_k): drop --no-scale to use "
          "the checkpoint's")}};
  for (const auto& s : switches) {
    // the flag turns the setting off, so a flag given that disagrees meets a checkpoint saved with it on
    if (given(s.flag) && asked.*s.field != saved.*s.field) throw FileError(s.refusal);
    c.*s.field = saved.*s.field;
  }
  if (asked.src_vocab != saved.src_vocab || asked.tgt_vocab != saved.tgt_vocab)
    throw FileError(N_("the checkpoint's vocabularies have {vs} and {vt} words, this course's {as} and {at}: it was saved "
                       "for another task; train and save it again"),
                    fmt::arg("vs", saved.src_vocab), fmt::arg("vt", saved.tgt_vocab), fmt::arg("as", asked.src_vocab),
                    fmt::arg("at", asked.tgt_vocab));
  return c;
}

void load_checkpoint(const std::string& dir, Model<float>& m, Adam& adam) {
  CheckpointFiles f;
  const int64_t step = read_checkpoint_folder(dir, kTransformerKind, m.params.size() * sizeof(float), f);
  // the settings: every one the model was built with must be the checkpoint's
  adopt_checkpoint_settings(m.cfg, settings_of(f.wmeta, m.cfg, dir + kModelFile), [](const std::string&) { return true; });
  CheckpointParams p = checkpoint_params(f, dir, m.layout.specs, m.params.size(), step);
  // everything read and checked: only now touch the model
  m.params = std::move(p.params);
  adam.step = step;
  adam.exp_avg = std::move(p.exp_avg);
  adam.exp_avg_sq = std::move(p.exp_avg_sq);
}

}  // namespace ts::train
