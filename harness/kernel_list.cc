#include "harness/kernel_list.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "harness/bounds.h"

namespace lnv {
namespace {

// A JSON string literal of s (quotes, backslashes and control characters escaped).
std::string Quoted(std::string_view s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

// A claimed-range limit: "none" (text) or null (JSON) when it is +inf.
std::string Limit(double v, bool json) {
  if (std::isinf(v)) return json ? "null" : "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Dtypes(const ImplInfo& k) {
  return std::string(DTypeName(k.x_dtype)) + "/" + std::string(DTypeName(k.param_dtype)) + " acc " +
         std::string(DTypeName(k.acc_dtype));
}

void Text(const ImplInfo& k, std::ostream& out) {
  out << k.name << "  " << StatusName(k.status) << "  " << NormName(k.norm) << " " << Dtypes(k)
      << "  " << (k.backward != nullptr ? "forward+backward" : "forward") << "  "
      << DescribeBound(k) << "  range: sum x^2 <= " << Limit(k.max_row_sumsq, false)
      << ", backward weight <= " << Limit(k.max_backward_weight, false) << " (dx: rstd x weight)\n";
}

void Json(const ImplInfo& k, std::ostream& out) {
  out << "{\"name\": " << Quoted(k.name) << ", \"status\": " << Quoted(StatusName(k.status))
      << ", \"norm\": " << Quoted(NormName(k.norm))
      << ", \"x_dtype\": " << Quoted(DTypeName(k.x_dtype))
      << ", \"param_dtype\": " << Quoted(DTypeName(k.param_dtype))
      << ", \"acc_dtype\": " << Quoted(DTypeName(k.acc_dtype))
      << ", \"algorithm\": " << Quoted(AlgorithmName(k.algorithm))
      << ", \"bound_algorithm\": " << Quoted(AlgorithmName(k.bound_algorithm))
      << ", \"reduction\": " << Quoted(ReductionName(k.reduction)) << ", \"chunk\": " << k.chunk
      << ", \"backward\": " << (k.backward != nullptr ? "true" : "false")
      << ", \"bound\": " << Quoted(DescribeBound(k))
      << ", \"max_row_sumsq\": " << Limit(k.max_row_sumsq, true)
      << ", \"max_backward_weight\": " << Limit(k.max_backward_weight, true)
      << ", \"source\": " << Quoted(k.source) << "}";
}

}  // namespace

int ListKernels(const std::vector<ImplInfo>& impls, const std::string& glob, bool json,
                std::ostream& out) {
  int n = 0;
  for (const ImplInfo& k : impls) {
    if (!GlobMatch(glob, k.name)) continue;
    if (json) {
      out << (n == 0 ? "[\n  " : ",\n  ");
      Json(k, out);
    } else {
      Text(k, out);
    }
    ++n;
  }
  if (json && n > 0) out << "\n]\n";
  return n;
}

}  // namespace lnv
