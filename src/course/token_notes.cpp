// token_notes.cpp: see token_notes.hpp.
#include "course/token_notes.hpp"

#include <vector>

#include "course/i18n.hpp"
#include "course/layout.hpp"

namespace ts {

WordPieceTable word_piece_table(const WordPieceTokenizer& tokenizer, const std::string& text) {
  const auto row = [](const std::string& word, const std::string& joined, const std::string& ids) {
    return "  " + pad_right(word, 16) + " " + pad_right(joined, 34) + " " + ids + "\n";
  };
  WordPieceTable table;
  table.text = row(_("word"), _("pieces"), _("ids"));
  for (const std::string& word : tokenizer.basic_tokenize(text)) {
    const std::vector<std::string> wp = tokenizer.wordpiece(word);
    std::string joined, ids;
    for (const std::string& p : wp) {
      joined += (joined.empty() ? "" : " ") + p;
      ids += (ids.empty() ? "" : " ") + std::to_string(tokenizer.token_to_id(p));
    }
    table.any_split = table.any_split || wp.size() > 1;
    table.text += row(word, joined, ids);
  }
  return table;
}

std::string py_repr(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\' || c == q) out += '\\';
    out += c;
  }
  return out + q;
}

std::string py_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + py_repr(items[i]);
  return s + "]";
}

std::string py_list(const std::vector<int64_t>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + std::to_string(items[i]);
  return s + "]";
}

}  // namespace ts
