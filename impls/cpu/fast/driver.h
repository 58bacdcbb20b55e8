// Threading and argument checks of the fast CPU kernels: the part that is
// the same for every SIMD target, kept out of the Highway translation units
// (no OpenMP inside per-target code).
//
// Forward: rows are split into one contiguous range per OpenMP thread; each
// row is computed by itself, so y, mean and rstd do not depend on the thread
// count.
//
// Backward: dgamma and dbeta are sums over rows. The rows are cut into
// RowBlocks(rows) contiguous blocks, a number that depends on `rows` only;
// each block is summed serially, in row order, into its own fp32 partial
// arrays by one thread, and the partials are merged in a fixed balanced
// binary tree over the blocks, still in fp32, then rounded once into the
// param dtype. So dgamma/dbeta are bitwise identical for every thread count
// (and, like dx, deterministic). Their rounding chain is at most rows - 1,
// which the harness's dgamma/dbeta model assumes for any order.
#ifndef LNV_IMPLS_CPU_FAST_DRIVER_H_
#define LNV_IMPLS_CPU_FAST_DRIVER_H_

#include <cstdint>

#include "impls/api.h"

namespace lnv::fast {

// Return codes (the ABI fixes only 0 = success); as the scalar kernels'.
inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs = 1;
inline constexpr int kOutOfMemory = 2;

// Rows [row_begin, row_end) of a forward call.
using ForwardRowsFn = void (*)(const ForwardArgs& args, std::int64_t row_begin,
                               std::int64_t row_end);
// Rows [row_begin, row_end) of a backward call: writes dx and ADDS each row's
// dy * xhat into dgamma[0, d) and dy into dbeta[0, d) (fp32 partials of
// PaddedLength(d) floats, zeroed by the caller; nullptr when not wanted).
using BackwardRowsFn = void (*)(const BackwardArgs& args, std::int64_t row_begin,
                                std::int64_t row_end, float* dgamma, float* dbeta);

// The most row blocks of a backward call: the partials take
// 2 * RowBlocks * PaddedLength(d) floats, and the backward runs on at most
// this many threads.
inline constexpr std::int64_t kMaxRowBlocks = 32;

constexpr std::int64_t RowBlocks(std::int64_t rows) {
  return rows < kMaxRowBlocks ? rows : kMaxRowBlocks;
}

// d rounded up to a multiple of 16 floats (the widest vector): partial arrays
// are read and written in whole vectors.
constexpr std::int64_t PaddedLength(std::int64_t d) { return (d + 15) / 16 * 16; }

// Below this many elements a call runs on the calling thread alone (a
// parallel region costs more than it saves).
inline constexpr std::int64_t kMinParallelElements = 1 << 15;

// Checks the arguments (as the scalar kernels do: null required pointers,
// d < 1, rows < 0, rows * d overflowing, a beta for RMSNorm), then runs
// `rows_fn` over all rows.
int RunForward(const ForwardArgs* args, Norm norm, ForwardRowsFn rows_fn);

// The same for the backward, then merges the partials and stores dgamma /
// dbeta in `param_dtype`. Returns kOutOfMemory if the partials cannot be
// allocated.
int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn);

// RunBackward with an explicit number of row blocks: only for the tests,
// which show that the block count (the summation order) does change
// dgamma's bits, so that thread-count independence is not vacuous.
int RunBackwardWithBlocks(const BackwardArgs* args, Norm norm, DType param_dtype,
                          BackwardRowsFn rows_fn, std::int64_t blocks);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_DRIVER_H_
