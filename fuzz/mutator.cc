#include "fuzz/mutator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

using Rng = std::mt19937_64;

std::int64_t Uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

bool Chance(Rng& rng, int one_in) { return Uniform(rng, 1, one_in) == 1; }

// The array a value mutation lands in: x most of the time, else whichever
// other arrays are present.
std::vector<std::uint64_t>* PickArray(FuzzInput* in, Rng& rng, DType* t) {
  std::vector<std::pair<std::vector<std::uint64_t>*, DType>> arrays;
  const DType xt = in->signature.dtype, pt = in->signature.param_dtype;
  if (!in->x.empty()) arrays.insert(arrays.end(), 4, {&in->x, xt});
  if (!in->gamma.empty()) arrays.push_back({&in->gamma, pt});
  if (!in->beta.empty()) arrays.push_back({&in->beta, pt});
  if (!in->dy.empty()) arrays.insert(arrays.end(), 2, {&in->dy, xt});
  if (arrays.empty()) return nullptr;
  const auto& pick = arrays[static_cast<std::size_t>(
      Uniform(rng, 0, static_cast<std::int64_t>(arrays.size()) - 1))];
  *t = pick.second;
  return pick.first;
}

// x, or dy one time in four: the array a row mutation changes.
std::vector<std::uint64_t>* PickRowArray(FuzzInput* in, Rng& rng) {
  if (!in->dy.empty() && Chance(rng, 4)) return &in->dy;
  return &in->x;
}

double RoundInto(double v, DType t) { return RoundToFormat(v, FormatOf(t)); }

std::uint64_t Convert(std::uint64_t bits, DType from, DType to) {
  return ToBits(RoundInto(FromBits(bits, from), to), to);
}

void ConvertAll(std::vector<std::uint64_t>* v, DType from, DType to) {
  for (std::uint64_t& b : *v) b = Convert(b, from, to);
}

// A new d: near the old one, a vector-width boundary, or anywhere allowed.
std::int64_t NewD(std::int64_t d, std::int64_t max_d, Rng& rng) {
  static constexpr std::array<std::int64_t, 24> kInteresting = {
      1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,   31,
      32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 1024, 4096};
  std::int64_t n = d;
  switch (Uniform(rng, 0, 5)) {
    case 0:
      n = d + Uniform(rng, -2, 2);
      break;
    case 1:
      n = Chance(rng, 2) ? d * 2 : d / 2;
      break;
    case 2:
      n = kInteresting[static_cast<std::size_t>(Uniform(rng, 0, kInteresting.size() - 1))];
      break;
    case 3:
      n = Uniform(rng, 1, std::min<std::int64_t>(64, max_d));
      break;
    case 4:
      n = Uniform(rng, 1, max_d);
      break;
    default:
      n = (std::int64_t{1} << Uniform(rng, 0, 12)) + Uniform(rng, -1, 1);
      break;
  }
  n = std::clamp<std::int64_t>(n, 1, max_d);
  return n == d ? (d < max_d ? d + 1 : std::max<std::int64_t>(1, d - 1)) : n;
}

void RebuildRows(std::vector<std::uint64_t>* v, std::int64_t rows, std::int64_t old_cols,
                 std::int64_t cols, std::uint64_t neutral) {
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) {
      out.push_back(old_cols == 0 ? neutral
                                  : (*v)[static_cast<std::size_t>(r * old_cols + j % old_cols)]);
    }
  }
  *v = std::move(out);
}

std::int64_t MaxD(const DecodeConfig& config) {
  return std::clamp<std::int64_t>(config.max_d, 1, kMaxMaxD);
}

// Mutations of single values. Returns false when the input has none.
bool MutateValue(FuzzInput* in, Mutation m, Rng& rng) {
  DType t{};
  std::vector<std::uint64_t>* v = PickArray(in, rng, &t);
  if (v == nullptr) return false;
  std::uint64_t& bits =
      (*v)[static_cast<std::size_t>(Uniform(rng, 0, static_cast<std::int64_t>(v->size()) - 1))];
  const BitLayout l = LayoutOf(t);
  const std::uint64_t width_mask =
      l.width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << l.width) - 1;
  switch (m) {
    case Mutation::kFlipBit:
      bits ^= std::uint64_t{1} << Uniform(rng, 0, l.width - 1);
      break;
    case Mutation::kFlipMantissaBit:
      bits ^= std::uint64_t{1} << Uniform(rng, 0, l.mantissa - 1);
      break;
    case Mutation::kFlipExponentBit:
      bits ^= std::uint64_t{1} << (l.mantissa + Uniform(rng, 0, l.exponent - 1));
      break;
    case Mutation::kSpecial: {
      const auto specials = SpecialBits(t);
      bits = specials[static_cast<std::size_t>(
          Uniform(rng, 0, static_cast<std::int64_t>(specials.size()) - 1))];
      break;
    }
    default: {  // kNudgeUlps: adjacent bit patterns are adjacent values of one sign
      const std::int64_t step = Uniform(rng, 1, 4) * (Chance(rng, 2) ? 1 : -1);
      bits = (bits + static_cast<std::uint64_t>(step)) & width_mask;
      break;
    }
  }
  return true;
}

// Mutations of whole rows of explicit values. Returns false without values.
bool MutateRow(FuzzInput* in, Mutation m, Rng& rng) {
  if (in->cols == 0) return false;
  std::vector<std::uint64_t>* v = PickRowArray(in, rng);
  const DType t = in->signature.dtype;
  const std::int64_t c = in->cols, r = Uniform(rng, 0, in->rows - 1);
  std::uint64_t* row = v->data() + r * c;
  switch (m) {
    case Mutation::kMakeRowConstant: {
      const std::uint64_t pick = row[Uniform(rng, 0, c - 1)];
      std::fill(row, row + c, pick);
      break;
    }
    case Mutation::kCopyValueInRow: {
      const std::uint64_t pick = row[Uniform(rng, 0, c - 1)];
      const std::int64_t n = Uniform(rng, 1, std::max<std::int64_t>(1, c / 2));
      for (std::int64_t k = 0; k < n; ++k) row[Uniform(rng, 0, c - 1)] = pick;
      break;
    }
    case Mutation::kShiftRow: {
      // A shift of 2^e times a random significand, e from a little below the
      // row's largest magnitude to far above it: kappa = sqrt(1 + mu^2/s2)
      // grows with the shift until the spread drowns in rounding.
      double max_abs = 0;
      for (std::int64_t j = 0; j < c; ++j) {
        const double x = FromBits(row[j], t);
        if (std::isfinite(x)) max_abs = std::max(max_abs, std::fabs(x));
      }
      const int e0 = max_abs > 0 ? std::ilogb(max_abs) : 0;
      const double shift =
          std::ldexp(1.0 + std::ldexp(static_cast<double>(Uniform(rng, 0, 255)), -8),
                     e0 + static_cast<int>(Uniform(rng, -4, 40))) *
          (Chance(rng, 2) ? 1.0 : -1.0);
      for (std::int64_t j = 0; j < c; ++j)
        row[j] = ToBits(RoundInto(FromBits(row[j], t) + shift, t), t);
      break;
    }
    case Mutation::kScaleRow: {
      const int k = Chance(rng, 8) ? static_cast<int>(Uniform(rng, -1100, 1100))
                                   : static_cast<int>(Uniform(rng, -40, 40));
      for (std::int64_t j = 0; j < c; ++j)
        row[j] = ToBits(RoundInto(std::ldexp(FromBits(row[j], t), k), t), t);
      break;
    }
    default: {  // kCopyRow
      if (in->rows < 2) return false;
      const std::int64_t s = Uniform(rng, 0, in->rows - 1);
      std::copy(v->data() + s * c, v->data() + (s + 1) * c, row);
      break;
    }
  }
  return true;
}

void ChangeRows(FuzzInput* in, Rng& rng) {
  const std::int64_t old = in->rows;
  std::int64_t rows = Uniform(rng, 1, kMaxRows);
  if (rows == old) rows = old < kMaxRows ? old + 1 : old - 1;
  const std::size_t c = static_cast<std::size_t>(in->cols);
  for (std::vector<std::uint64_t>* v : {&in->x, &in->dy}) {
    if (v->empty() && c > 0) continue;  // dy absent
    std::vector<std::uint64_t> out;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t src = r < old ? r : Uniform(rng, 0, old - 1);  // new rows copy old ones
      out.insert(out.end(), v->begin() + static_cast<std::ptrdiff_t>(src * c),
                 v->begin() + static_cast<std::ptrdiff_t>((src + 1) * c));
    }
    *v = std::move(out);
  }
  in->rows = rows;
}

void ChangeSignature(FuzzInput* in, Rng& rng, const DecodeConfig& config) {
  Signature next = in->signature;
  if (!config.signatures.empty()) {
    next = config.signatures[static_cast<std::size_t>(
        Uniform(rng, 0, static_cast<std::int64_t>(config.signatures.size()) - 1))];
  } else {
    next = {Chance(rng, 2) ? Norm::kLayerNorm : Norm::kRmsNorm,
            static_cast<DType>(Uniform(rng, 0, 3)), static_cast<DType>(Uniform(rng, 0, 3))};
  }
  ConvertAll(&in->x, in->signature.dtype, next.dtype);
  ConvertAll(&in->dy, in->signature.dtype, next.dtype);
  ConvertAll(&in->gamma, in->signature.param_dtype, next.param_dtype);
  ConvertAll(&in->beta, in->signature.param_dtype, next.param_dtype);
  in->signature = next;
}

}  // namespace

std::string_view MutationName(Mutation m) {
  static constexpr std::array<std::string_view, kMutationCount> kNames = {
      "flip_bit",          "flip_mantissa_bit", "flip_exponent_bit", "special",    "nudge_ulps",
      "make_row_constant", "copy_value_in_row", "shift_row",         "scale_row",  "copy_row",
      "change_d",          "change_cols",       "change_rows",       "change_eps", "change_flags",
      "change_kernel",     "change_signature"};
  return kNames[static_cast<std::size_t>(m)];
}

void SetCols(FuzzInput* in, std::int64_t cols) {
  cols = std::clamp<std::int64_t>(cols, 0, in->d);
  const std::int64_t old = in->cols;
  const DType t = in->signature.dtype, pt = in->signature.param_dtype;
  RebuildRows(&in->x, in->rows, old, cols, ToBits(0.0, t));
  if (in->backward) RebuildRows(&in->dy, in->rows, old, cols, ToBits(1.0, t));
  if (HasGamma(*in)) RebuildRows(&in->gamma, 1, old, cols, ToBits(1.0, pt));
  if (HasBeta(*in)) RebuildRows(&in->beta, 1, old, cols, ToBits(0.0, pt));
  in->cols = cols;
  Normalize(in);
}

void Mutate(FuzzInput* in, Mutation m, Rng& rng, const DecodeConfig& config) {
  Normalize(in);
  switch (m) {
    case Mutation::kFlipBit:
    case Mutation::kFlipMantissaBit:
    case Mutation::kFlipExponentBit:
    case Mutation::kSpecial:
    case Mutation::kNudgeUlps:
      if (!MutateValue(in, m, rng)) SetCols(in, std::min<std::int64_t>(in->d, 8));
      break;
    case Mutation::kMakeRowConstant:
    case Mutation::kCopyValueInRow:
    case Mutation::kShiftRow:
    case Mutation::kScaleRow:
    case Mutation::kCopyRow:
      if (!MutateRow(in, m, rng)) ChangeRows(in, rng);
      break;
    case Mutation::kChangeD: {
      in->d = NewD(in->d, MaxD(config), rng);
      if (in->cols > in->d) SetCols(in, in->d);
      // Usually keep every column explicit when d grows a little.
      if (in->cols < in->d && in->d <= 64 && !Chance(rng, 4)) SetCols(in, in->d);
      break;
    }
    case Mutation::kChangeCols: {
      std::int64_t c = Uniform(rng, 1, in->d);
      if (c == in->cols) c = in->cols > 1 ? in->cols - 1 : std::min<std::int64_t>(in->d, 2);
      SetCols(in, c);
      break;
    }
    case Mutation::kChangeRows:
      ChangeRows(in, rng);
      break;
    case Mutation::kChangeEps:
      in->eps_index = static_cast<std::uint8_t>(
          (in->eps_index + Uniform(rng, 1, EpsTable().size() - 1)) % EpsTable().size());
      break;
    case Mutation::kChangeFlags:
      switch (Uniform(rng, 0, 5)) {
        case 0:
          in->backward = !in->backward;
          break;
        case 5:  // explicit values <-> a random-data family, or another family
          in->random_family =
              in->random_family < 0 || Chance(rng, 2) ? static_cast<int>(Uniform(rng, 0, 3)) : -1;
          break;
        case 1:
          in->affine =
              static_cast<AffineMode>((static_cast<int>(in->affine) + Uniform(rng, 1, 2)) % 3);
          break;
        case 2:
          in->fill = static_cast<FillMode>((static_cast<int>(in->fill) + Uniform(rng, 1, 3)) % 4);
          break;
        case 3:
          in->fill_seed = static_cast<std::uint8_t>(in->fill_seed + Uniform(rng, 1, 255));
          break;
        default:
          in->cross_check_oracle = !in->cross_check_oracle;
          break;
      }
      break;
    case Mutation::kChangeKernel:
      in->kernel_selector = static_cast<std::uint8_t>(in->kernel_selector + Uniform(rng, 1, 255));
      break;
    case Mutation::kChangeSignature:
      ChangeSignature(in, rng, config);
      break;
  }
  Normalize(in);
}

std::size_t MutateBytes(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                        const DecodeConfig& config, const ByteMutator& byte_mutator) {
  Rng rng(seed);
  if (max_size < kHeaderSize || (byte_mutator && Chance(rng, 5))) {
    return byte_mutator ? byte_mutator(data, size, max_size) : size;
  }
  FuzzInput in = DecodeInput(data, size, config);
  // Value and row mutations are the point; structure changes are rarer.
  static constexpr std::array<std::pair<Mutation, int>, kMutationCount> kWeights = {{
      {Mutation::kFlipBit, 6},
      {Mutation::kFlipMantissaBit, 6},
      {Mutation::kFlipExponentBit, 6},
      {Mutation::kSpecial, 6},
      {Mutation::kNudgeUlps, 6},
      {Mutation::kMakeRowConstant, 3},
      {Mutation::kCopyValueInRow, 4},
      {Mutation::kShiftRow, 6},
      {Mutation::kScaleRow, 5},
      {Mutation::kCopyRow, 2},
      {Mutation::kChangeD, 3},
      {Mutation::kChangeCols, 2},
      {Mutation::kChangeRows, 2},
      {Mutation::kChangeEps, 2},
      {Mutation::kChangeFlags, 2},
      {Mutation::kChangeKernel, 2},
      {Mutation::kChangeSignature, 1},
  }};
  int total = 0;
  for (const auto& [m, w] : kWeights) total += w;
  const int n = static_cast<int>(Uniform(rng, 1, 3));
  for (int k = 0; k < n; ++k) {
    int pick = static_cast<int>(Uniform(rng, 0, total - 1));
    for (const auto& [m, w] : kWeights) {
      if (pick < w) {
        Mutate(&in, m, rng, config);
        break;
      }
      pick -= w;
    }
  }
  // Fit max_size by dropping explicit columns (the fill takes over).
  while (EncodedSize(in) > max_size && in.cols > 0) SetCols(&in, in.cols / 2);
  const std::vector<std::uint8_t> out = EncodeInput(in);
  if (out.size() > max_size) return byte_mutator ? byte_mutator(data, size, max_size) : size;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

std::size_t CrossOverBytes(const std::uint8_t* a, std::size_t a_size, const std::uint8_t* b,
                           std::size_t b_size, std::uint8_t* out, std::size_t max_out,
                           unsigned seed, const DecodeConfig& config) {
  Rng rng(seed);
  FuzzInput x = DecodeInput(a, a_size, config);
  FuzzInput y = DecodeInput(b, b_size, config);
  // y's values in x's dtypes, laid out with x's columns.
  ConvertAll(&y.x, y.signature.dtype, x.signature.dtype);
  ConvertAll(&y.dy, y.signature.dtype, x.signature.dtype);
  ConvertAll(&y.gamma, y.signature.param_dtype, x.signature.param_dtype);
  ConvertAll(&y.beta, y.signature.param_dtype, x.signature.param_dtype);
  y.signature = x.signature;
  y.d = std::max(y.d, x.cols);
  y.affine = x.affine;
  y.backward = x.backward;
  Normalize(&y);
  SetCols(&y, x.cols);
  Normalize(&x);
  const std::size_t c = static_cast<std::size_t>(x.cols);
  switch (Uniform(rng, 0, 2)) {
    case 0:  // some rows from y
      for (std::int64_t r = 0; r < std::min(x.rows, y.rows); ++r) {
        if (Chance(rng, 2)) continue;
        std::copy(y.x.begin() + static_cast<std::ptrdiff_t>(r * c),
                  y.x.begin() + static_cast<std::ptrdiff_t>((r + 1) * c),
                  x.x.begin() + static_cast<std::ptrdiff_t>(r * c));
      }
      break;
    case 1:  // a column range from y in every row
      if (c > 0) {
        const std::size_t from = static_cast<std::size_t>(Uniform(rng, 0, x.cols - 1));
        const std::size_t to =
            static_cast<std::size_t>(Uniform(rng, static_cast<std::int64_t>(from), x.cols - 1));
        for (std::int64_t r = 0; r < std::min(x.rows, y.rows); ++r) {
          for (std::size_t j = from; j <= to; ++j) x.x[r * c + j] = y.x[r * c + j];
        }
      }
      break;
    default:  // y's parameters and dy
      x.gamma = y.gamma;
      x.beta = y.beta;
      if (x.rows == y.rows) x.dy = y.dy;
      break;
  }
  Normalize(&x);
  while (EncodedSize(x) > max_out && x.cols > 0) SetCols(&x, x.cols / 2);
  const std::vector<std::uint8_t> bytes = EncodeInput(x);
  if (bytes.size() > max_out) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace lnv::fuzz
