// The structure-aware mutator behind LLVMFuzzerCustomMutator: it decodes an
// input (fuzz_input.h), changes it the way a numerics bug hunter would (a bit
// of one value, a special value, a whole row shifted by a constant or scaled
// by a power of two, a row made constant, d or eps changed, a row copied),
// and encodes it again. Generic byte mutations (libFuzzer's own, which also
// insert dictionary entries) stay in the mix through a callback, so the
// library needs no libFuzzer to build or test.
#ifndef LNV_FUZZ_MUTATOR_H_
#define LNV_FUZZ_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string_view>

#include "fuzz/fuzz_input.h"

namespace lnv::fuzz {

enum class Mutation {
  kFlipBit,  // any bit of one value
  kFlipMantissaBit,
  kFlipExponentBit,
  kSpecial,          // a value becomes +-0, +-inf, NaN, a subnormal, the max, ...
  kNudgeUlps,        // a value moves by a few ulps (its bit pattern +- 1..4)
  kMakeRowConstant,  // every explicit value of a row becomes one of them
  kCopyValueInRow,   // one value is copied to a few other columns of its row
  kShiftRow,         // a constant (often far larger than the spread) added to a row
  kScaleRow,         // a row multiplied by 2^k
  kCopyRow,          // a row becomes another row
  kChangeD,
  kChangeCols,
  kChangeRows,
  kChangeEps,
  kChangeFlags,  // backward, affine mode, fill mode and seed, oracle cross-check
  kChangeKernel,
  kChangeSignature,  // another norm/dtype; values converted (rounded once)
};
inline constexpr int kMutationCount = static_cast<int>(Mutation::kChangeSignature) + 1;
std::string_view MutationName(Mutation m);

// Applies one mutation; keeps the input normalized (Normalize()). A mutation
// that does not apply (e.g. a row operation on an input without values)
// changes something else instead, so the input always changes or stays valid.
void Mutate(FuzzInput* in, Mutation m, std::mt19937_64& rng, const DecodeConfig& config);

// Rebuilds the explicit arrays for a new column count: fewer columns
// truncate each row, more columns repeat the row's values (neutral values
// when it has none).
void SetCols(FuzzInput* in, std::int64_t cols);

// libFuzzer's LLVMFuzzerMutate, or a stand-in in tests: mutates data[0, size)
// in place within max_size and returns the new size.
using ByteMutator = std::function<std::size_t(std::uint8_t*, std::size_t, std::size_t)>;

// LLVMFuzzerCustomMutator: one to three structural mutations (about one call
// in five goes to byte_mutator instead), re-encoded into data within max_size
// (dropping explicit columns if needed). Deterministic in seed.
std::size_t MutateBytes(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                        const DecodeConfig& config, const ByteMutator& byte_mutator);

// LLVMFuzzerCustomCrossOver: the header and rows of one input with rows,
// columns or parameter arrays of the other (converted to the first's dtypes).
std::size_t CrossOverBytes(const std::uint8_t* a, std::size_t a_size, const std::uint8_t* b,
                           std::size_t b_size, std::uint8_t* out, std::size_t max_out,
                           unsigned seed, const DecodeConfig& config);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_MUTATOR_H_
