// train/checkpoint.cpp: see checkpoint.hpp.
#include "train/checkpoint.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace ts::train {

namespace fs = std::filesystem;

static std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

void save_checkpoint(const std::string& dir, const Model<float>& m, const Adam& adam) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw FileError("cannot create the folder " + dir + ": " + ec.message());
  StFile weights, optim;
  const bool have_moments = adam.exp_avg.size() == m.params.size();
  for (const ParamSpec& s : m.layout.specs) {
    weights[s.name] = st_f32(m.params.data() + s.offset, s.shape);
    if (have_moments) {
      optim[s.name + ".exp_avg"] = st_f32(adam.exp_avg.data() + s.offset, s.shape);
      optim[s.name + ".exp_avg_sq"] = st_f32(adam.exp_avg_sq.data() + s.offset, s.shape);
    }
  }
  const ModelConfig& c = m.cfg;
  const std::string step = std::to_string(adam.step);
  save_safetensors(dir + "/model.safetensors", weights,
                   {{"format", "pt"}, {"step", step}, {"layers", std::to_string(c.layers)},
                    {"d_model", std::to_string(c.d_model)}, {"heads", std::to_string(c.heads)},
                    {"d_ff", std::to_string(c.d_ff)}, {"norm", c.pre_ln ? "pre-LN" : "post-LN"}});
  save_safetensors(dir + "/optimizer.safetensors", optim,
                   {{"step", step}, {"lr", fmt::format("{}", adam.lr)}, {"betas", fmt::format("{} {}", adam.beta1, adam.beta2)},
                    {"eps", fmt::format("{}", adam.eps)}});
}

// Copies the tensor `key` of `file` into dst after checking its dtype and shape.
static void take(const StFile& file, const std::string& path, const std::string& key,
                 const std::vector<int64_t>& shape, float* dst) {
  const auto it = file.find(key);
  if (it == file.end()) throw FileError(path + " has no tensor " + key + ": was it saved by another model?");
  if (it->second.dtype != "F32") throw FileError(path + ": " + key + " is " + it->second.dtype + ", not F32");
  if (it->second.shape != shape)
    throw FileError(fmt::format("{}: {} has shape {}, this model expects {}: pass the --layers/--d-model/--heads/--d-ff "
                                "it was saved with",
                                path, key, shape_text(it->second.shape), shape_text(shape)));
  std::copy(it->second.data.begin(), it->second.data.end(), reinterpret_cast<unsigned char*>(dst));
}

static int64_t step_of(const StMeta& meta, const std::string& path) {
  const auto it = meta.find("step");
  try {
    if (it != meta.end()) return std::stoll(it->second);
  } catch (const std::exception&) {
  }
  throw FileError(path + " has no valid step in its __metadata__");
}

void load_checkpoint(const std::string& dir, Model<float>& m, Adam& adam) {
  const std::string mpath = dir + "/model.safetensors", opath = dir + "/optimizer.safetensors";
  if (!fs::is_directory(dir)) throw FileError("no checkpoint folder " + dir + " (write one with --save DIR)");
  StMeta mmeta, ometa;
  const StFile weights = load_safetensors(mpath, &mmeta);
  const StFile optim = load_safetensors(opath, &ometa);
  const int64_t step = step_of(mmeta, mpath), ostep = step_of(ometa, opath);
  if (step != ostep)
    throw FileError(fmt::format("checkpoint {} is inconsistent: model step {}, optimizer step {} (an interrupted "
                                "save?)",
                                dir, step, ostep));
  if (weights.size() != m.layout.specs.size()) {
    for (const auto& [key, t] : weights) {
      bool known = false;
      for (const ParamSpec& s : m.layout.specs) known = known || s.name == key;
      if (!known) throw FileError(mpath + " has a tensor " + key + " this model does not have: pass the --layers it was saved with");
    }
  }
  std::vector<float> params(m.params.size()), ea, eas;
  if (step > 0) {
    ea.resize(m.params.size());
    eas.resize(m.params.size());
  }
  for (const ParamSpec& s : m.layout.specs) {
    take(weights, mpath, s.name, s.shape, params.data() + s.offset);
    if (step > 0) {
      take(optim, opath, s.name + ".exp_avg", s.shape, ea.data() + s.offset);
      take(optim, opath, s.name + ".exp_avg_sq", s.shape, eas.data() + s.offset);
    }
  }
  // everything read and checked: only now touch the model
  m.params = std::move(params);
  adam.step = step;
  adam.exp_avg = std::move(ea);
  adam.exp_avg_sq = std::move(eas);
}

}  // namespace ts::train
