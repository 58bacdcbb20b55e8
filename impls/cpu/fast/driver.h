// Threading and argument checks of the fast CPU kernels: the part that is
// the same for every SIMD target, kept out of the Highway translation units
// (no OpenMP inside per-target code).
//
// Work is handed out dynamically: each OpenMP thread of a call runs the row
// kernel once, and the kernel takes items (ranges of rows) from a shared
// WorkQueue until none is left. On a machine shared with other work a
// descheduled thread then delays a call by one item, not by a fixed half of
// it. Each thread owns a fixed contiguous share of the items and takes its
// own first, then what the others have not started: with no one delayed,
// a thread computes the same rows on every call, so the rows a call writes
// stay in that core's cache for the next (handing every item to whichever
// thread asks first moves a cache-resident call's rows between the cores'
// caches from call to call). Which thread computes an item never changes a
// bit of the result:
//
// Forward: items are chunks of about kChunkElements elements; each row is
// computed by itself, so y, mean and rstd do not depend on the thread count
// or on which thread ran it.
//
// Backward: dgamma and dbeta are sums over rows. The rows are cut into
// RowBlocks(rows) contiguous blocks, a number that depends on `rows` only;
// each block is summed serially, in row order, into its own fp32 partial
// arrays, and the partials are merged in a fixed balanced binary tree over
// the blocks, still in fp32, then rounded once into the param dtype. So
// dgamma/dbeta are bitwise identical for every thread count (and, like dx,
// deterministic). Their rounding chain is at most rows - 1, which the
// harness's dgamma/dbeta model assumes for any order. The items are pieces
// of the tree (aligned subtrees of up to kMaxPieceBlocks blocks) that their
// thread merges as it goes; after the rows, the threads take strips of
// columns and merge the pieces there (partials.h).
#ifndef LNV_IMPLS_CPU_FAST_DRIVER_H_
#define LNV_IMPLS_CPU_FAST_DRIVER_H_

#include <atomic>
#include <cstdint>

#include "impls/api.h"
#include "impls/cpu/fast/partials.h"

namespace lnv::fast {

// Return codes (the ABI fixes only 0 = success); as the scalar kernels'.
inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs = 1;
inline constexpr int kOutOfMemory = 2;

// First element of part `part` of `parts` near-equal contiguous parts of n.
constexpr std::int64_t SplitPoint(std::int64_t n, std::int64_t parts, std::int64_t part) {
  return part * (n / parts) + (part < n % parts ? part : n % parts);
}

// The blocks of the piece that starts at block p of a range ending at `end`:
// the largest power of two n <= max_blocks with p % n == 0 and p + n <= end
// (an aligned subtree of the backward's merge tree).
constexpr std::int64_t PieceBlocks(std::int64_t p, std::int64_t end, std::int64_t max_blocks) {
  std::int64_t n = 1;
  while (2 * n <= max_blocks && p % (2 * n) == 0 && p + 2 * n <= end) n *= 2;
  return n;
}

// First block of share s of `shares` (s = shares: blocks): SplitPoint,
// rounded down to an even block when pieces may hold two blocks, so that
// blocks 2k and 2k + 1 always share a piece whatever the thread count. (The
// backward's one-row blocks go through a pass in pairs, or in fours where a
// piece holds an aligned four; shares need not start at a multiple of 4, so
// which blocks share a pass may depend on the thread count. The bits do
// not: every addition is the merge tree's own.)
constexpr std::int64_t ShareBegin(std::int64_t blocks, int shares, int s, std::int64_t max_piece) {
  const std::int64_t p = SplitPoint(blocks, shares, s);
  return max_piece > 1 && s < shares ? p - p % 2 : p;
}

// An item: blocks [block_begin, block_end), which hold rows [row_begin,
// row_end).
struct WorkItem {
  std::int64_t block_begin = 0;
  std::int64_t block_end = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
};

// `rows` rows cut into `blocks` near-equal contiguous blocks, handed out
// once each, in pieces of at most max_piece blocks (PieceBlocks). The blocks
// are cut into `threads` contiguous shares (at most kMaxShares; ShareBegin;
// no piece spans two); OpenMP thread t takes pieces from share t first, then
// from shares t + 1, t + 2, ... in turn.
class WorkQueue {
 public:
  WorkQueue(std::int64_t rows, std::int64_t blocks, int threads = 1, std::int64_t max_piece = 1);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // False when every block has been taken. Safe from any thread.
  bool Next(WorkItem* item);
  int shares() const { return shares_; }

  static constexpr int kMaxShares = 64;

 private:
  // One per cache line: a thread taking its own pieces writes only its line.
  struct alignas(64) Share {
    std::atomic<std::int64_t> next{0};
    std::int64_t end = 0;
  };
  std::int64_t rows_;
  std::int64_t blocks_;
  std::int64_t max_piece_;
  int shares_;
  Share share_[kMaxShares];
};

// One thread's share of a forward call: takes items from `queue` until it is
// empty. `scratch` holds kParamScratchArrays * PaddedLength(d) floats for
// this thread alone (the row kernels keep fp32 copies of gamma and beta
// there).
using ForwardRowsFn = void (*)(const ForwardArgs& args, WorkQueue& queue, float* scratch);
// The same for a backward call: writes dx, sums each row's dy * xhat and
// dy into the partials of its block, in row order, and merges the blocks of
// each piece (partials.h, Partials::Into).
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

// The rule every fast kernel uses to choose streaming stores (the Highway
// ones in simd_row-inl.h, the native AVX512_BF16 forward), except for the
// LayerNorm forwards' short rows (StoresShortRowsInPlace).
// Rows shorter than this are stored the ordinary way: their unaligned head
// and tail lines would cost more than streaming saves.
inline constexpr std::int64_t kMinStreamedRowBytes = 1024;
inline constexpr std::uintptr_t kCacheLine = 64;

// Streaming stores pay when the output would leave the last-level cache
// before anyone reads it: when the call's rows (inputs and outputs) do not
// fit in it (StreamingFootprintBytes).
inline bool UseStreamingStores(std::int64_t footprint_bytes, std::int64_t row_bytes) {
  return footprint_bytes > StreamingFootprintBytes() && row_bytes >= kMinStreamedRowBytes;
}

// Writes whose stores are spread between other loads and stores, so that
// their non-temporal stores never come in a burst, gain from streaming from
// half that footprint:
//   * the backward writes dx a vector at a time between the loads and stores
//     of the dgamma/dbeta partial sums (bench_kernels, bf16 at 2^22
//     elements, rows of x, dy and dx taking exactly StreamingFootprintBytes:
//     1.01-1.08x oneDNN without streaming, 1.13-1.25x with, d = 768, fp32
//     unchanged); the RMSNorm backward writes dx the same way;
//   * the bf16 LayerNorm forward writes two rows at a time, their lines
//     alternating, between the loads of both rows (bench_kernels, 2^22
//     elements, 2 threads: 1.08-1.20x oneDNN without streaming, 1.23-1.30x
//     with, d = 768 and 4096). With one row at a time it lost 20 % when
//     streamed at that size. The native AVX512_BF16 forward
//     (avx512bf16_layer_norm.h) follows the same rule, except for its short
//     rows past a core's L2, which it never streams.
inline bool UseStreamingStoresForSpreadWrites(std::int64_t footprint_bytes,
                                              std::int64_t row_bytes) {
  return footprint_bytes > StreamingFootprintBytes() / 2 && row_bytes >= kMinStreamedRowBytes;
}

// The bytes of one core's own caches: its L1d and its L2 (32 KiB and 1 MiB
// when the C library cannot tell).
std::int64_t CoreL1dBytes();
std::int64_t CoreL2Bytes();

// Rows short enough that the LayerNorm forwards store them the ordinary way
// at every size, where UseStreamingStores would stream them: rows of which
// four fit in half a core's L1d (6 KiB with 48 KiB, 4 KiB with 32 KiB). A
// forward reads such a row three times from L1 and then writes it in a
// burst a few dozen lines long. Streamed, those bursts measured slower than
// ordinary stores, which the cache writes back as their lines are evicted
// (no hardware counters were at hand to say why). Measured on 2-vCPU AMD
// Zen 5 guests (48 KiB L1d, 1 MiB L2; bench/README.md):
//   * the native AVX512_BF16 forward, which also prefetches y for writing
//     there (Avx512Bf16PrefetchesOutputs): bf16 at d = 768, 64 MiB,
//     fast/oneDNN 0.90-0.96 streamed, 1.02-1.13 not;
//   * the Highway fp32 forward, one row at a time: at d = 768 (3 KiB rows)
//     the kernel streaming and not, alternated call by call in one loop,
//     took 0.77-0.87 of the streamed time not streaming at 256 and 512 MiB
//     and 0.80-0.92 and 0.98-1.05 in two runs at 1024 MiB (two threads;
//     0.83-0.87 on one); at d = 4096 (16 KiB rows) 1.03-1.07 and
//     0.91-1.05 at 1024 MiB, no gain, so long rows still stream.
inline bool StoresShortRowsInPlace(std::int64_t row_bytes) {
  return 4 * row_bytes <= CoreL1dBytes() / 2;
}

// Outputs are worth prefetching for writing (PREFETCHW) when they are
// stored the ordinary way and the call's rows outgrow a core's L2: then the
// lines a thread writes next are not in it, and each store would wait for
// its line. Two threads, alternated rounds, fast/oneDNN (bench/README.md):
//   * the native AVX512_BF16 forward, bf16, d = 768, 64 MiB (past the cache
//     but short of streaming then): 0.79-0.81 without, 0.96-0.99 with; it
//     adds a limit on the row length, and prefetches instead of streaming
//     (Avx512Bf16PrefetchesOutputs);
//   * the LayerNorm backward at 16 and 64 MiB, every goal case: the bf16
//     one at d = 768, 64 MiB, 0.96 and 1.07 without, 1.19 and 1.21 with.
// Where the outputs are still in the L3 it costs a little (8 MiB on a guest
// that reaches 32 MiB of L3: up to 16 % in the backward); the L3 a core
// reaches is not what the C library reports on such guests, so the rule
// does not try to tell.
inline bool PrefetchOutputsForWriting(std::int64_t footprint_bytes, bool streaming) {
  return !streaming && footprint_bytes > CoreL2Bytes();
}

// The next rows' inputs are worth prefetching into L2, while these rows
// are worked on, when a thread's share of the call's rows (`threads` of
// them) outgrows its core's L2. Where it fits, the next rows are there
// already and the prefetches only cost issue slots (their address
// arithmetic a vector), and from the L3 the hardware's prefetchers bring
// them in time. (The L3 a core reaches is not what the C library reports
// on some guests, so the rule does not use it.) Measured with bench_kernels
// (bench/README.md):
//   * an AMD Zen 5 guest (1 MiB L2), the bf16 LayerNorm backward without
//     them, against the Highway kernel with them in the same process, one
//     and two threads: 4-9 % faster at 1 MiB, 18-29 % slower at 64 MiB;
//   * an AMD Zen 3 guest (AVX2 only, 512 KiB L2), two threads at 1 MiB,
//     fp32 at d = 768, fast/oneDNN: the backward 0.96 with them and 1.10
//     without, the one-row forward 0.67 and 1.12 (with two more changes,
//     TreeSums' two blocks and StoreRanges' unrolling);
//   * past the cache they paid in the fp32 forward (a Zen 5 guest,
//     LayerNormStats: 11 % at d = 4096, 1024 MiB).
// Used by the LayerNorm backward and the forward's rows taken one at a
// time; the native bf16 forward without its in-cache prefetches measured
// mixed (d = 768 lost, d = 4096 gained).
inline bool PrefetchNextRows(std::int64_t footprint_bytes, int threads) {
  return footprint_bytes > threads * CoreL2Bytes();
}

// The line of p, to be written: PREFETCHW on x86 (every CPU the fast
// kernels run on has it but the oldest AVX2 ones, which execute it as a
// no-op; inline assembly, as no kernel's target attributes name it).
template <typename T>
inline void PrefetchForWriting(T* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" ::"m"(*reinterpret_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

// Checks the arguments (as the scalar kernels do: null required pointers,
// d < 1, rows < 0, rows * d overflowing, a beta for RMSNorm), then runs
// `rows_fn` on the call's threads.
int RunForward(const ForwardArgs* args, Norm norm, ForwardRowsFn rows_fn);

// The same for the backward, then merges the partials and stores dgamma /
// dbeta in `param_dtype` with `finish`, pieces of up to kMaxPieceBlocks
// blocks (nullptr: MergeColumnsReference, pieces of one block). Returns
// kOutOfMemory if scratch memory cannot be allocated.
int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn,
                FinishColumnsFn finish = nullptr);

// RunBackward with an explicit number of row blocks: only for the tests,
// which show that the block count (the summation order) does change
// dgamma's bits, so that thread-count independence is not vacuous.
int RunBackwardWithBlocks(const BackwardArgs* args, Norm norm, DType param_dtype,
                          BackwardRowsFn rows_fn, std::int64_t blocks,
                          FinishColumnsFn finish = nullptr);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_DRIVER_H_
