// print.hpp: PyTorch 1.13's print(), byte for byte (introduced in ch01).
//
// What `print(t)` shows in PyTorch is what str(t) returns here: the same digits,
// the same column widths, the same "..." when a tensor has more than 1000
// elements, the same `grad_fn=<...>` suffix. The rules are written out in
// shared/reference/PRINT_SPEC.md and follow torch/_tensor_str.py:
//   1) pick the elements that are shown (all, or 3 + 3 per long dimension)
//   2) build ONE formatter from them: int_mode ("1."), fixed ("0.1235") or sci
//      ("1.2346e-05"), and one column width shared by every element
//   3) lay the strings out: rows wrapped at the line width (80), blank lines between blocks
//   4) add the suffixes: dtype=..., grad_fn=<...> or requires_grad=True
// Also here: torch.Size([...]), Python's float repr and nn.Module reprs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// The element types PyTorch prints differently (dtype suffix, int vs float formatting).
enum class DType { Float32, Float64, Int64, Int32, UInt8, Bool };

// "torch.float32", "torch.int64", ... (what `t.dtype` prints).
std::string dtype_name(DType dtype);

// Autograd facts shown after the values: grad_fn wins over requires_grad.
struct PrintMeta {
  std::string grad_fn;         // e.g. "SumBackward1" -> ", grad_fn=<SumBackward1>"
  bool requires_grad = false;  // a leaf that requires grad -> ", requires_grad=True"
  // torch.set_printoptions(threshold=...): more elements than this print summarised, the
  // first and last 3 of each dim with "..." between (PyTorch's default: 1000)
  size_t threshold = 1000;
  // torch.set_printoptions(linewidth=...): rows wrap at this many columns; 0 = print_linewidth()
  size_t linewidth = 0;
};

// PyTorch's default line width (torch/_tensor_str.py PRINT_OPTS.linewidth).
constexpr size_t kTorchLineWidth = 80;
// torch.set_printoptions(linewidth=w) for every print that names no width of its own: the
// explained mode sets min(80, terminal columns) (Chapter::run); --plain and --transcript, and
// everything else, keep PyTorch's 80.
void set_print_linewidth(size_t linewidth);
size_t print_linewidth();

// Any rank, any dtype: element i (row-major flat index) is read by get(i), and only
// for the elements that are displayed (a (30522,768) weight prints in microseconds).
// Float32 values are rounded to float first; integer dtypes must hold whole numbers.
std::string format_tensor(DType dtype, const std::vector<size_t>& shape,
                          const std::function<double(size_t)>& get, const PrintMeta& meta = {});
// Same for integer dtypes (Int64, Int32, UInt8, Bool), exact for every int64 value.
std::string format_tensor_int(DType dtype, const std::vector<size_t>& shape,
                              const std::function<int64_t(size_t)>& get, const PrintMeta& meta = {});

std::string str(const Tensor& t, const PrintMeta& meta = {});   // float32
std::string str(const ITensor& t, const PrintMeta& meta = {});  // int64
std::string str(const BTensor& t, const PrintMeta& meta = {});  // bool
// An nn.Parameter: "Parameter containing:\n" + str(t) with requires_grad=True.
std::string parameter_str(const Tensor& t);

// "torch.Size([1, 5, 768])", "torch.Size([])".
std::string size_str(const std::vector<size_t>& shape);
// Python's repr of a float: shortest round trip ("0.1", "1e-05", "768.0", "inf").
std::string py_float(double v);
// Python's repr of a tuple of ints: "(768,)", "(2, 0)", "()".
std::string py_tuple(const std::vector<size_t>& items);

// A print corpus (PRINT_SPEC.md section 6: a JSON array of {"dtype", "shape", "values",
// optional "requires_grad" / "grad_fn"}) -> what PyTorch prints for each case, in order.
// Throws std::runtime_error (or a JSON parse error) on malformed input.
std::vector<std::string> print_corpus(const std::string& json_text);
// "float32" -> DType::Float32 (also accepts "torch.float32"); throws on an unknown name.
DType parse_dtype(const std::string& name);

// nn.Module repr: Name(extra) when there are no children, else
// Name(\n  extra lines\n  (child): child repr indented by 2\n).
struct ModuleRepr {
  std::string name;
  std::string extra;                                         // extra_repr, may be empty or multi-line
  std::vector<std::pair<std::string, ModuleRepr>> children;  // ("q", Linear repr), ("0", ...)
  std::string str() const;  // as the PyTorch this run reproduces prints it (1.13 or 2.x, below)
  // As PyTorch 2.x prints it (torch 1.13 prints every child): in a ModuleList, a run of
  // children with equal reprs is one line "(0-11): 12 x AttentionHead(...)". The chapters'
  // default mode shows long reprs this way (--full and the twin modes print str()).
  std::string str_collapsed() const;
};
ModuleRepr linear_repr(int64_t in, int64_t out, bool bias);  // Linear(in_features=768, out_features=64, bias=True)
ModuleRepr embedding_repr(int64_t n, int64_t d, std::optional<int64_t> padding_idx = {});  // Embedding(30522, 768)
ModuleRepr layer_norm_repr(int64_t d, double eps);  // LayerNorm((768,), eps=1e-12, elementwise_affine=True)
ModuleRepr dropout_repr(double p);                   // Dropout(p=0.1, inplace=False)
ModuleRepr gelu_repr();                              // GELU(approximate='none')
ModuleRepr relu_repr();                              // ReLU()
ModuleRepr softmax_repr(int dim);                    // Softmax(dim=-1)
ModuleRepr module_list_repr(const std::vector<ModuleRepr>& items);  // ModuleList((0): ... (1): ...)

}  // namespace ts
