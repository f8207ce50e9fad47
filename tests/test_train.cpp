// test_train.cpp: src/train/ -- the digits -> words task, the safetensors files (round trip,
// truncation, symlinks), checkpoints (round trip, mismatched shapes), and the whole-model
// gradient check against finite differences (double precision, tiny model; fast enough for the
// ASan build). The comparison with PyTorch autograd is tests/twins/train_reference.py.
#include "catch_compat.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "train/checkpoint.hpp"
#include "train/gradcheck.hpp"
#include "train/numbers.hpp"
#include "train/safetensors.hpp"

namespace fs = std::filesystem;
using namespace ts::train;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "ts_train_XXXXXX").string();
    REQUIRE(mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

ModelConfig small_config() {
  ModelConfig c = tiny_config();
  c.src_vocab = source_vocab().size();
  c.tgt_vocab = target_vocab().size();
  return c;
}

}  // namespace

TEST_CASE("train: numbers become words", "[train]") {
  CHECK(number_to_words(2048) == "two thousand forty eight");
  CHECK(number_to_words(907) == "nine hundred seven");
  CHECK(number_to_words(15) == "fifteen");
  CHECK(number_to_words(0) == "zero");
  CHECK(number_to_words(10) == "ten");
  CHECK(number_to_words(1000) == "one thousand");
  CHECK(number_to_words(9999) == "nine thousand nine hundred ninety nine");
  CHECK(number_to_words(7310) == "seven thousand three hundred ten");
  CHECK_THROWS(number_to_words(10000));
  CHECK(target_vocab().vocab_size == 31);  // pad + 30 words
  CHECK(source_vocab().start() == 11);
  CHECK(encode_source(42) == std::vector<int64_t>{11, 5, 3, 12});
  // every target word is in the vocabulary, decode inverts encode
  for (int64_t n : {0, 13, 90, 101, 4004, 9999}) {
    const auto ids = encode_target(n);
    CHECK(target_vocab().decode(std::vector<int64_t>(ids.begin() + 1, ids.end() - 1)) == number_to_words(n));
  }
  const Split& s = number_split();
  CHECK(s.held_out.size() == 500);
  CHECK(s.train.size() == 9500);
}

TEST_CASE("train: a padded batch and create_mask", "[train]") {
  const Batch b = make_batch({7, 2048});
  REQUIRE(b.S == 6);
  REQUIRE(b.T == 5);  // <start> two thousand forty eight
  CHECK(b.inputs[0 * 6 + 3] == kPad);  // "7" is [start, 7, end, pad, pad, pad]
  const auto m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T);
  CHECK(m.enc[3] == 1.0f);              // row 0 hides its padded source position 3
  CHECK(m.dec_self[0 * 5 + 1] == 1.0f);  // the look-ahead: query 0 does not see key 1
  CHECK(m.dec_self[(1 * 5 + 4) * 5 + 4] == 0.0f);
  CHECK(m.dec_self[(0 * 5 + 4) * 5 + 2] == 1.0f);  // "7": tar_inp = <start> seven <pad>...
}

TEST_CASE("train: every gradient matches finite differences (ch10's float modules, tiny model)", "[train]") {
  for (bool pre_ln : {true, false}) {
    ModelConfig c = small_config();
    c.pre_ln = pre_ln;
    c.label_smoothing = pre_ln ? 0.0 : 0.1;
    for (const auto& r : check_grads_fd(c, 1, {7, 42, 905, 2048})) {
      INFO(r.name << " maxdiff " << r.maxdiff << " maxgrad " << r.maxgrad << (pre_ln ? " pre-LN" : " post-LN"));
      CHECK(r.ok);
    }
  }
}

TEST_CASE("train: safetensors round trip, truncation, symlinks", "[train]") {
  TempDir d;
  const std::string p = (d.path / "t.safetensors").string();
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f};
  const std::vector<int64_t> ids = {7, 8, 9};
  save_safetensors(p, {{"a", st_f32(a.data(), {2, 3})}, {"ids", st_i64(ids.data(), {3})}}, {{"step", "12"}});
  StMeta meta;
  const StFile f = load_safetensors(p, &meta);
  CHECK(meta.at("step") == "12");
  REQUIRE(f.at("a").shape == std::vector<int64_t>{2, 3});
  CHECK(std::memcmp(f.at("a").data.data(), a.data(), 24) == 0);
  CHECK(std::memcmp(f.at("ids").data.data(), ids.data(), 24) == 0);
  // no temporary file is left behind
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(d.path)) files += e.is_regular_file();
  CHECK(files == 1);
  // truncated: the last bytes are missing
  const auto size = fs::file_size(p);
  fs::resize_file(p, size - 4);
  CHECK_THROWS_AS(load_safetensors(p, nullptr), FileError);
  fs::resize_file(p, 5);
  CHECK_THROWS_AS(load_safetensors(p, nullptr), FileError);
  CHECK_THROWS_AS(load_safetensors((d.path / "missing").string(), nullptr), FileError);
  // a symlink target is refused
  const fs::path link = d.path / "link.safetensors";
  fs::create_symlink(p, link);
  CHECK_THROWS_AS(save_safetensors(link.string(), {}, {}), FileError);
  // an unwritable folder
  CHECK_THROWS_AS(save_safetensors("/proc/no/such/dir/x.safetensors", {}, {}), FileError);
}

TEST_CASE("train: a checkpoint key holding several module parameters (GPT-2's c_attn) round trips", "[train]") {
  // a module of three parameters; the file's "qk" holds q then k (rows one after another), "b" holds b
  ts::Tensor q = ts::zeros({2, 3}), k = ts::zeros({1, 3}), b = ts::zeros({3});
  for (size_t i = 0; i < 6; ++i) q.data()[i] = float(i + 1);
  for (size_t i = 0; i < 3; ++i) k.data()[i] = float(10 + i), b.data()[i] = float(-1 - int(i));
  const ts::NamedTensors named = {{"q.weight", &q}, {"k.weight", &k}, {"b", &b}};
  const std::vector<CheckpointKey> keys = {{"qk", {3, 3}, {0, 1}}, {"b", {3}, {2}}};
  Adam adam;
  ts::Tensor gq = ts::zeros({2, 3}), gk = ts::zeros({1, 3}), gb = ts::zeros({3});
  for (size_t i = 0; i < 6; ++i) gq.data()[i] = 0.1f * float(i + 1);
  gk.fill(0.5f), gb.fill(-0.25f);
  adam.update(named, {{"q.weight", &gq}, {"k.weight", &gk}, {"b", &gb}});  // moments in named order
  const std::vector<float> q1(q.begin(), q.end()), k1(k.begin(), k.end()), b1(b.begin(), b.end());
  const CheckpointFiles f = checkpoint_files(named, keys, adam);
  // the file's qk: q's 6 values, then k's 3; its moments the same way
  const std::vector<unsigned char>& bytes = f.weights.at("qk").data;
  std::vector<float> qk(9);
  std::memcpy(qk.data(), bytes.data(), bytes.size());
  CHECK(std::vector<float>(qk.begin(), qk.begin() + 6) == q1);
  CHECK(std::vector<float>(qk.begin() + 6, qk.end()) == k1);
  CHECK(f.optim.count("qk.exp_avg_sq") == 1);
  CHECK(f.weights.count("q.weight") == 0);
  // back into a module whose values and moments are elsewhere
  q.fill(0.0f), k.fill(0.0f), b.fill(0.0f);
  Adam back;
  load_checkpoint_tensors(f, "dir", 1, named, keys, back);
  CHECK(std::vector<float>(q.begin(), q.end()) == q1);
  CHECK(std::vector<float>(k.begin(), k.end()) == k1);
  CHECK(std::vector<float>(b.begin(), b.end()) == b1);
  CHECK(back.step == 1);
  CHECK(back.exp_avg == adam.exp_avg);
  CHECK(back.exp_avg_sq == adam.exp_avg_sq);
  // a key whose shape is not its parameters' size, or a parameter no key holds: the table is wrong
  CHECK_THROWS_AS(checkpoint_files(named, {{"qk", {2, 3}, {0, 1}}, {"b", {3}, {2}}}, adam), std::logic_error);
  CHECK_THROWS_AS(checkpoint_files(named, {{"qk", {3, 3}, {0, 1}}}, adam), std::logic_error);
  // keys_of: one key per parameter, under its own name
  const std::vector<CheckpointKey> own = keys_of(named);
  REQUIRE(own.size() == 3);
  CHECK(own[0].key == "q.weight");
  CHECK(own[0].shape == std::vector<int64_t>{2, 3});
}

TEST_CASE("train: checkpoints round trip and refuse another model's shapes", "[train]") {
  TempDir d;
  ModelConfig c = small_config();
  Model<float> m = init_model(c, 2);
  Adam adam;
  std::vector<float> g(m.params.size(), 0.01f);
  adam.update(m.params.data(), g.data(), g.size());
  save_checkpoint(d.path.string(), m, adam);
  Model<float> back = init_model(c, 9);
  Adam adam2;
  load_checkpoint(d.path.string(), back, adam2);
  CHECK(back.params == m.params);
  CHECK(adam2.step == 1);
  CHECK(adam2.exp_avg_sq == adam.exp_avg_sq);
  // wrong shapes: a wider model
  ModelConfig wide = c;
  wide.d_model = 16;
  Model<float> other = init_model(wide, 2);
  CHECK_THROWS_AS(load_checkpoint(d.path.string(), other, adam2), FileError);
  // wrong keys: more layers
  ModelConfig deep = c;
  deep.layers = 2;
  Model<float> deeper = init_model(deep, 2);
  CHECK_THROWS_AS(load_checkpoint(d.path.string(), deeper, adam2), FileError);
  CHECK_THROWS_AS(load_checkpoint((d.path / "nope").string(), back, adam2), FileError);
}

TEST_CASE("train: the safetensors reader is strict (duplicate keys, fractions, gaps, NaN)", "[train]") {
  // an 8-byte length, the header, the data
  const auto file = [](const std::string& header, const std::string& data) {
    std::string b(8, '\0');
    for (int i = 0; i < 8; ++i) b[size_t(i)] = static_cast<char>(header.size() >> (8 * i));
    return b + header + data;
  };
  const auto parse = [](const std::string& b) {
    return parse_safetensors(reinterpret_cast<const unsigned char*>(b.data()), b.size(), "t.safetensors", nullptr);
  };
  const std::string one(4, '\0');  // 0.0f
  CHECK(parse(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", one)).at("a").data.size() == 4);
  CHECK_THROWS_WITH(parse(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", one)),
                    Catch::Contains("twice"));
  CHECK_THROWS_WITH(parse(file(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", one)),
                    Catch::Contains("integer"));
  CHECK_THROWS_WITH(parse(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", one + one)),
                    Catch::Contains("follow the last tensor"));
  CHECK_THROWS_WITH(parse(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", one + one)),
                    Catch::Contains("gap"));
  const float nan = std::nanf("");
  std::string nan_bytes(4, '\0');
  std::memcpy(nan_bytes.data(), &nan, 4);
  CHECK_THROWS_WITH(parse(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", nan_bytes)),
                    Catch::Contains("tensor a holds NaN"));
}

TEST_CASE("train: a checkpoint loads only into the model it was saved from (norm, sizes)", "[train]") {
  TempDir d;
  ModelConfig c = small_config();
  c.pre_ln = false;
  Model<float> m = init_model(c, 2);
  Adam adam;
  save_checkpoint((d.path / "ck").string(), m, adam);
  // its settings: post-LN, read back from the metadata
  CHECK_FALSE(checkpoint_settings((d.path / "ck").string(), small_config()).pre_ln);
  Model<float> pre = init_model(small_config(), 2);
  CHECK_THROWS_WITH(load_checkpoint((d.path / "ck").string(), pre, adam), Catch::Contains("--post-ln"));
  // only the checkpoint is left in the folder: no temporary folder beside it
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(d.path)) entries += e.path().filename() != "ck";
  CHECK(entries == 0);
}
