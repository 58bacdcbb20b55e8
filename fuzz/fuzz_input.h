// The fuzz_ln input format (version 2): a fixed 10-byte header followed by
// the raw bit patterns of the values, little-endian, in the dtype's width.
// Every byte string decodes to a valid input: missing header bytes read as 0,
// a value region that is too short shrinks the number of explicit columns.
//
//   byte 0     kernel selector: s % n picks one of the n selected kernels
//              that can run the case. (Version 1 read 0 as every one of them:
//              inputs that judged every kernel found more features, so the
//              corpus filled with them and an input cost six kernel runs on
//              average; fuzz/README.md, Speed.)
//   byte 1     bit 0 norm (0 layer_norm, 1 rms_norm); bits 1-2 x dtype and
//              bits 3-4 param dtype (0 f32, 1 f16, 2 bf16, 3 f64: the ABI's
//              lnv_dtype); bit 5 backward (dy present); bits 6-7 affine mode
//              (0 none, 1 gamma only, 2 and 3 gamma and beta; RMSNorm has no
//              beta).
//   bytes 2-3  d: a raw value in [1, max_d] is d itself, anything else wraps
//              into that range (max_d = LNV_FUZZ_MAX_D, default 4096).
//   bytes 4-5  explicit columns c: 0 means all d; else min(raw, d).
//   byte 6     rows - 1, modulo kMaxRows.
//   byte 7     eps: index into EpsTable(), modulo its size.
//   byte 8     bits 0-1 fill mode (FillMode); bit 2 cross-check the oracle's
//              two backends on this input (exact paths, small inputs only;
//              fuzz_ln samples one flagged input in kCrossCheckEvery by its
//              hash, fuzz_ln_replay checks every one);
//              bit 3 random data: the values are a random-data family's
//              (bits 4-5 pick it from kRandomDataFamilies) with the header's
//              norm, dtypes, d, rows, eps, backward and affine flags, seeded
//              by byte 9 and the explicit x values, and judged as ln_check
//              judges that family (the statistical tier where its model
//              holds, HoldsTheTypicalModel).
//   byte 9     fill seed.
//   then       x: rows x c values (row-major), gamma: c, beta: c, dy: rows x c
//              (each array present as the flags say), in the x dtype for x and
//              dy and the param dtype for gamma and beta.
// Columns c..d-1 of each array are filled from that array's explicit
// columns in the same row (FillMode), so a short input can drive a long row
// and keep its structure (a large mean, a constant row, a row of specials).
//
// The norm and dtypes are snapped to a signature that some selected kernel
// has (the first with the same norm and x dtype, else the same x dtype, else
// any), so that an input is never wasted on a combination nobody runs; the
// values are then read in the snapped widths.
#ifndef LNV_FUZZ_FUZZ_INPUT_H_
#define LNV_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "impls/api.h"

namespace lnv::fuzz {

inline constexpr std::size_t kHeaderSize = 10;
inline constexpr std::int64_t kMaxRows = 8;
inline constexpr std::int64_t kDefaultMaxD = 4096;
inline constexpr std::int64_t kMaxMaxD = 65535;  // d is a 16-bit field

enum class AffineMode : std::uint8_t { kNone = 0, kGamma = 1, kGammaBeta = 2 };

// The random-data families (harness/families.h, IsRandomDataFamily) whose
// shape follows d and rows: what byte 8's bits 4-5 pick for a random-data
// input.
inline constexpr const char* kRandomDataFamilies[4] = {"standard_normal", "heavy_tails",
                                                       "two_halves", "rows_differ"};

// How columns c..d-1 are made from the explicit columns 0..c-1 of the same row.
enum class FillMode : std::uint8_t {
  kCycle = 0,    // column j copies column j mod c
  kScatter = 1,  // column j copies a pseudo-random explicit column
  kScatterLowBits =
      2,  // as kScatter, finite nonzero copies get their 2 lowest mantissa bits scrambled
  kScatterHalfMantissa = 3,  // as kScatter, with the lower half of the mantissa scrambled
};

// The eps values an input can choose: the common ones (1e-5, 1e-6, 1e-12),
// ones that dominate or vanish next to sigma^2, and binary32's extremes.
std::span<const float> EpsTable();

// What a kernel runs on: a kernel's norm and dtypes.
struct Signature {
  Norm norm = Norm::kLayerNorm;
  DType dtype = DType::kF32;
  DType param_dtype = DType::kF32;
  bool operator==(const Signature&) const = default;
};

struct DecodeConfig {
  std::int64_t max_d = kDefaultMaxD;
  // The signatures that inputs snap to; empty: no snapping.
  std::vector<Signature> signatures;
};

// A decoded input: the header's fields (resolved) and the explicit values,
// as bit patterns of their dtype in the low bits.
struct FuzzInput {
  std::uint8_t kernel_selector = 0;
  Signature signature;
  bool backward = false;
  AffineMode affine = AffineMode::kNone;
  std::int64_t d = 1;
  std::int64_t cols = 0;  // explicit columns, 0..d (0 only when no value fits)
  std::int64_t rows = 1;
  std::uint8_t eps_index = 0;
  FillMode fill = FillMode::kCycle;
  bool cross_check_oracle = false;
  // -1: the explicit values and the fill; 0..3: kRandomDataFamilies[i].
  int random_family = -1;
  std::uint8_t fill_seed = 0;
  std::vector<std::uint64_t> x;      // rows * cols
  std::vector<std::uint64_t> gamma;  // cols, when affine != kNone
  std::vector<std::uint64_t> beta;   // cols, when affine == kGammaBeta and layer_norm
  std::vector<std::uint64_t> dy;     // rows * cols, when backward
};

bool HasGamma(const FuzzInput& in);
bool HasBeta(const FuzzInput& in);

// Bytes -> input. Never fails.
FuzzInput DecodeInput(const std::uint8_t* data, std::size_t size, const DecodeConfig& config);

// Input -> bytes (canonical: decoding them gives `in` back, given the same
// config, when in.d <= max_d).
std::vector<std::uint8_t> EncodeInput(const FuzzInput& in);

// The size EncodeInput would return.
std::size_t EncodedSize(const FuzzInput& in);

// Makes the arrays' sizes agree with rows, cols and the flags (drops extra
// values, pads with the array's neutral value: x 0, gamma 1, beta 0, dy 1).
void Normalize(FuzzInput* in);

// The full case: explicit columns plus the fill, or the random-data
// family's case (provenance.family names it). kernel is "-".
Case Materialize(const FuzzInput& in);

// The family seed of a random-data input: the fill seed and the explicit x
// values (FNV-1a), so that mutating either draws another case.
std::uint64_t RandomDataSeed(const FuzzInput& in);

// A case -> input with at most max_cols explicit columns (the rest by
// kScatterLowBits fill). Fails (returns false, sets *error) when the case's
// eps is not in EpsTable(), rows > kMaxRows or d > kMaxMaxD.
bool InputFromCase(const Case& c, std::int64_t max_cols, FuzzInput* out, std::string* error);

// Bit patterns <-> values. Bits of a dtype are exact as doubles; ToBits
// requires a value representable in the dtype (NaNs map to the dtype's NaN
// with the same sign and as much payload as fits).
double FromBits(std::uint64_t bits, DType t);
std::uint64_t ToBits(double v, DType t);

// Layout of a dtype's bit pattern.
struct BitLayout {
  int width;     // 16, 32 or 64
  int mantissa;  // stored mantissa bits
  int exponent;  // exponent bits
};
BitLayout LayoutOf(DType t);

// The special bit patterns of a dtype: +-0, +-inf, quiet and signalling NaN,
// the smallest and largest subnormals, the smallest normal, the largest
// finite, +-1 and the values around 1 and 2^p, where a row's mean starts to
// swallow its spread. Shared by the mutator and the dictionary.
std::vector<std::uint64_t> SpecialBits(DType t);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_FUZZ_INPUT_H_
