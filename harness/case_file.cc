#include "harness/case_file.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

#include "harness/formats.h"

namespace lnv {
namespace {

constexpr std::string_view kMagic = "lnv-case";
constexpr int kVersion = 1;
// Far beyond any useful replay; guards rows * d against overflow and a
// malformed header against a huge allocation.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

double FromBits(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

const std::uint64_t kQuietNan = Bits(std::numeric_limits<double>::quiet_NaN());
const std::uint64_t kSignBit = std::uint64_t{1} << 63;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool ParseInt(std::string_view s, std::int64_t* v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseU64(std::string_view s, std::uint64_t* v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string ValidateValues(const std::vector<double>& v, DType t, const char* what) {
  const FloatFormat f = FormatOf(t);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!IsRepresentable(v[i], f)) {
      return std::string(what) + "[" + std::to_string(i) + "] = " + FormatValue(v[i]) +
             " is not representable in " + std::string(DTypeName(t));
    }
  }
  return "";
}

}  // namespace

std::string FormatValue(double v) {
  if (std::isnan(v)) {
    const std::uint64_t b = Bits(v);
    if (b == kQuietNan) return "nan";
    if (b == (kQuietNan | kSignBit)) return "-nan";
    char buf[40];
    std::snprintf(buf, sizeof buf, "nan:0x%016llx", static_cast<unsigned long long>(b));
    return buf;
  }
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

bool ParseValue(std::string_view t, double* v) {
  if (t == "inf" || t == "+inf") {
    *v = std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "-inf") {
    *v = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "nan") {
    *v = FromBits(kQuietNan);
    return true;
  }
  if (t == "-nan") {
    *v = FromBits(kQuietNan | kSignBit);
    return true;
  }
  if (t.substr(0, 6) == "nan:0x") {
    std::string_view hex = t.substr(6);
    std::uint64_t b = 0;
    if (hex.size() != 16) return false;
    const auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), b, 16);
    if (ec != std::errc() || p != hex.data() + hex.size()) return false;
    *v = FromBits(b);
    return std::isnan(*v);
  }
  // Hex floats only: [+-]0x<hex>[.<hex>]p[+-]<dec>. strtod checks the syntax;
  // the prefix check keeps decimals (which may not round-trip) out.
  std::string_view body = t;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body.size() < 3 || body[0] != '0' || (body[1] != 'x' && body[1] != 'X')) return false;
  if (body.find_first_of("pP") == std::string_view::npos) return false;
  const std::string s(t);
  errno = 0;
  char* end = nullptr;
  const double r = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  if (!std::isfinite(r)) return false;  // overflowing literal
  *v = r;
  return true;
}

std::optional<DType> ParseDType(std::string_view s) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    if (s == DTypeName(t)) return t;
  }
  return std::nullopt;
}

std::optional<Norm> ParseNorm(std::string_view s) {
  for (Norm n : {Norm::kLayerNorm, Norm::kRmsNorm}) {
    if (s == NormName(n)) return n;
  }
  return std::nullopt;
}

std::string ValidateCase(const Case& c) {
  if (c.kernel.empty() || c.kernel.find_first_of(" \t\n") != std::string::npos) {
    return "kernel name must be one non-empty word";
  }
  if (c.d < 1) return "d must be >= 1";
  if (c.rows < 1) return "rows must be >= 1";
  if (c.rows > kMaxElements / c.d) return "rows * d is too large";
  const auto n = static_cast<std::size_t>(c.rows * c.d);
  const auto d = static_cast<std::size_t>(c.d);
  if (c.x.size() != n)
    return "x has " + std::to_string(c.x.size()) + " values, want rows*d = " + std::to_string(n);
  if (!c.gamma.empty() && c.gamma.size() != d) return "gamma must have d values";
  if (!c.beta.empty() && c.beta.size() != d) return "beta must have d values";
  if (!c.beta.empty() && c.norm == Norm::kRmsNorm) return "beta given for rms_norm";
  if (!c.dy.empty() && c.dy.size() != n) return "dy must have rows*d values";
  if (!IsRepresentable(c.eps, kBinary32)) {
    return "eps = " + FormatValue(c.eps) + " is not a float value";
  }
  for (const auto& [v, t, what] :
       {std::tuple{&c.x, c.dtype, "x"}, std::tuple{&c.dy, c.dtype, "dy"},
        std::tuple{&c.gamma, c.param_dtype, "gamma"}, std::tuple{&c.beta, c.param_dtype, "beta"}}) {
    std::string e = ValidateValues(*v, t, what);
    if (!e.empty()) return e;
  }
  return "";
}

std::string FormatCase(const Case& c) {
  std::ostringstream o;
  o << kMagic << ' ' << kVersion << '\n';
  o << "kernel " << c.kernel << '\n';
  o << "norm " << NormName(c.norm) << '\n';
  o << "dtype " << DTypeName(c.dtype) << '\n';
  o << "param_dtype " << DTypeName(c.param_dtype) << '\n';
  o << "d " << c.d << '\n';
  o << "rows " << c.rows << '\n';
  o << "eps " << FormatValue(c.eps) << '\n';
  const Provenance& p = c.provenance;
  auto text = [&](const char* key, const std::string& v) {
    if (v.empty()) return;
    o << key << ' ';
    for (char ch : v) o << (ch == '\n' || ch == '\r' ? ' ' : ch);  // one line each
    o << '\n';
  };
  text("found_by", p.found_by);
  if (p.seed) o << "seed " << *p.seed << '\n';
  text("family", p.family);
  text("why", p.why);
  text("replay", p.replay);
  for (const std::string& n : p.notes) text("note", n);
  auto values = [&](const char* key, const std::vector<double>& v, std::int64_t lines) {
    if (v.empty()) return;
    const std::size_t per = v.size() / static_cast<std::size_t>(lines);
    for (std::int64_t l = 0; l < lines; ++l) {
      o << key;
      for (std::size_t i = 0; i < per; ++i) o << ' ' << FormatValue(v[l * per + i]);
      o << '\n';
    }
  };
  values("x", c.x, c.rows);
  values("gamma", c.gamma, 1);
  values("beta", c.beta, 1);
  values("dy", c.dy, c.rows);
  o << "end\n";
  return o.str();
}

bool ParseCase(std::string_view text, Case* out, std::string* error) {
  Case c;
  int line_no = 0;
  bool have_magic = false, have_end = false;
  bool have_norm = false, have_dtype = false, have_param = false, have_d = false, have_rows = false,
       have_eps = false, have_kernel = false;
  std::int64_t x_lines = 0, dy_lines = 0;
  auto fail = [&](const std::string& why) {
    *error = "line " + std::to_string(line_no) + ": " + why;
    return false;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (have_end) return fail("text after 'end'");
    const std::size_t sp = line.find_first_of(" \t");
    const std::string_view key = line.substr(0, sp);
    const std::string_view rest = sp == std::string_view::npos ? "" : Trim(line.substr(sp));
    if (!have_magic) {
      if (key != kMagic) return fail("not a case file (expected 'lnv-case 1')");
      std::int64_t v = 0;
      if (!ParseInt(rest, &v) || v != kVersion) {
        return fail("unsupported case file version '" + std::string(rest) + "'");
      }
      have_magic = true;
      continue;
    }
    auto once = [&](bool* seen) {
      if (*seen) return false;
      *seen = true;
      return true;
    };
    auto need_header = [&]() { return have_d && have_rows && have_norm; };
    auto read_values = [&](std::vector<double>* dst, const char* what) -> bool {
      const auto toks = Split(rest);
      if (static_cast<std::int64_t>(toks.size()) != c.d) {
        return fail(std::string(what) + ": expected " + std::to_string(c.d) + " values, got " +
                    std::to_string(toks.size()));
      }
      for (std::string_view t : toks) {
        double v = 0;
        if (!ParseValue(t, &v)) {
          return fail(std::string(what) + ": bad value '" + std::string(t) +
                      "' (want a hex float, inf, nan)");
        }
        dst->push_back(v);
      }
      return true;
    };
    if (key == "kernel") {
      if (!once(&have_kernel)) return fail("duplicate 'kernel'");
      if (rest.empty() || Split(rest).size() != 1) return fail("kernel: want one name");
      c.kernel = std::string(rest);
    } else if (key == "norm") {
      if (!once(&have_norm)) return fail("duplicate 'norm'");
      const auto n = ParseNorm(rest);
      if (!n) return fail("norm: want layer_norm or rms_norm, got '" + std::string(rest) + "'");
      c.norm = *n;
    } else if (key == "dtype" || key == "param_dtype") {
      const bool param = key == "param_dtype";
      if (!once(param ? &have_param : &have_dtype))
        return fail("duplicate '" + std::string(key) + "'");
      const auto t = ParseDType(rest);
      if (!t)
        return fail(std::string(key) + ": want f32, f16, bf16 or f64, got '" + std::string(rest) +
                    "'");
      (param ? c.param_dtype : c.dtype) = *t;
    } else if (key == "d" || key == "rows") {
      const bool is_d = key == "d";
      if (!once(is_d ? &have_d : &have_rows)) return fail("duplicate '" + std::string(key) + "'");
      std::int64_t v = 0;
      if (!ParseInt(rest, &v) || v < 1 || v > kMaxElements) {
        return fail(std::string(key) + ": want an integer in [1, 2^31], got '" + std::string(rest) +
                    "'");
      }
      (is_d ? c.d : c.rows) = v;
      if (have_d && have_rows && c.rows > kMaxElements / c.d) return fail("rows * d is too large");
    } else if (key == "eps") {
      if (!once(&have_eps)) return fail("duplicate 'eps'");
      if (!ParseValue(rest, &c.eps)) return fail("eps: bad value '" + std::string(rest) + "'");
    } else if (key == "found_by") {
      c.provenance.found_by = std::string(rest);
    } else if (key == "seed") {
      std::uint64_t s = 0;
      if (!ParseU64(rest, &s)) return fail("seed: want an unsigned integer");
      c.provenance.seed = s;
    } else if (key == "family") {
      c.provenance.family = std::string(rest);
    } else if (key == "why") {
      c.provenance.why = std::string(rest);
    } else if (key == "replay") {
      c.provenance.replay = std::string(rest);
    } else if (key == "note") {
      c.provenance.notes.emplace_back(rest);
    } else if (key == "x" || key == "dy") {
      if (!need_header()) return fail("'" + std::string(key) + "' before norm, d and rows");
      const bool is_x = key == "x";
      std::int64_t& lines = is_x ? x_lines : dy_lines;
      if (lines == c.rows)
        return fail("more than rows = " + std::to_string(c.rows) + " '" + std::string(key) +
                    "' lines");
      if (!read_values(is_x ? &c.x : &c.dy, is_x ? "x" : "dy")) return false;
      ++lines;
    } else if (key == "gamma" || key == "beta") {
      if (!need_header()) return fail("'" + std::string(key) + "' before norm, d and rows");
      std::vector<double>& v = key == "gamma" ? c.gamma : c.beta;
      if (!v.empty()) return fail("duplicate '" + std::string(key) + "'");
      if (!read_values(&v, key == "gamma" ? "gamma" : "beta")) return false;
    } else if (key == "end") {
      if (!rest.empty()) return fail("'end' takes no arguments");
      have_end = true;
    } else {
      return fail("unknown key '" + std::string(key) + "'");
    }
  }
  ++line_no;
  if (!have_magic) return fail("empty file (expected 'lnv-case 1')");
  for (const auto& [seen, name] : {std::pair{have_kernel, "kernel"},
                                   {have_norm, "norm"},
                                   {have_dtype, "dtype"},
                                   {have_d, "d"},
                                   {have_rows, "rows"},
                                   {have_eps, "eps"}}) {
    if (!seen) return fail(std::string("missing '") + name + "'");
  }
  if (!have_param) c.param_dtype = c.dtype;
  if (!have_end) return fail("missing 'end' (truncated file?)");
  if (x_lines != c.rows) {
    return fail("want " + std::to_string(c.rows) + " 'x' lines, got " + std::to_string(x_lines));
  }
  if (dy_lines != 0 && dy_lines != c.rows) {
    return fail("want " + std::to_string(c.rows) + " 'dy' lines, got " + std::to_string(dy_lines));
  }
  const std::string invalid = ValidateCase(c);
  if (!invalid.empty()) {
    *error = invalid;
    return false;
  }
  *out = std::move(c);
  return true;
}

bool ReadCaseFile(const std::string& path, Case* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  std::string e;
  if (!ParseCase(s.str(), out, &e)) {
    *error = path + ": " + e;
    return false;
  }
  return true;
}

bool WriteCaseFile(const std::string& path, const Case& c, std::string* error) {
  const std::string invalid = ValidateCase(c);
  if (!invalid.empty()) {
    *error = "invalid case: " + invalid;
    return false;
  }
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  if (!o) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  o << FormatCase(c);
  o.close();
  if (!o) {
    *error = path + ": write error";
    return false;
  }
  return true;
}

Case SelectRows(const Case& c, const std::vector<std::int64_t>& rows) {
  Case s = c;
  s.rows = static_cast<std::int64_t>(rows.size());
  s.x.clear();
  s.dy.clear();
  for (std::int64_t r : rows) {
    s.x.insert(s.x.end(), c.x.begin() + r * c.d, c.x.begin() + (r + 1) * c.d);
    if (!c.dy.empty())
      s.dy.insert(s.dy.end(), c.dy.begin() + r * c.d, c.dy.begin() + (r + 1) * c.d);
  }
  return s;
}

std::string FileSafeName(std::string_view s) {
  std::string o;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    o += ok ? ch : '_';
  }
  return o;
}

}  // namespace lnv
