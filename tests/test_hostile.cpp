// test_hostile.cpp: the core pieces behind the hostile-input promise (issue 14): atomic,
// symlink-safe .npy writes; --dump directories that hold one run; the vocabulary checks;
// Python's int() and str.split(). (tests/cli_test.py runs the chapters against the same.)
#include <sys/stat.h>
#include <unistd.h>

#include "catch_compat.hpp"
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "course/errors.hpp"
#include "course/dump_dir.hpp"
#include "exact/npy.hpp"
#include "exact/rng.hpp"
#include "text/tokenizer.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/ts_hostile_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

const char kTinyVocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n";

}  // namespace

TEST_CASE("save_npy replaces a symlink at the target, never writes through it", "[npy][hostile]") {
  TempDir d;
  const fs::path victim = d.path / "victim.txt", target = d.path / "x.npy";
  { std::ofstream(victim) << "precious\n"; }
  fs::create_symlink(victim, target);
  ts::Tensor t = ts::Tensor::from_shape({2, 3});
  std::fill(t.begin(), t.end(), 1.5f);
  ts::save_npy(target.string(), t);
  CHECK(slurp(victim) == "precious\n");
  CHECK(!fs::is_symlink(target));
  CHECK(fs::file_size(target) == 128 + 6 * 4);  // 128-byte header, then 6 float32
  CHECK(names_in(d.path) == std::vector<std::string>{"victim.txt", "x.npy"});  // no temporary file left
}

TEST_CASE("save_npy into a directory that is gone is a WriteError, naming the file", "[npy][hostile]") {
  ts::Tensor t = ts::Tensor::from_shape({1});
  CHECK_THROWS_AS(ts::save_npy("/nonexistent_dir_ts/a.npy", t), ts::WriteError);
  CHECK_THROWS_WITH(ts::save_npy("/nonexistent_dir_ts/a.npy", t), Catch::Contains("/nonexistent_dir_ts/a.npy"));
}

TEST_CASE("a --dump directory holds one run: the next run replaces it, strangers stop it", "[npy][hostile]") {
  TempDir d;
  const fs::path dir = d.path / "out";
  ts::Tensor t = ts::Tensor::from_shape({4});
  {
    ts::DumpDir first(dir.string(), "ch02", "ch02 --dump out");
    ts::save_npy(first.add("01_a.npy"), t);
    ts::save_npy(first.add("02_b.npy"), t);
  }
  CHECK(names_in(dir) == std::vector<std::string>{"01_a.npy", "02_b.npy", ts::DumpDir::kManifest});
  {
    ts::DumpDir second(dir.string(), "ch03", "ch03 --dump out");  // removes ch02's files
    CHECK(names_in(dir) == std::vector<std::string>{ts::DumpDir::kManifest});
    ts::save_npy(second.add("01_c.npy"), t);
  }
  CHECK(slurp(dir / ts::DumpDir::kManifest).find("chapter ch03\n") != std::string::npos);
  { std::ofstream(dir / "notes.txt") << "mine"; }
  CHECK_THROWS_AS(ts::DumpDir(dir.string(), "ch02", "ch02"), ts::UsageError);
  CHECK(slurp(dir / "notes.txt") == "mine");
  // a manifest that names a path outside the directory is not ours
  const fs::path odd = d.path / "odd";
  fs::create_directories(odd);
  { std::ofstream(odd / ts::DumpDir::kManifest) << "transformer-steps --dump manifest 1\nfile ../victim\n"; }
  CHECK_THROWS_WITH(ts::DumpDir(odd.string(), "ch02", "ch02"), Catch::Contains("not a manifest"));
  // a file where the directory should be
  { std::ofstream(d.path / "plain") << "x"; }
  CHECK_THROWS_WITH(ts::DumpDir((d.path / "plain").string(), "ch02", "ch02"), Catch::Contains("not a directory"));
}

TEST_CASE("vocabulary: only a regular file, each piece once, UTF-8, bounded", "[tokenizer][hostile]") {
  TempDir d;
  const fs::path fifo = d.path / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(ts::WordPieceTokenizer(fifo.string()), Catch::Contains("FIFO"));  // and returns at once
  CHECK_THROWS_WITH(ts::WordPieceTokenizer(d.path.string()), Catch::Contains("a directory"));
  CHECK_THROWS_WITH(ts::WordPieceTokenizer("/dev/zero"), Catch::Contains("character device"));
  CHECK_THROWS_WITH(ts::WordPieceTokenizer::from_string(std::string(kTinyVocab) + "un\n"),
                    Catch::Contains("line 8 repeats line 5 ('un')"));
  CHECK_THROWS_WITH(ts::WordPieceTokenizer::from_string(std::string(kTinyVocab) + "caf\xe9\n"),
                    Catch::Contains("line 8: invalid UTF-8 at byte 3"));
  CHECK_THROWS_WITH(ts::WordPieceTokenizer::from_string(std::string(ts::WordPieceTokenizer::kMaxVocabBytes + 1, 'a')),
                    Catch::Contains("more than"));
  CHECK(ts::WordPieceTokenizer::from_string(kTinyVocab).tokenize("unaffable") ==
        std::vector<std::string>{"un", "##aff", "##able"});
}

TEST_CASE("python_split splits where str.split() does", "[tokenizer][hostile]") {
  using V = std::vector<std::string>;
  // ASCII whitespace, the information separators U+001C..U+001F, NEL, NBSP, ideographic space,
  // line separator: all split in Python; U+200B (zero-width space) and U+FEFF do not
  CHECK(ts::python_split(" a\tb\nc\x0b" "d\x0c" "e\r f ") == V{"a", "b", "c", "d", "e", "f"});
  CHECK(ts::python_split("a\x1c" "b\x1d" "c\x1e" "d\x1f" "e") == V{"a", "b", "c", "d", "e"});
  CHECK(ts::python_split("comment\u3000et\u00a0es-vous\u2028?\u0085!") == V{"comment", "et", "es-vous", "?", "!"});
  CHECK(ts::python_split("a\u200bb\ufeffc") == V{"a\u200bb\ufeffc"});
  CHECK(ts::python_split("   ").empty());
  CHECK(ts::utf8_error("caf\xc3\xa9").empty());
  CHECK(ts::utf8_error("caf\xe9").find("byte 3") != std::string::npos);
}

TEST_CASE("parse_py_int reads integers as Python's int() does, decimal only", "[rng][hostile]") {
  auto value = [](const std::string& s) {
    const ts::PyInt v = ts::parse_py_int(s);
    REQUIRE(v.ok);
    REQUIRE(!v.too_big);
    return v.negative ? -static_cast<int64_t>(v.magnitude) : static_cast<int64_t>(v.magnitude);
  };
  CHECK(value("010") == 10);
  CHECK(value(" +1_000 ") == 1000);
  CHECK(value("-7") == -7);
  for (const char* bad : {"", " ", "0x10", "1e3", "1.5", "1__0", "_1", "1_", "--1", "0o10", "٣"})
    CHECK_FALSE(ts::parse_py_int(bad).ok);
  const ts::PyInt huge = ts::parse_py_int("99999999999999999999");
  CHECK(huge.ok);
  CHECK(huge.too_big);
}
