// articles.hpp: the articles the course follows, each named once (introduced in ch01).
//
// A chapter names what it follows as (article, sections) pairs; the title line of its output
// and its --help print them as
//   article 000 《使用 Pytorch 一步一步实现 Transformer Encoder》 §Multi-head Attention; article 002 ...
// with each article's title taken from the table in articles.cpp (README.md lists the same
// articles with what each teaches).
#pragma once

#include <string>
#include <vector>

namespace ts {

struct Source {
  int article;           // 0, 1, 2 or 4: the article's number (README.md's table)
  const char* sections;  // where in it, marked N_() and translated when shown: "§9.2.1, listing 9.2"
};

// "article 000 《title》 §sections; article 002 《title》 §sections", in the current language.
std::string cite(const std::vector<Source>& sources);

}  // namespace ts
