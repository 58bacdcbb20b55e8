#include "impls/cpu/fast/driver.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
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

// First row of part `part` of `parts` near-equal contiguous parts.
std::int64_t SplitPoint(std::int64_t rows, std::int64_t parts, std::int64_t part) {
  const std::int64_t base = rows / parts;
  const std::int64_t extra = rows % parts;
  return part * base + std::min(part, extra);
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

}  // namespace

namespace {
std::atomic<std::int64_t> g_streaming_override{-1};
}  // namespace

std::int64_t StreamingFootprintBytes() {
  static const std::int64_t bytes = [] {
    long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return llc > 0 ? static_cast<std::int64_t>(llc) / 2 : std::int64_t{16} << 20;
  }();
  const std::int64_t override_bytes = g_streaming_override.load(std::memory_order_relaxed);
  return override_bytes >= 0 ? override_bytes : bytes;
}

void SetStreamingFootprintBytesForTest(std::int64_t bytes) {
  g_streaming_override.store(bytes, std::memory_order_relaxed);
}

bool WorkQueue::Next(WorkItem* item) {
  const std::int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
  if (i >= items_) return false;
  item->index = i;
  item->row_begin = SplitPoint(rows_, items_, i);
  item->row_end = SplitPoint(rows_, items_, i + 1);
  return true;
}

float* Partials::Dgamma(std::int64_t item) const {
  if (!dgamma) return nullptr;
  return base + item * ((dgamma ? 1 : 0) + (dbeta ? 1 : 0)) * padded;
}

float* Partials::Dbeta(std::int64_t item) const {
  if (!dbeta) return nullptr;
  return base + (item * ((dgamma ? 1 : 0) + (dbeta ? 1 : 0)) + (dgamma ? 1 : 0)) * padded;
}

void Partials::Zero(std::int64_t item) const {
  const auto bytes = sizeof(float) * static_cast<std::size_t>(padded);
  if (float* p = Dgamma(item)) std::memset(p, 0, bytes);
  if (float* p = Dbeta(item)) std::memset(p, 0, bytes);
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
  WorkQueue queue(rows, (rows + rows_per_item - 1) / rows_per_item);
  OnThreads(threads, [&](int t) { rows_fn(*args, queue, scratch + t * per_thread); });
  return kOk;
}

int RunBackwardWithBlocks(const BackwardArgs* args, Norm norm, DType param_dtype,
                          BackwardRowsFn rows_fn, std::int64_t blocks) {
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->dy == nullptr || args->dx == nullptr) {
    return kInvalidArgs;
  }
  if (norm == Norm::kRmsNorm && args->dbeta != nullptr) return kInvalidArgs;
  const std::int64_t rows = args->rows;
  const std::int64_t d = args->d;
  blocks = std::clamp<std::int64_t>(blocks, 1, std::max<std::int64_t>(rows, 1));
  Partials partials;
  partials.padded = PaddedLength(d);
  partials.dgamma = args->dgamma != nullptr;
  partials.dbeta = args->dbeta != nullptr;
  const std::int64_t arrays = (partials.dgamma ? 1 : 0) + (partials.dbeta ? 1 : 0);
  if (arrays > 0) {
    partials.base = Reserve(PartialsScratch(), blocks * arrays * partials.padded);
    if (partials.base == nullptr) return kOutOfMemory;
  }
  if (rows > 0) {
    const int threads = static_cast<int>(std::min<std::int64_t>(ThreadsFor(rows, d), blocks));
    const std::int64_t per_thread = kParamScratchArrays * partials.padded;
    float* scratch = Reserve(ParamScratch(), threads * per_thread);
    if (scratch == nullptr) return kOutOfMemory;
    WorkQueue queue(rows, blocks);
    OnThreads(threads, [&](int t) { rows_fn(*args, queue, partials, scratch + t * per_thread); });
  }
  // A fixed balanced tree over the blocks: level by level, block b absorbs
  // block b + step. Depth ceil(log2(blocks)).
  for (std::int64_t step = 1; step < blocks && rows > 0; step *= 2) {
    for (std::int64_t b = 0; b + step < blocks; b += 2 * step) {
      if (float* dg = partials.Dgamma(b)) {
        const float* other = partials.Dgamma(b + step);
        for (std::int64_t j = 0; j < d; ++j) dg[j] += other[j];
      }
      if (float* db = partials.Dbeta(b)) {
        const float* other = partials.Dbeta(b + step);
        for (std::int64_t j = 0; j < d; ++j) db[j] += other[j];
      }
    }
  }
  // Rounded once into the param dtype (impls/dtype.h: Eigen, RNE). With no
  // rows the sums are empty: zeros.
  for (std::int64_t j = 0; j < d; ++j) {
    if (partials.dgamma) {
      StoreFromFloat(args->dgamma, param_dtype, j, rows > 0 ? partials.Dgamma(0)[j] : 0.f);
    }
    if (partials.dbeta) {
      StoreFromFloat(args->dbeta, param_dtype, j, rows > 0 ? partials.Dbeta(0)[j] : 0.f);
    }
  }
  return kOk;
}

int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn) {
  const std::int64_t rows = args != nullptr ? args->rows : 0;
  return RunBackwardWithBlocks(args, norm, param_dtype, rows_fn, RowBlocks(rows));
}

}  // namespace lnv::fast
