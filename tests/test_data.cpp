// test_data.cpp: src/data/'s readers on files built here: GNU .mo catalogs (msgfmt's, both byte
// orders, and tests/mo_writer.hpp's), every truncation, a wrong byte order, random bytes; fortune
// records; the pair rules and the split; the BLEU tokenizer. BLEU's scores are checked live
// against NLTK and torchtext by tests/twins/bleu_reference.py (ctest bleu_twin*).
#include "catch_compat.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "data/bleu.hpp"
#include "data/fortunes.hpp"
#include "data/mo.hpp"
#include "data/pairs.hpp"
#include "mo_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ts::data;

ts::data::MoCatalog parse(const std::string& b, const std::string& name = "t.mo") {
  return parse_mo(reinterpret_cast<const uint8_t*>(b.data()), b.size(), name);
}

// parse must refuse b with one FileError naming the file; returns its message
std::string refusal(const std::string& b) {
  try {
    parse(b, "bad.mo");
  } catch (const ts::FileError& e) {
    const std::string m = e.what();
    CHECK(m.rfind("bad.mo: not a valid GNU .mo catalog: ", 0) == 0);
    CHECK(m.find('\n') == std::string::npos);
    return m;
  }
  FAIL("parse_mo accepted a bad file");
  return {};
}

const std::vector<std::pair<std::string, std::string>> kEntries = {
    {"", "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n"},
    {"Premature end of regular expression", "Fin prématurée d'une expression régulière"},
    {std::string("menu\4Open"), "Ouvrir"},
    {std::string("%d file\0%d files", 16), std::string("%d fichier\0%d fichiers", 22)},
};

}  // namespace

TEST_CASE("mo: both byte orders, contexts, plurals, the header apart", "[data]") {
  for (bool big : {false, true}) {
    const MoCatalog c = parse(ts::test::mo_bytes(kEntries, big));
    CHECK(c.big_endian == big);
    CHECK(c.charset() == "UTF-8");
    REQUIRE(c.entries.size() == 3);
    CHECK(c.entries[0].msgid == "Premature end of regular expression");
    CHECK(c.entries[0].msgstr == std::vector<std::string>{"Fin prématurée d'une expression régulière"});
    CHECK(c.entries[1].context == "menu");
    CHECK(c.entries[1].msgid == "Open");
    CHECK(c.entries[2].msgid == "%d file");
    CHECK(c.entries[2].msgid_plural == "%d files");
    CHECK(c.entries[2].msgstr == std::vector<std::string>{"%d fichier", "%d fichiers"});
  }
}

TEST_CASE("mo: msgfmt's own files, little- and big-endian, read alike", "[data]") {
  if (std::system("msgfmt --version >/dev/null 2>&1") != 0) {
    WARN("msgfmt not found (package gettext): skipped");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("ts_test_data_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "t.po") << "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
                                 "\"Plural-Forms: nplurals=2; plural=(n > 1);\\n\"\n\n"
                                 "msgctxt \"verb\"\nmsgid \"Open the file now please\"\nmsgstr \"Ouvrez le fichier maintenant\"\n\n"
                                 "msgid \"one apple\"\nmsgid_plural \"many apples\"\nmsgstr[0] \"une pomme\"\nmsgstr[1] \"des pommes\"\n\n"
                                 "msgid \"Premature end of regular expression\"\nmsgstr \"Fin prématurée d'une expression régulière\"\n";
  std::vector<MoCatalog> cats;
  for (const char* order : {"little", "big"}) {
    const fs::path mo = dir / (std::string(order) + ".mo");
    const std::string cmd = "msgfmt --endianness=" + std::string(order) + " -o " + mo.string() + " " + (dir / "t.po").string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    cats.push_back(read_mo(mo.string()));
  }
  fs::remove_all(dir);
  CHECK(!cats[0].big_endian);
  CHECK(cats[1].big_endian);
  for (const MoCatalog& c : cats) {
    REQUIRE(c.entries.size() == 3);  // msgfmt sorts by the original: the context entry ("verb\4...") last
    bool ctx = false, plural = false;
    for (const MoEntry& e : c.entries) {
      if (e.context == "verb") ctx = e.msgid == "Open the file now please" && e.msgstr[0] == "Ouvrez le fichier maintenant";
      if (!e.msgid_plural.empty())
        plural = e.msgid == "one apple" && e.msgid_plural == "many apples" &&
                 e.msgstr == std::vector<std::string>{"une pomme", "des pommes"};
    }
    CHECK(ctx);
    CHECK(plural);
    CHECK(c.charset() == "UTF-8");
  }
  const PairSet set = extract_pairs(cats);
  CHECK(set.sources[0].kept == 2);  // the plural refused; the context entry kept
  CHECK(set.sources[1].kept == 0);  // the same pairs again: duplicates
}

TEST_CASE("mo: every truncation, a wrong byte order, a missing NUL, random bytes", "[data]") {
  const std::string good = ts::test::mo_bytes(kEntries, false);
  for (size_t n = 0; n < good.size(); ++n) refusal(good.substr(0, n));
  CHECK(refusal("").find("fewer than the 28") != std::string::npos);
  CHECK(refusal(std::string(40, 'x')).find("magic number") != std::string::npos);
  // the magic swapped alone: the offsets read in the other byte order point far past the end
  std::string swapped = good;
  std::swap(swapped[0], swapped[3]);
  std::swap(swapped[1], swapped[2]);
  CHECK(refusal(swapped).find("wrong byte order") != std::string::npos);
  std::string no_nul = good;
  no_nul[no_nul.size() - 1] = 'x';
  CHECK(refusal(no_nul).find("does not end with a NUL") != std::string::npos);
  std::string revision = good;
  revision[6] = 2;  // major revision 2
  CHECK(refusal(revision).find("major revision 2") != std::string::npos);
  // a count so large its table would end past 4 GiB: refused, nothing read
  std::string huge = good;
  huge[8] = huge[9] = huge[10] = huge[11] = char(0xff);
  CHECK(refusal(huge).find("runs past the end") != std::string::npos);
  std::mt19937_64 rng(43);
  for (int k = 0; k < 2000; ++k) {
    std::string b = k % 2 ? good : std::string(28 + rng() % 200, '\0');
    for (size_t i = k % 2 ? 8 + rng() % 20 : 0; i < b.size(); i += 1 + rng() % 9) b[i] = char(rng());
    if (k % 4 == 0) b.replace(0, 4, "\xde\x12\x04\x95", 4);
    try {
      parse(b);
    } catch (const ts::FileError& e) {
      CHECK(std::string(e.what()).rfind("t.mo: ", 0) == 0);
    }
  }
}

TEST_CASE("mo: files that are missing or not files", "[data]") {
  CHECK_THROWS_WITH(read_mo("/nonexistent/x.mo"), Catch::Contains("/nonexistent/x.mo: cannot open"));
  CHECK_THROWS_WITH(read_mo("/tmp"), Catch::Contains("/tmp: not a regular file"));
}

TEST_CASE("fortunes: records between lines holding only %", "[data]") {
  const auto r = parse_fortunes("A\n%\nB b\n% not a delimiter\n%\n%\n  \n%\nlast", "f");
  REQUIRE(r.size() == 3);
  CHECK(r[0].offset == 0);
  CHECK(r[0].text == "A\n");
  CHECK(r[1].offset == 4);
  CHECK(r[1].text == "B b\n% not a delimiter\n");
  CHECK(r[2].text == "last");
  CHECK(r[2].file == "f");
  CHECK(parse_fortunes("", "f").empty());
  CHECK(parse_fortunes("%\n%\n", "f").empty());
}

TEST_CASE("pairs: the rules, each with an example it refuses", "[data]") {
  CHECK(pair_refusal("Premature end of regular expression", "Fin prématurée d'une expression régulière").empty());
  CHECK(pair_refusal("Not translated at all here", "") == "untranslated");
  CHECK(pair_refusal("cannot open file %s for reading", "impossible d'ouvrir %s en lecture") == "placeholder");
  CHECK(pair_refusal("cannot open file %1$s for reading", "impossible d'ouvrir le fichier") == "placeholder");
  CHECK(pair_refusal("Usage: two lines\nof help text", "Utilisation : deux lignes\nd'aide") == "control");
  CHECK(pair_refusal("_Open the file in a new window", "_Ouvrir le fichier dans une fenêtre") == "marker");
  CHECK(pair_refusal("set GIT_DIR to the path here", "mettre GIT_DIR au chemin ici") == "marker");
  CHECK(pair_refusal("-a, --all do not ignore entries", "-a, --all ne pas ignorer") == "option");
  CHECK(pair_refusal("... ... ... ...", "... ... ... ...") == "letters");
  CHECK(pair_refusal("Too short", "Trop court") == "words");
  CHECK(pair_refusal(std::string(31 * 2, 'a').replace(1, 59, std::string(59, ' ')), "a b c d") == "words");
  CHECK(pair_refusal("one two three four", "one two three four") == "copied");
  CHECK(pair_refusal("one two three four", std::string("un deux trois \xff")) == "utf8");
  CHECK(pair_refusal("one two three four", std::string("un deux trois \xc3")) == "utf8");
  CHECK(pair_refusal("one two three four", std::string("un deux trois \xe0\x80\x80")) == "utf8");  // overlong
  CHECK(pair_refusal("  Leading and trailing spaces trimmed  ", "  Espaces de tête et de fin  ").empty());
}

TEST_CASE("pairs: the split follows FNV-1a 64 of the English key", "[data]") {
  // FNV-1a 64's published test vectors (Fowler, Noll, Vo)
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  CHECK(english_key("  Premature   End of X ") == "premature end of x");
  size_t per[3] = {0, 0, 0};
  for (int i = 0; i < 10000; ++i) {
    const std::string en = "sentence number " + std::to_string(i);
    const Split s = split_of(en);
    CHECK(split_of("  SENTENCE  Number " + std::to_string(i)) == s);  // same key, same split
    const uint64_t b = fnv1a64(english_key(en)) % 100;
    CHECK(s == (b < 80 ? Split::train : b < 90 ? Split::validation : Split::test));
    ++per[int(s)];
  }
  CHECK(per[0] > 7500);
  CHECK(per[1] > 700);
  CHECK(per[2] > 700);
}

TEST_CASE("bleu: the 13a-style tokenization and the edges of the score", "[data]") {
  CHECK(bleu_tokens("Hello, world. It's 3.14 or 1,000 (1-2)!") ==
        Tokens{"Hello", ",", "world", ".", "It's", "3.14", "or", "1,000", "(", "1", "-", "2", ")", "!"});
  CHECK(bleu_tokens("  a\tb\n") == Tokens{"a", "b"});
  CHECK(bleu_tokens("end 3.") == Tokens{"end", "3", "."});
  const Tokens s = bleu_tokens("the cat sat on the mat today");
  for (BleuConvention c : {BleuConvention::nltk, BleuConvention::torchtext}) {
    CHECK(corpus_bleu({s}, {{s}}, c).score == 1.0);
    CHECK(corpus_bleu({Tokens{}}, {{s}}, c).score == 0.0);
    CHECK(corpus_bleu({Tokens{"x", "y", "z", "w"}}, {{s}}, c).score == 0.0);
  }
  // a 4-gram count of zero: NLTK's tiny positive score against torchtext's 0
  const Tokens h = bleu_tokens("the cat on the sat mat today");
  CHECK(corpus_bleu({h}, {{s}}, BleuConvention::nltk).score > 0.0);
  CHECK(corpus_bleu({h}, {{s}}, BleuConvention::nltk).score < 1e-70);
  CHECK(corpus_bleu({h}, {{s}}, BleuConvention::torchtext).score == 0.0);
  CHECK_THROWS_AS(corpus_bleu({s, s}, {{s}}), std::invalid_argument);
}
