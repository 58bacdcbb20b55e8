#include "fuzz/fuzz_input.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "harness/families.h"
#include "impls/dtype.h"

namespace lnv::fuzz {
namespace {

constexpr std::array<float, 12> kEps = {
    1e-5f,     1e-6f,  1e-12f, 1e-3f, 1e-8f, 0.1f, 1.0f, 1e4f,
    0x1p-126f,  // the smallest normal binary32
    0x1p-149f,  // the smallest subnormal: q = sigma^2 + eps barely above sigma^2
    1e-20f,    1e-30f,
};

enum ArrayId : std::uint64_t { kX = 1, kGamma = 2, kBeta = 3, kDy = 4 };

std::uint64_t Mix(std::uint64_t z) {  // splitmix64's finalizer
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t FillHash(std::uint8_t seed, ArrayId array, std::int64_t row, std::int64_t col) {
  return Mix(
      Mix(Mix(seed ^ (static_cast<std::uint64_t>(array) << 8)) ^ static_cast<std::uint64_t>(row)) ^
      static_cast<std::uint64_t>(col));
}

DType DTypeFromBits(unsigned v) { return static_cast<DType>(v & 3u); }

Signature Snap(Signature want, const std::vector<Signature>& have) {
  if (have.empty() || std::find(have.begin(), have.end(), want) != have.end()) return want;
  for (const Signature& s : have) {
    if (s.norm == want.norm && s.dtype == want.dtype) return s;
  }
  for (const Signature& s : have) {
    if (s.dtype == want.dtype) return s;
  }
  for (const Signature& s : have) {
    if (s.norm == want.norm) return s;
  }
  return have.front();
}

std::uint64_t ReadBits(const std::uint8_t* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

void WriteBits(std::uint64_t v, std::size_t bytes, std::vector<std::uint8_t>* out) {
  for (std::size_t i = 0; i < bytes; ++i) out->push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

bool IsFiniteNonzero(std::uint64_t bits, const BitLayout& l) {
  const std::uint64_t exp_mask = ((std::uint64_t{1} << l.exponent) - 1) << l.mantissa;
  const std::uint64_t magnitude = bits & ~(std::uint64_t{1} << (l.width - 1));
  return (bits & exp_mask) != exp_mask && magnitude != 0;
}

// Expands explicit columns to d columns per row.
std::vector<double> Expand(const FuzzInput& in, const std::vector<std::uint64_t>& ex,
                           std::int64_t nrows, DType t, ArrayId id, double neutral) {
  const std::int64_t d = in.d, c = in.cols;
  const BitLayout l = LayoutOf(t);
  std::uint64_t noise_mask = 0;
  if (in.fill == FillMode::kScatterLowBits) noise_mask = 3;
  if (in.fill == FillMode::kScatterHalfMantissa)
    noise_mask = (std::uint64_t{1} << (l.mantissa / 2)) - 1;
  std::vector<double> out(static_cast<std::size_t>(nrows * d));
  for (std::int64_t r = 0; r < nrows; ++r) {
    for (std::int64_t j = 0; j < d; ++j) {
      double& v = out[static_cast<std::size_t>(r * d + j)];
      if (c == 0) {
        v = neutral;
        continue;
      }
      if (j < c) {
        v = FromBits(ex[static_cast<std::size_t>(r * c + j)], t);
        continue;
      }
      const std::uint64_t h = FillHash(in.fill_seed, id, r, j);
      const std::int64_t src =
          in.fill == FillMode::kCycle ? j % c : static_cast<std::int64_t>(h % c);
      std::uint64_t bits = ex[static_cast<std::size_t>(r * c + src)];
      if (noise_mask != 0 && IsFiniteNonzero(bits, l)) bits ^= (h >> 16) & noise_mask;
      v = FromBits(bits, t);
    }
  }
  return out;
}

}  // namespace

std::span<const float> EpsTable() { return kEps; }

bool HasGamma(const FuzzInput& in) { return in.affine != AffineMode::kNone; }
bool HasBeta(const FuzzInput& in) {
  return in.affine == AffineMode::kGammaBeta && in.signature.norm == Norm::kLayerNorm;
}

BitLayout LayoutOf(DType t) {
  switch (t) {
    case DType::kF32:
      return {32, 23, 8};
    case DType::kF64:
      return {64, 52, 11};
    case DType::kF16:
      return {16, 10, 5};
    case DType::kBF16:
      return {16, 7, 8};
  }
  return {32, 23, 8};
}

double FromBits(std::uint64_t bits, DType t) {
  unsigned char buf[8];
  std::memcpy(buf, &bits, sizeof buf);  // little-endian: the dtype's bytes come first
  return LoadAsDouble(buf, t, 0);
}

std::uint64_t ToBits(double v, DType t) {
  unsigned char buf[8] = {};
  StoreExact(buf, t, 0, v);
  std::uint64_t bits = 0;
  std::memcpy(&bits, buf, SizeOf(t));
  return bits;
}

std::vector<std::uint64_t> SpecialBits(DType t) {
  const BitLayout l = LayoutOf(t);
  const std::uint64_t sign = std::uint64_t{1} << (l.width - 1);
  const std::uint64_t exp_mask = ((std::uint64_t{1} << l.exponent) - 1) << l.mantissa;
  const std::uint64_t bias = (std::uint64_t{1} << (l.exponent - 1)) - 1;
  const std::uint64_t one = bias << l.mantissa;
  const std::uint64_t two_p = (bias + static_cast<std::uint64_t>(l.mantissa) + 1) << l.mantissa;
  return {
      0,                                                         // +0
      sign,                                                      // -0
      exp_mask,                                                  // +inf
      sign | exp_mask,                                           // -inf
      exp_mask | (std::uint64_t{1} << (l.mantissa - 1)),         // quiet NaN
      sign | exp_mask | (std::uint64_t{1} << (l.mantissa - 1)),  // -quiet NaN
      exp_mask | 1,                                              // signalling NaN
      1,                                                         // smallest subnormal
      sign | 1,
      (std::uint64_t{1} << l.mantissa) - 1,  // largest subnormal
      std::uint64_t{1} << l.mantissa,        // smallest normal
      exp_mask - 1,                          // largest finite
      sign | (exp_mask - 1),
      one,         // 1
      sign | one,  // -1
      one - 1,     // 1 - u
      one + 1,     // 1 + 2u
      two_p,       // 2^p: integers stop being exact
      two_p - 1,   // 2^p - 1
  };
}

std::size_t EncodedSize(const FuzzInput& in) {
  const std::size_t xs = SizeOf(in.signature.dtype), ps = SizeOf(in.signature.param_dtype);
  const std::size_t c = static_cast<std::size_t>(in.cols), rows = static_cast<std::size_t>(in.rows);
  std::size_t n = kHeaderSize + rows * c * xs;
  if (HasGamma(in)) n += c * ps;
  if (HasBeta(in)) n += c * ps;
  if (in.backward) n += rows * c * xs;
  return n;
}

FuzzInput DecodeInput(const std::uint8_t* data, std::size_t size, const DecodeConfig& config) {
  std::array<std::uint8_t, kHeaderSize> h{};
  // memcpy's source must never be null, even for 0 bytes (libFuzzer and the
  // tests hand an empty input as a null pointer).
  if (size > 0) std::memcpy(h.data(), data, std::min(size, kHeaderSize));
  FuzzInput in;
  in.kernel_selector = h[0];
  in.signature = Snap({(h[1] & 1) ? Norm::kRmsNorm : Norm::kLayerNorm, DTypeFromBits(h[1] >> 1),
                       DTypeFromBits(h[1] >> 3)},
                      config.signatures);
  in.backward = (h[1] >> 5) & 1;
  const unsigned affine = h[1] >> 6;
  in.affine = affine == 0   ? AffineMode::kNone
              : affine == 1 ? AffineMode::kGamma
                            : AffineMode::kGammaBeta;
  const std::int64_t max_d = std::clamp<std::int64_t>(config.max_d, 1, kMaxMaxD);
  const std::int64_t d_raw = h[2] | (h[3] << 8);
  in.d = d_raw >= 1 && d_raw <= max_d ? d_raw : (d_raw == 0 ? 1 : (d_raw - 1) % max_d + 1);
  const std::int64_t c_raw = h[4] | (h[5] << 8);
  std::int64_t c = c_raw == 0 ? in.d : std::min(c_raw, in.d);
  in.rows = h[6] % kMaxRows + 1;
  in.eps_index = static_cast<std::uint8_t>(h[7] % kEps.size());
  in.fill = static_cast<FillMode>(h[8] & 3);
  in.cross_check_oracle = (h[8] >> 2) & 1;
  in.random_family = (h[8] >> 3) & 1 ? (h[8] >> 4) & 3 : -1;
  in.fill_seed = h[9];

  // How many columns the value bytes hold.
  const std::size_t xs = SizeOf(in.signature.dtype), ps = SizeOf(in.signature.param_dtype);
  const std::size_t rows = static_cast<std::size_t>(in.rows);
  std::size_t per_col = rows * xs;
  if (HasGamma(in)) per_col += ps;
  if (HasBeta(in)) per_col += ps;
  if (in.backward) per_col += rows * xs;
  const std::size_t avail = size > kHeaderSize ? size - kHeaderSize : 0;
  c = std::min<std::int64_t>(c, static_cast<std::int64_t>(avail / per_col));
  in.cols = c;

  // Only a real value byte is ever pointed at: with no columns nothing is read,
  // and data may be null or shorter than the header.
  const std::uint8_t* p = c > 0 ? data + kHeaderSize : nullptr;
  auto read = [&](std::vector<std::uint64_t>* v, std::size_t n, std::size_t width) {
    v->resize(n);
    for (std::size_t i = 0; i < n; ++i, p += width) (*v)[i] = ReadBits(p, width);
  };
  const std::size_t cc = static_cast<std::size_t>(c);
  read(&in.x, rows * cc, xs);
  if (HasGamma(in)) read(&in.gamma, cc, ps);
  if (HasBeta(in)) read(&in.beta, cc, ps);
  if (in.backward) read(&in.dy, rows * cc, xs);
  return in;
}

void Normalize(FuzzInput* in) {
  in->rows = std::clamp<std::int64_t>(in->rows, 1, kMaxRows);
  in->d = std::clamp<std::int64_t>(in->d, 1, kMaxMaxD);
  in->cols = std::clamp<std::int64_t>(in->cols, 0, in->d);
  in->eps_index = static_cast<std::uint8_t>(in->eps_index % kEps.size());
  const DType t = in->signature.dtype, pt = in->signature.param_dtype;
  const std::size_t rc = static_cast<std::size_t>(in->rows * in->cols);
  const std::size_t c = static_cast<std::size_t>(in->cols);
  in->x.resize(rc, ToBits(0.0, t));
  if (HasGamma(*in)) {
    in->gamma.resize(c, ToBits(1.0, pt));
  } else {
    in->gamma.clear();
  }
  if (HasBeta(*in)) {
    in->beta.resize(c, ToBits(0.0, pt));
  } else {
    in->beta.clear();
  }
  if (in->backward) {
    in->dy.resize(rc, ToBits(1.0, t));
  } else {
    in->dy.clear();
  }
}

std::vector<std::uint8_t> EncodeInput(const FuzzInput& in) {
  std::vector<std::uint8_t> out;
  out.reserve(EncodedSize(in));
  out.push_back(in.kernel_selector);
  const unsigned affine = static_cast<unsigned>(in.affine);
  out.push_back(static_cast<std::uint8_t>((in.signature.norm == Norm::kRmsNorm ? 1u : 0u) |
                                          (static_cast<unsigned>(in.signature.dtype) << 1) |
                                          (static_cast<unsigned>(in.signature.param_dtype) << 3) |
                                          ((in.backward ? 1u : 0u) << 5) | (affine << 6)));
  out.push_back(static_cast<std::uint8_t>(in.d & 0xff));
  out.push_back(static_cast<std::uint8_t>((in.d >> 8) & 0xff));
  out.push_back(static_cast<std::uint8_t>(in.cols & 0xff));
  out.push_back(static_cast<std::uint8_t>((in.cols >> 8) & 0xff));
  out.push_back(static_cast<std::uint8_t>(in.rows - 1));
  out.push_back(in.eps_index);
  const unsigned random =
      in.random_family < 0 ? 0u : 8u | (static_cast<unsigned>(in.random_family & 3) << 4);
  out.push_back(static_cast<std::uint8_t>(static_cast<unsigned>(in.fill) |
                                          (in.cross_check_oracle ? 4u : 0u) | random));
  out.push_back(in.fill_seed);
  const std::size_t xs = SizeOf(in.signature.dtype), ps = SizeOf(in.signature.param_dtype);
  for (std::uint64_t v : in.x) WriteBits(v, xs, &out);
  for (std::uint64_t v : in.gamma) WriteBits(v, ps, &out);
  for (std::uint64_t v : in.beta) WriteBits(v, ps, &out);
  for (std::uint64_t v : in.dy) WriteBits(v, xs, &out);
  return out;
}

std::uint64_t RandomDataSeed(const FuzzInput& in) {
  std::uint64_t seed = 0xcbf29ce484222325ULL ^ in.fill_seed;
  for (std::uint64_t v : in.x) seed = (seed ^ v) * 0x100000001b3ULL;
  return seed;
}

namespace {

// A random-data input's case: the family's draw for the header's shape.
Case RandomDataCase(const FuzzInput& in) {
  FamilyParams p;
  p.norm = in.signature.norm;
  p.dtype = in.signature.dtype;
  p.param_dtype = in.signature.param_dtype;
  p.d = in.d;
  p.rows = in.rows;
  p.eps = static_cast<double>(kEps[in.eps_index % kEps.size()]);
  p.with_dy = in.backward;
  p.affine = in.affine != AffineMode::kNone;
  p.seed = RandomDataSeed(in);
  Case c = GenerateCase(*FindFamily(kRandomDataFamilies[in.random_family & 3]), p);
  c.kernel = "-";
  return c;
}

}  // namespace

Case Materialize(const FuzzInput& in) {
  if (in.random_family >= 0) return RandomDataCase(in);
  Case c;
  c.kernel = "-";
  c.norm = in.signature.norm;
  c.dtype = in.signature.dtype;
  c.param_dtype = in.signature.param_dtype;
  c.d = in.d;
  c.rows = in.rows;
  c.eps = static_cast<double>(kEps[in.eps_index % kEps.size()]);
  c.x = Expand(in, in.x, in.rows, c.dtype, kX, 0.0);
  if (HasGamma(in)) c.gamma = Expand(in, in.gamma, 1, c.param_dtype, kGamma, 1.0);
  if (HasBeta(in)) c.beta = Expand(in, in.beta, 1, c.param_dtype, kBeta, 0.0);
  if (in.backward) c.dy = Expand(in, in.dy, in.rows, c.dtype, kDy, 1.0);
  return c;
}

bool InputFromCase(const Case& c, std::int64_t max_cols, FuzzInput* out, std::string* error) {
  if (c.rows < 1 || c.rows > kMaxRows) {
    *error =
        "rows = " + std::to_string(c.rows) + " is outside [1, " + std::to_string(kMaxRows) + "]";
    return false;
  }
  if (c.d < 1 || c.d > kMaxMaxD) {
    *error = "d = " + std::to_string(c.d) + " is outside [1, " + std::to_string(kMaxMaxD) + "]";
    return false;
  }
  const float eps = static_cast<float>(c.eps);
  const auto it = std::find_if(kEps.begin(), kEps.end(), [&](float e) {
    return std::memcmp(&e, &eps, sizeof e) == 0 && static_cast<double>(e) == c.eps;
  });
  if (it == kEps.end()) {
    *error = "eps = " + FormatValue(c.eps) + " is not in the fuzz input's eps table";
    return false;
  }
  FuzzInput in;
  in.signature = {c.norm, c.dtype, c.param_dtype};
  in.backward = !c.dy.empty();
  in.affine = c.gamma.empty() && c.beta.empty()
                  ? AffineMode::kNone
                  : (c.beta.empty() ? AffineMode::kGamma : AffineMode::kGammaBeta);
  in.d = c.d;
  in.rows = c.rows;
  in.cols = std::clamp<std::int64_t>(max_cols, 1, c.d);
  in.eps_index = static_cast<std::uint8_t>(it - kEps.begin());
  in.fill = in.cols < in.d ? FillMode::kScatterLowBits : FillMode::kCycle;
  const std::int64_t cols = in.cols;
  auto take = [&](const std::vector<double>& v, std::int64_t nrows, DType t, double absent) {
    std::vector<std::uint64_t> bits;
    for (std::int64_t r = 0; r < nrows; ++r) {
      for (std::int64_t j = 0; j < cols; ++j) {
        bits.push_back(ToBits(v.empty() ? absent : v[static_cast<std::size_t>(r * c.d + j)], t));
      }
    }
    return bits;
  };
  in.x = take(c.x, c.rows, c.dtype, 0.0);
  if (HasGamma(in)) in.gamma = take(c.gamma, 1, c.param_dtype, 1.0);
  if (HasBeta(in)) in.beta = take(c.beta, 1, c.param_dtype, 0.0);
  if (in.backward) in.dy = take(c.dy, c.rows, c.dtype, 1.0);
  *out = std::move(in);
  return true;
}

}  // namespace lnv::fuzz
