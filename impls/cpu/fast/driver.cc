#include "impls/cpu/fast/driver.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <new>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "impls/dtype.h"

namespace lnv::fast {
namespace {

bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  if (d < 1 || rows < 0) return false;
  return rows <= std::numeric_limits<std::int64_t>::max() / d;
}

// The threads a call runs on: all of OpenMP's when it is large enough.
int ThreadsFor(std::int64_t rows, std::int64_t d) {
#ifdef _OPENMP
  return rows > 1 && rows * d >= kMinParallelElements ? omp_get_max_threads() : 1;
#else
  (void)rows;
  (void)d;
  return 1;
#endif
}

int ThisThread() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// Grow, never shrink: one allocation per calling thread, not per call (the
// partials of a large d would otherwise be page-faulted in on every call).
std::vector<float>& PartialsScratch() {
  thread_local std::vector<float> scratch;
  return scratch;
}
std::vector<float>& ParamScratch() {
  thread_local std::vector<float> scratch;
  return scratch;
}

// n floats of `scratch`, grown if need be; nullptr when that fails.
float* Reserve(std::vector<float>& scratch, std::int64_t n) {
  try {
    if (scratch.size() < static_cast<std::size_t>(n)) scratch.resize(static_cast<std::size_t>(n));
    return scratch.data();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// Runs body(thread index) once on each of `threads` threads.
template <typename Body>
void OnThreads(int threads, const Body& body) {
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(ThisThread());
    return;
  }
#endif
  (void)threads;
  body(0);
}

// OnThreads(first), then, once every thread has finished it, second() on
// each thread: one parallel region with a barrier (lexically inside it, so
// it never binds to a caller's enclosing region).
template <typename First, typename Second>
void OnThreadsInTwoPhases(int threads, const First& first, const Second& second) {
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      first(ThisThread());
#pragma omp barrier
      second();
    }
    return;
  }
#endif
  (void)threads;
  first(0);
  second();
}

// dgamma / dbeta of a call without rows: empty sums, zeros.
void StoreZeros(const BackwardArgs& args, DType param_dtype) {
  for (std::int64_t j = 0; j < args.d; ++j) {
    if (args.dgamma != nullptr) StoreFromFloat(args.dgamma, param_dtype, j, 0.f);
    if (args.dbeta != nullptr) StoreFromFloat(args.dbeta, param_dtype, j, 0.f);
  }
}

}  // namespace

namespace {
std::atomic<std::int64_t> g_streaming_override{-1};

// sysconf's names of the caches' sizes (-1 where the C library has none),
// and the sizes assumed when it cannot tell.
#ifdef _SC_LEVEL1_DCACHE_SIZE
constexpr int kL1dName = _SC_LEVEL1_DCACHE_SIZE;
constexpr int kL2Name = _SC_LEVEL2_CACHE_SIZE;
constexpr int kL3Name = _SC_LEVEL3_CACHE_SIZE;
#else
constexpr int kL1dName = -1;
constexpr int kL2Name = -1;
constexpr int kL3Name = -1;
#endif
constexpr std::int64_t kAssumedL1dBytes = std::int64_t{32} << 10;
constexpr std::int64_t kAssumedL2Bytes = std::int64_t{1} << 20;
constexpr std::int64_t kAssumedL3Bytes = std::int64_t{32} << 20;

std::int64_t CacheBytes(int name, std::int64_t assumed) {
  const long bytes = name >= 0 ? sysconf(name) : -1;
  return bytes > 0 ? static_cast<std::int64_t>(bytes) : assumed;
}
}  // namespace

std::int64_t StreamingFootprintBytes() {
  static const std::int64_t bytes = CacheBytes(kL3Name, kAssumedL3Bytes) / 2;
  const std::int64_t override_bytes = g_streaming_override.load(std::memory_order_relaxed);
  return override_bytes >= 0 ? override_bytes : bytes;
}

std::int64_t CoreL1dBytes() {
  static const std::int64_t bytes = CacheBytes(kL1dName, kAssumedL1dBytes);
  return bytes;
}

std::int64_t CoreL2Bytes() {
  static const std::int64_t bytes = CacheBytes(kL2Name, kAssumedL2Bytes);
  return bytes;
}

void SetStreamingFootprintBytesForTest(std::int64_t bytes) {
  g_streaming_override.store(bytes, std::memory_order_relaxed);
}

WorkQueue::WorkQueue(std::int64_t rows, std::int64_t blocks, int threads, std::int64_t max_piece)
    : rows_(rows),
      blocks_(blocks),
      max_piece_(max_piece),
      shares_(static_cast<int>(std::clamp<std::int64_t>(threads, 1, kMaxShares))) {
  for (int s = 0; s < shares_; ++s) {
    share_[s].next.store(ShareBegin(blocks, shares_, s, max_piece), std::memory_order_relaxed);
    share_[s].end = ShareBegin(blocks, shares_, s + 1, max_piece);
  }
}

bool WorkQueue::Next(WorkItem* item) {
  const int own = ThisThread() % shares_;
  for (int k = 0; k < shares_; ++k) {
    Share& share = share_[(own + k) % shares_];
    std::int64_t p = share.next.load(std::memory_order_relaxed);
    while (p < share.end) {
      const std::int64_t n = PieceBlocks(p, share.end, max_piece_);
      if (share.next.compare_exchange_weak(p, p + n, std::memory_order_relaxed)) {
        item->block_begin = p;
        item->block_end = p + n;
        item->row_begin = SplitPoint(rows_, blocks_, p);
        item->row_end = SplitPoint(rows_, blocks_, p + n);
        return true;
      }
    }
  }
  return false;
}

int RunForward(const ForwardArgs* args, Norm norm, ForwardRowsFn rows_fn) {
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->y == nullptr) {
    return kInvalidArgs;
  }
  if (norm == Norm::kRmsNorm && args->beta != nullptr) return kInvalidArgs;
  const std::int64_t rows = args->rows;
  const std::int64_t d = args->d;
  if (rows == 0) return kOk;
  const int threads = ThreadsFor(rows, d);
  const std::int64_t per_thread = kParamScratchArrays * PaddedLength(d);
  float* scratch = Reserve(ParamScratch(), threads * per_thread);
  if (scratch == nullptr) return kOutOfMemory;
  const std::int64_t rows_per_item = std::max<std::int64_t>(1, kChunkElements / d);
  // A multiple of the thread count, so that the shares are equal: a
  // cache-resident call has only a few items (fp32, d = 768, 1 MiB: 170
  // rows in 5 items of 34 gave one thread 3 items and the other 2, and
  // stealing cannot split an item). Which thread runs a row never changes
  // its bits.
  const std::int64_t items = std::min(
      rows, ((rows + rows_per_item - 1) / rows_per_item + threads - 1) / threads * threads);
  WorkQueue queue(rows, items, threads);
  OnThreads(threads, [&](int t) { rows_fn(*args, queue, scratch + t * per_thread); });
  return kOk;
}

int RunBackwardWithBlocks(const BackwardArgs* args, Norm norm, DType param_dtype,
                          BackwardRowsFn rows_fn, std::int64_t blocks, FinishColumnsFn finish) {
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->dy == nullptr || args->dx == nullptr) {
    return kInvalidArgs;
  }
  if (norm == Norm::kRmsNorm && args->dbeta != nullptr) return kInvalidArgs;
  const std::int64_t rows = args->rows;
  const std::int64_t d = args->d;
  if (rows == 0) {
    StoreZeros(*args, param_dtype);
    return kOk;
  }
  Partials partials;
  partials.padded = PaddedLength(d);
  partials.dgamma = args->dgamma != nullptr;
  partials.dbeta = args->dbeta != nullptr;
  partials.blocks = std::clamp<std::int64_t>(blocks, 1, rows);
  partials.max_piece = finish != nullptr ? kMaxPieceBlocks : 1;
  if (partials.Arrays() > 0) {
    partials.base =
        Reserve(PartialsScratch(), partials.blocks * partials.Arrays() * partials.padded);
    if (partials.base == nullptr) return kOutOfMemory;
  }
  const int threads =
      static_cast<int>(std::min<std::int64_t>(ThreadsFor(rows, d), partials.blocks));
  const std::int64_t per_thread = kParamScratchArrays * partials.padded;
  float* scratch = Reserve(ParamScratch(), threads * per_thread);
  if (scratch == nullptr) return kOutOfMemory;
  WorkQueue queue(rows, partials.blocks, threads, partials.max_piece);
  partials.shares = queue.shares();
  // The last merge, in strips of kFinishColumns columns, one item each.
  const std::int64_t strips = partials.Arrays() > 0 ? (d + kFinishColumns - 1) / kFinishColumns : 0;
  WorkQueue columns(strips, strips, threads);
  OnThreadsInTwoPhases(
      threads, [&](int t) { rows_fn(*args, queue, partials, scratch + t * per_thread); },
      [&] {
        WorkItem strip;
        while (columns.Next(&strip)) {
          const std::int64_t begin = strip.block_begin * kFinishColumns;
          const std::int64_t end = std::min(d, strip.block_end * kFinishColumns);
          if (finish != nullptr) {
            finish(*args, partials, begin, end);
          } else {
            MergeColumnsReference(*args, partials, param_dtype, begin, end);
          }
        }
      });
  return kOk;
}

int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn,
                FinishColumnsFn finish) {
  const std::int64_t rows = args != nullptr ? args->rows : 0;
  return RunBackwardWithBlocks(args, norm, param_dtype, rows_fn, RowBlocks(rows), finish);
}

}  // namespace lnv::fast
