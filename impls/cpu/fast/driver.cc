#include "impls/cpu/fast/driver.h"

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

bool RunInParallel(std::int64_t rows, std::int64_t d) {
  return rows > 1 && rows * d >= kMinParallelElements;
}

// Grows, never shrinks: one allocation per calling thread, not per call (the
// partials of a large d would otherwise be page-faulted in on every call).
std::vector<float>& Scratch() {
  thread_local std::vector<float> scratch;
  return scratch;
}

}  // namespace

int RunForward(const ForwardArgs* args, Norm norm, ForwardRowsFn rows_fn) {
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->y == nullptr) {
    return kInvalidArgs;
  }
  if (norm == Norm::kRmsNorm && args->beta != nullptr) return kInvalidArgs;
  const std::int64_t rows = args->rows;
  if (rows == 0) return kOk;
#ifdef _OPENMP
#pragma omp parallel if (RunInParallel(rows, args->d))
  {
    const std::int64_t parts = omp_get_num_threads();
    const std::int64_t part = omp_get_thread_num();
    const std::int64_t begin = SplitPoint(rows, parts, part);
    const std::int64_t end = SplitPoint(rows, parts, part + 1);
    if (begin < end) rows_fn(*args, begin, end);
  }
#else
  rows_fn(*args, 0, rows);
#endif
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
  const bool want_dgamma = args->dgamma != nullptr;
  const bool want_dbeta = args->dbeta != nullptr;
  blocks = std::clamp<std::int64_t>(blocks, 1, std::max<std::int64_t>(rows, 1));
  const std::int64_t padded = PaddedLength(d);
  const std::int64_t arrays = (want_dgamma ? 1 : 0) + (want_dbeta ? 1 : 0);
  float* partials = nullptr;
  if (arrays > 0) {
    try {
      std::vector<float>& scratch = Scratch();
      const auto need = static_cast<std::size_t>(blocks * arrays * padded);
      if (scratch.size() < need) scratch.resize(need);
      partials = scratch.data();
    } catch (const std::bad_alloc&) {
      return kOutOfMemory;
    }
  }
  // Block b's arrays: dgamma at (b * arrays) * padded, dbeta after it.
  const auto dgamma_of = [&](std::int64_t b) {
    return want_dgamma ? partials + b * arrays * padded : nullptr;
  };
  const auto dbeta_of = [&](std::int64_t b) {
    return want_dbeta ? partials + (b * arrays + (want_dgamma ? 1 : 0)) * padded : nullptr;
  };
  const auto run_block = [&](std::int64_t b) {
    float* dg = dgamma_of(b);
    float* db = dbeta_of(b);
    if (dg != nullptr) std::memset(dg, 0, sizeof(float) * static_cast<std::size_t>(padded));
    if (db != nullptr) std::memset(db, 0, sizeof(float) * static_cast<std::size_t>(padded));
    const std::int64_t begin = SplitPoint(rows, blocks, b);
    const std::int64_t end = SplitPoint(rows, blocks, b + 1);
    if (begin < end) rows_fn(*args, begin, end, dg, db);
  };
  if (rows > 0) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (RunInParallel(rows, d))
#endif
    for (std::int64_t b = 0; b < blocks; ++b) run_block(b);
  }
  // A fixed balanced tree over the blocks: level by level, block b absorbs
  // block b + step. Depth ceil(log2(blocks)).
  for (std::int64_t step = 1; step < blocks; step *= 2) {
    for (std::int64_t b = 0; b + step < blocks; b += 2 * step) {
      float* dg = dgamma_of(b);
      float* db = dbeta_of(b);
      const float* dg2 = dgamma_of(b + step);
      const float* db2 = dbeta_of(b + step);
      if (dg != nullptr) {
        for (std::int64_t j = 0; j < d; ++j) dg[j] += dg2[j];
      }
      if (db != nullptr) {
        for (std::int64_t j = 0; j < d; ++j) db[j] += db2[j];
      }
    }
  }
  // Rounded once into the param dtype (impls/dtype.h: Eigen, RNE). With no
  // rows the sums are empty: zeros.
  for (std::int64_t j = 0; j < d; ++j) {
    if (want_dgamma) StoreFromFloat(args->dgamma, param_dtype, j, rows > 0 ? dgamma_of(0)[j] : 0.f);
    if (want_dbeta) StoreFromFloat(args->dbeta, param_dtype, j, rows > 0 ? dbeta_of(0)[j] : 0.f);
  }
  return kOk;
}

int RunBackward(const BackwardArgs* args, Norm norm, DType param_dtype, BackwardRowsFn rows_fn) {
  const std::int64_t rows = args != nullptr ? args->rows : 0;
  return RunBackwardWithBlocks(args, norm, param_dtype, rows_fn, RowBlocks(rows));
}

}  // namespace lnv::fast
