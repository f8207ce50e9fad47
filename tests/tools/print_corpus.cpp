// print_corpus: print every tensor of a print corpus the way PyTorch 1.13 does.
//
//   print_corpus FILE.json     (format: shared/reference/PRINT_SPEC.md, section 6)
//
// Writes a JSON array of the printed strings to stdout, one per case, in order.
// A missing file or malformed JSON: one line on stderr, exit code 2.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "exact/print.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: print_corpus FILE.json\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "print_corpus: cannot open " << argv[1] << "\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    const std::vector<std::string> printed = ts::print_corpus(text.str());
    std::cout << nlohmann::json(printed).dump() << "\n";
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::cerr << "print_corpus: " << argv[1] << ": " << msg << "\n";
    return 2;
  }
  return 0;
}
