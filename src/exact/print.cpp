// print.cpp: PyTorch 1.13's tensor printing, rule for rule (see print.hpp and
// shared/reference/PRINT_SPEC.md; the Python original is torch/_tensor_str.py).
#include "exact/print.hpp"
#include "exact/torch_version.hpp"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ts {
namespace {

// PyTorch's default print options.
constexpr size_t kEdgeItems = 3;     // ... keeping 3 items at each end of a long dimension
constexpr int kIndent = 7;  // len("tensor(")
size_t g_linewidth = kTorchLineWidth;  // torch.set_printoptions(linewidth=...)

bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }

size_t numel_of(const std::vector<size_t>& shape) {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  return n;
}

// Indices shown along one dimension of size n: all, or 0,1,2 and n-3,n-2,n-1.
std::vector<size_t> shown_indices(size_t n, bool summarize) {
  std::vector<size_t> idx;
  if (summarize && n > 2 * kEdgeItems) {
    for (size_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    for (size_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (size_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

// Row-major flat indices of the displayed elements, in print order (get_summarized_data).
void collect_shown(const std::vector<size_t>& shape, const std::vector<size_t>& strides, size_t dim,
                   size_t base, bool summarize, std::vector<size_t>& out) {
  if (dim == shape.size()) {
    out.push_back(base);
    return;
  }
  for (size_t i : shown_indices(shape[dim], summarize))
    collect_shown(shape, strides, dim + 1, base + i * strides[dim], summarize, out);
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// printf with one double; glibc rounds the exact binary value half-to-even like Python.
std::string c_format(const char* fmt, double v) {
  char buf[400];  // "%.0f" of DBL_MAX is 309 digits
  int n = std::snprintf(buf, sizeof buf, fmt, v);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

// Python prints nan (never "-nan"), inf, -inf.
std::string non_finite(double v) {
  if (std::isnan(v)) return "nan";
  return v < 0 ? "-inf" : "inf";
}

// One formatter per tensor (_Formatter): the mode and width shared by all elements.
struct FloatFormatter {
  bool int_mode = true;
  bool sci_mode = false;
  size_t max_width = 1;
};

// vals: displayed values -> the mode and column width (zeros, inf, nan never count).
FloatFormatter make_float_formatter(const std::vector<double>& vals) {
  FloatFormatter f;
  std::vector<double> nz;  // nonzero finite values
  for (double v : vals)
    if (std::isfinite(v) && v != 0.0) nz.push_back(v);
  if (nz.empty()) return f;  // tensor([0., -inf]): int mode, width 1

  double mn = std::numeric_limits<double>::infinity(), mx = 0.0;
  for (double v : nz) {
    mn = std::min(mn, std::fabs(v));
    mx = std::max(mx, std::fabs(v));
    if (v != std::ceil(v)) f.int_mode = false;
  }
  if (f.int_mode) {
    f.sci_mode = mx / mn > 1000.0 || mx > 1.0e8;
    for (double v : nz)
      f.max_width = std::max(f.max_width, f.sci_mode ? c_format("%.4e", v).size() : c_format("%.0f", v).size() + 1);
  } else {
    f.sci_mode = mx / mn > 1000.0 || mx > 1.0e8 || mn < 1.0e-4;
    for (double v : nz) f.max_width = std::max(f.max_width, c_format(f.sci_mode ? "%.4e" : "%.4f", v).size());
  }
  return f;
}

// One float element as PyTorch shows it, padded on the left to the shared width.
std::string format_float(const FloatFormatter& f, double v) {
  std::string s;
  if (!std::isfinite(v))
    s = non_finite(v);
  else if (f.sci_mode)
    s = c_format("%.4e", v);  // 1.0000e-05
  else if (f.int_mode)
    s = c_format("%.0f", v) + ".";  // 1.  -0.  10.
  else
    s = c_format("%.4f", v);  // -0.0000
  return pad_left(s, f.max_width);
}

// _tensor_str_with_formatter: nested brackets from the displayed cells (already padded).
// cells are consumed in print order through pos; indent grows by 1 per nesting level.
std::string layout(const std::vector<size_t>& shape, size_t dim, int indent, bool summarize,
                   const std::vector<std::string>& cells, size_t& pos, size_t width, int linewidth) {
  const size_t n = shape[dim];
  const bool cut = summarize && n > 2 * kEdgeItems;
  std::string out = "[";
  if (dim + 1 == shape.size()) {
    // 1) a row: items grouped per_line at a time, lines wrapped under the bracket
    const int element_length = static_cast<int>(width) + 2;
    // _vector_str: max(1, floor((linewidth - indent) / element_length))
    const int per_line = std::max(1, linewidth > indent ? (linewidth - indent) / element_length : 0);
    const size_t count = cut ? 2 * kEdgeItems + 1 : n;
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : std::string(", ");
      if (cut && i == kEdgeItems)
        out += " ...";
      else
        out += cells[pos++];
    }
  } else {
    // 2) a block: children separated by one newline per remaining dimension
    const std::string sep = "," + std::string(shape.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
    const size_t count = cut ? 2 * kEdgeItems + 1 : n;
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out += sep;
      if (cut && i == kEdgeItems)
        out += "...";
      else
        out += layout(shape, dim + 1, indent + 1, summarize, cells, pos, width, linewidth);
    }
  }
  return out + "]";
}

// _add_suffixes: each suffix goes on the last line if it fits in the line width, else on a new one.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, size_t linewidth) {
  std::string out = body;
  const size_t nl = body.rfind('\n');
  size_t last_line_len = (nl == std::string::npos ? body.size() : body.size() - nl - 1) + 2;
  for (const std::string& suffix : suffixes) {
    if (last_line_len + suffix.size() + 2 > linewidth) {
      out += ",\n" + std::string(kIndent, ' ') + suffix;
      last_line_len = kIndent + suffix.size();
    } else {
      out += ", " + suffix;
      last_line_len += suffix.size() + 2;
    }
  }
  return out + ")";
}

std::vector<std::string> grad_suffixes(const PrintMeta& meta) {
  if (!meta.grad_fn.empty()) return {"grad_fn=<" + meta.grad_fn + ">"};
  if (meta.requires_grad) return {"requires_grad=True"};
  return {};
}

// "tensor(" + body + suffixes + ")": the part shared by every dtype.
// cells: the displayed elements in print order, each padded to width.
std::string assemble(DType dtype, const std::vector<size_t>& shape, bool summarize,
                     const std::vector<std::string>& cells, size_t width, const PrintMeta& meta) {
  const size_t linewidth = meta.linewidth ? meta.linewidth : g_linewidth;
  std::string body = "tensor(";
  if (shape.empty()) {
    body += cells.at(0);  // 0-d: the bare value
  } else {
    size_t pos = 0;
    body += layout(shape, 0, kIndent, summarize, cells, pos, width, static_cast<int>(std::min<size_t>(linewidth, 1u << 20)));
  }
  std::vector<std::string> suffixes;
  if (dtype != DType::Float32 && dtype != DType::Int64 && dtype != DType::Bool)
    suffixes.push_back("dtype=" + dtype_name(dtype));
  for (auto& s : grad_suffixes(meta)) suffixes.push_back(s);
  return add_suffixes(body, suffixes, linewidth);
}

// An empty tensor: tensor([]), plus size=(2, 0) unless 1-d, plus dtype unless float32.
std::string format_empty(DType dtype, const std::vector<size_t>& shape, const PrintMeta& meta) {
  std::vector<std::string> suffixes;
  if (shape.size() != 1) suffixes.push_back("size=" + py_tuple(shape));
  if (dtype != DType::Float32) suffixes.push_back("dtype=" + dtype_name(dtype));
  for (auto& s : grad_suffixes(meta)) suffixes.push_back(s);
  return add_suffixes("tensor([]", suffixes, meta.linewidth ? meta.linewidth : g_linewidth);
}

// The displayed flat indices and whether the tensor is summarized.
std::vector<size_t> displayed(const std::vector<size_t>& shape, size_t threshold, bool& summarize) {
  summarize = numel_of(shape) > threshold;
  std::vector<size_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  std::vector<size_t> flat;
  collect_shown(shape, strides, 0, 0, summarize, flat);
  return flat;
}

// double -> float as the hardware rounds it (round to nearest even, overflow to inf),
// written out so that no out-of-range conversion is ever executed.
double round_to_float(double v) {
  if (!std::isfinite(v)) return v;
  const double limit = static_cast<double>(FLT_MAX) + std::ldexp(1.0, 103);  // FLT_MAX + half an ulp
  if (std::fabs(v) >= limit) return std::copysign(std::numeric_limits<double>::infinity(), v);
  if (std::fabs(v) > FLT_MAX) return std::copysign(static_cast<double>(FLT_MAX), v);
  return static_cast<double>(static_cast<float>(v));
}

int64_t double_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

void set_print_linewidth(size_t linewidth) { g_linewidth = linewidth ? linewidth : kTorchLineWidth; }
size_t print_linewidth() { return g_linewidth; }

std::string dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "torch.float32";
    case DType::Float64: return "torch.float64";
    case DType::Int64: return "torch.int64";
    case DType::Int32: return "torch.int32";
    case DType::UInt8: return "torch.uint8";
    case DType::Bool: return "torch.bool";
  }
  return "torch.unknown";
}

// shape, get(i) -> the string print(t) shows
std::string format_tensor(DType dtype, const std::vector<size_t>& shape, const std::function<double(size_t)>& get,
                          const PrintMeta& meta) {
  if (!is_floating(dtype)) {
    if (dtype == DType::Bool) return format_tensor_int(dtype, shape, [&](size_t i) -> int64_t { return get(i) != 0.0; }, meta);
    return format_tensor_int(dtype, shape, [&](size_t i) { return double_to_int64(get(i)); }, meta);
  }
  if (numel_of(shape) == 0) return format_empty(dtype, shape, meta);
  // 1) the displayed elements  2) one formatter from them  3) cells  4) layout + suffixes
  bool summarize = false;
  const std::vector<size_t> flat = displayed(shape, meta.threshold, summarize);
  std::vector<double> vals(flat.size());
  for (size_t k = 0; k < flat.size(); ++k) {
    const double v = get(flat[k]);
    vals[k] = dtype == DType::Float32 ? round_to_float(v) : v;
  }
  const FloatFormatter f = make_float_formatter(vals);
  std::vector<std::string> cells(vals.size());
  for (size_t k = 0; k < vals.size(); ++k) cells[k] = format_float(f, vals[k]);
  return assemble(dtype, shape, summarize, cells, f.max_width, meta);
}

// shape, get(i) (integer dtypes) -> the string print(t) shows
std::string format_tensor_int(DType dtype, const std::vector<size_t>& shape, const std::function<int64_t(size_t)>& get,
                              const PrintMeta& meta) {
  if (is_floating(dtype))
    return format_tensor(dtype, shape, [&](size_t i) { return static_cast<double>(get(i)); }, meta);
  if (numel_of(shape) == 0) return format_empty(dtype, shape, meta);
  bool summarize = false;
  const std::vector<size_t> flat = displayed(shape, meta.threshold, summarize);
  std::vector<std::string> cells(flat.size());
  size_t width = 1;
  for (size_t k = 0; k < flat.size(); ++k) {
    const int64_t v = get(flat[k]);
    cells[k] = dtype == DType::Bool ? (v != 0 ? "True" : "False") : std::to_string(v);
    width = std::max(width, cells[k].size());
  }
  for (auto& c : cells) c = pad_left(c, width);
  return assemble(dtype, shape, summarize, cells, width, meta);
}

std::string str(const Tensor& t, const PrintMeta& meta) {
  const float* data = t.data();
  return format_tensor(DType::Float32, shape_of(t), [data](size_t i) { return static_cast<double>(data[i]); }, meta);
}

std::string str(const ITensor& t, const PrintMeta& meta) {
  const int64_t* data = t.data();
  return format_tensor_int(DType::Int64, shape_of(t), [data](size_t i) { return data[i]; }, meta);
}

std::string str(const BTensor& t, const PrintMeta& meta) {
  const bool* data = t.data();
  return format_tensor_int(DType::Bool, shape_of(t), [data](size_t i) -> int64_t { return data[i] ? 1 : 0; }, meta);
}

std::string parameter_str(const Tensor& t) {
  PrintMeta meta;
  meta.requires_grad = true;
  return "Parameter containing:\n" + str(t, meta);
}

std::string size_str(const std::vector<size_t>& shape) {
  std::string s = "torch.Size([";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "])";
}

std::string py_tuple(const std::vector<size_t>& items) {
  std::string s = "(";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + std::to_string(items[i]);
  return s + (items.size() == 1 ? ",)" : ")");
}

// Python's float_repr_style 'short': the shortest digits that round-trip, written
// fixed when -4 < decpt <= 16 (0.0001, 768.0, 1000000000000000.0), else 1e-05, 1e+16.
std::string py_float(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);  // "-1.2345e-05"
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exp10 = std::stoi(sci.substr(e + 1));
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  const int nd = static_cast<int>(digits.size());
  const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  std::string out;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0)
      out = "0." + std::string(-decpt, '0') + digits;
    else if (decpt >= nd)
      out = digits + std::string(decpt - nd, '0') + ".0";
    else
      out = digits.substr(0, decpt) + "." + digits.substr(decpt);
  } else {
    out = digits.substr(0, 1);
    if (nd > 1) out += "." + digits.substr(1);
    const int ae = std::abs(exp10);
    out += std::string("e") + (exp10 < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + std::to_string(ae);
  }
  return sign + out;
}

DType parse_dtype(const std::string& name) {
  const std::string n = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  if (n == "float32" || n == "float") return DType::Float32;
  if (n == "float64" || n == "double") return DType::Float64;
  if (n == "int64" || n == "long") return DType::Int64;
  if (n == "int32" || n == "int") return DType::Int32;
  if (n == "uint8") return DType::UInt8;
  if (n == "bool") return DType::Bool;
  throw std::runtime_error("unknown dtype '" + name + "'");
}

namespace {
// One corpus value: a JSON number or bool, or "inf" / "-inf" / "nan".
double corpus_double(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf" || s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "nan" || s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw std::runtime_error("bad value " + v.dump());
}

int64_t corpus_int(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return v.get<int64_t>();
  return double_to_int64(corpus_double(v));
}
}  // namespace

std::vector<std::string> print_corpus(const std::string& json_text) {
  const nlohmann::json cases = nlohmann::json::parse(json_text);
  if (!cases.is_array()) throw std::runtime_error("corpus must be a JSON array");
  std::vector<std::string> out;
  for (const auto& c : cases) {
    const DType dtype = parse_dtype(c.at("dtype").get<std::string>());
    const std::vector<size_t> shape = c.at("shape").get<std::vector<size_t>>();
    const nlohmann::json& values = c.at("values");
    if (!values.is_array() || values.size() != numel_of(shape))
      throw std::runtime_error("case " + c.value("id", nlohmann::json()).dump() + ": values do not match shape");
    PrintMeta meta;
    if (c.contains("grad_fn") && c["grad_fn"].is_string()) meta.grad_fn = c["grad_fn"].get<std::string>();
    if (c.contains("requires_grad") && c["requires_grad"].is_boolean()) meta.requires_grad = c["requires_grad"].get<bool>();
    if (is_floating(dtype))
      out.push_back(format_tensor(dtype, shape, [&](size_t i) { return corpus_double(values[i]); }, meta));
    else
      out.push_back(format_tensor_int(dtype, shape, [&](size_t i) { return corpus_int(values[i]); }, meta));
  }
  return out;
}

namespace {
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (;;) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(s.substr(start));
      return lines;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
}

// torch.nn.modules.module._addindent: indent every line but the first.
std::string add_indent(const std::string& s, int spaces) {
  const std::vector<std::string> lines = split_lines(s);
  if (lines.size() == 1) return s;
  std::string out = lines[0];
  for (size_t i = 1; i < lines.size(); ++i) out += "\n" + std::string(spaces, ' ') + lines[i];
  return out;
}
}  // namespace

// nn.Module.__repr__
namespace {

// nn.Module.__repr__ (torch 1.13), or torch 2.x's ModuleList.__repr__ when `collapse`.
std::string module_str(const ModuleRepr& m, bool collapse) {
  std::vector<std::string> extra_lines;
  if (!m.extra.empty()) extra_lines = split_lines(m.extra);
  std::vector<std::string> lines = extra_lines;
  if (collapse && m.name == "ModuleList" && !m.children.empty()) {
    // runs of equal reprs: "(start-end): n x repr", else "(i): repr"
    for (size_t i = 0; i < m.children.size();) {
      const std::string r = module_str(m.children[i].second, true);
      size_t j = i + 1;
      while (j < m.children.size() && module_str(m.children[j].second, true) == r) ++j;
      lines.push_back(j - i > 1 ? add_indent("(" + m.children[i].first + "-" + m.children[j - 1].first +
                                                 "): " + std::to_string(j - i) + " x " + r,
                                             2)
                                : add_indent("(" + m.children[i].first + "): " + r, 2));
      i = j;
    }
  } else {
    for (const auto& [key, child] : m.children) lines.push_back("(" + key + "): " + add_indent(module_str(child, collapse), 2));
  }
  const std::vector<std::pair<std::string, ModuleRepr>>& children = m.children;
  std::string out = m.name + "(";
  if (!lines.empty()) {
    if (extra_lines.size() == 1 && children.empty()) {
      out += extra_lines[0];
    } else {
      out += "\n  ";
      for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n  " : "") + lines[i];
      out += "\n";
    }
  }
  return out + ")";
}

}  // namespace

// torch 1.13 prints every child of a ModuleList; 2.x collapses runs of equal ones (the
// PyTorch this run reproduces, exact/torch_version.hpp, decides).
std::string ModuleRepr::str() const { return module_str(*this, torch_version() == TorchVersion::V2_6); }
std::string ModuleRepr::str_collapsed() const { return module_str(*this, true); }

ModuleRepr linear_repr(int64_t in, int64_t out, bool bias) {
  return {"Linear",
          "in_features=" + std::to_string(in) + ", out_features=" + std::to_string(out) +
              ", bias=" + (bias ? "True" : "False"),
          {}};
}

ModuleRepr embedding_repr(int64_t n, int64_t d, std::optional<int64_t> padding_idx) {
  std::string extra = std::to_string(n) + ", " + std::to_string(d);
  if (padding_idx) extra += ", padding_idx=" + std::to_string(*padding_idx);
  return {"Embedding", extra, {}};
}

ModuleRepr layer_norm_repr(int64_t d, double eps) {
  return {"LayerNorm", "(" + std::to_string(d) + ",), eps=" + py_float(eps) + ", elementwise_affine=True", {}};
}

ModuleRepr dropout_repr(double p) { return {"Dropout", "p=" + py_float(p) + ", inplace=False", {}}; }
ModuleRepr gelu_repr() { return {"GELU", "approximate='none'", {}}; }
ModuleRepr relu_repr() { return {"ReLU", "", {}}; }
ModuleRepr softmax_repr(int dim) { return {"Softmax", "dim=" + std::to_string(dim), {}}; }

ModuleRepr module_list_repr(const std::vector<ModuleRepr>& items) {
  ModuleRepr m{"ModuleList", "", {}};
  for (size_t i = 0; i < items.size(); ++i) m.children.emplace_back(std::to_string(i), items[i]);
  return m;
}

}  // namespace ts
