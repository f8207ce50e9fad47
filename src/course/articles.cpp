// articles.cpp: see articles.hpp.
#include "course/articles.hpp"

#include "course/i18n.hpp"

namespace ts {

namespace {

// The article's title as it is published (never translated), a description where it has none
// (translated), or "" for a number the table does not know (an edited chapter may cite one).
std::string title_of(int article) {
  switch (article) {
    case 0: return "《使用 Pytorch 一步一步实现 Transformer Encoder》";
    case 1: return _("(d2l-style notes)");
    case 2: return "《第九章：注意力和 Transformer 的逐行实现》";
    case 4: return "《GPT （一）transformer原理和代码详解》";
  }
  return "";
}

}  // namespace

std::string cite(const std::vector<Source>& sources) {
  std::string s;
  for (const Source& src : sources) {
    // TRANSLATORS: between two articles a chapter follows ("article 000 ...; article 002 ...")
    if (!s.empty()) s += _("; ");
    const std::string title = title_of(src.article);
    s += title.empty() ? trf("article {n:03} {sections}", fmt::arg("n", src.article), fmt::arg("sections", tr(src.sections)))
                       : trf("article {n:03} {title} {sections}", fmt::arg("n", src.article), fmt::arg("title", title),
                             fmt::arg("sections", tr(src.sections)));
  }
  return s;
}

}  // namespace ts
