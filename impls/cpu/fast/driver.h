// Threading and argument checks of the fast CPU kernels: the part that is
// the same for every SIMD target, kept out of the Highway translation units
// (no OpenMP inside per-target code).
//
// Work is handed out dynamically: each OpenMP thread of a call runs the row
// kernel once, and the kernel takes items (ranges of rows) from a shared
// WorkQueue until none is left. On a machine shared with other work a
// descheduled thread then delays a call by one item, not by a fixed half of
// it. Which thread computes an item never changes a bit of the result:
//
// Forward: items are chunks of about kChunkElements elements; each row is
// computed by itself, so y, mean and rstd do not depend on the thread count
// or on which thread ran it.
//
// Backward: dgamma and dbeta are sums over rows. The rows are cut into
// RowBlocks(rows) contiguous blocks (the items), a number that depends on
// `rows` only; each block is summed serially, in row order, into its own fp32
// partial arrays, and the partials are merged in a fixed balanced binary tree
// over the blocks, still in fp32, then rounded once into the param dtype. So
// dgamma/dbeta are bitwise identical for every thread count (and, like dx,
// deterministic). Their rounding chain is at most rows - 1, which the
// harness's dgamma/dbeta model assumes for any order.
#ifndef LNV_IMPLS_CPU_FAST_DRIVER_H_
#define LNV_IMPLS_CPU_FAST_DRIVER_H_

#include <atomic>
#include <cstdint>

#include "impls/api.h"

namespace lnv::fast {

// Return codes (the ABI fixes only 0 = success); as the scalar kernels'.
inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs = 1;
inline constexpr int kOutOfMemory = 2;

// Item `index` covers rows [row_begin, row_end).
struct WorkItem {
  std::int64_t index = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
};

// `items` near-equal contiguous ranges of `rows` rows, each handed out once.
class WorkQueue {
 public:
  WorkQueue(std::int64_t rows, std::int64_t items) : rows_(rows), items_(items) {}
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // False when every item has been taken. Safe from any thread.
  bool Next(WorkItem* item);
  std::int64_t items() const { return items_; }

 private:
  std::int64_t rows_;
  std::int64_t items_;
  std::atomic<std::int64_t> next_{0};
};

// The backward's fp32 partial sums: per item, a dgamma and a dbeta array of
// PaddedLength(d) floats (nullptr when not wanted).
struct Partials {
  float* base = nullptr;
  std::int64_t padded = 0;
  bool dgamma = false;
  bool dbeta = false;
  float* Dgamma(std::int64_t item) const;
  float* Dbeta(std::int64_t item) const;
  // Zeroes item's arrays (the row kernel calls it before adding into them).
  void Zero(std::int64_t item) const;
};

// One thread's share of a forward call: takes items from `queue` until it is
// empty. `scratch` holds kParamScratchArrays * PaddedLength(d) floats for
// this thread alone (the row kernels keep fp32 copies of gamma and beta
// there).
using ForwardRowsFn = void (*)(const ForwardArgs& args, WorkQueue& queue, float* scratch);
// The same for a backward call: writes dx and ADDS each row's dy * xhat into
// partials.Dgamma(item) and dy into partials.Dbeta(item), after zeroing them.
using BackwardRowsFn = void (*)(const BackwardArgs& args, WorkQueue& queue,
                                const Partials& partials, float* scratch);

inline constexpr std::int64_t kParamScratchArrays = 2;

// Forward items hold about this many elements (whole rows, at least one).
inline constexpr std::int64_t kChunkElements = std::int64_t{1} << 15;

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

// Calls whose rows (inputs and outputs) take more bytes than this write
// their outputs with streaming stores: half the last-level cache (the other
// half is left to whatever else shares it), 16 MiB when the C library cannot
// tell its size.
std::int64_t StreamingFootprintBytes();

// Overrides StreamingFootprintBytes() (tests: streaming small calls);
// a negative value restores the default.
void SetStreamingFootprintBytesForTest(std::int64_t bytes);

// Checks the arguments (as the scalar kernels do: null required pointers,
// d < 1, rows < 0, rows * d overflowing, a beta for RMSNorm), then runs
// `rows_fn` on the call's threads.
int RunForward(const ForwardArgs* args, Norm norm, ForwardRowsFn rows_fn);

// The same for the backward, then merges the partials and stores dgamma /
// dbeta in `param_dtype`. Returns kOutOfMemory if scratch memory cannot be
// allocated.
int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn);

// RunBackward with an explicit number of row blocks: only for the tests,
// which show that the block count (the summation order) does change
// dgamma's bits, so that thread-count independence is not vacuous.
int RunBackwardWithBlocks(const BackwardArgs* args, Norm norm, DType param_dtype,
                          BackwardRowsFn rows_fn, std::int64_t blocks);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_DRIVER_H_
