/* Textbook LayerNorm kernels that accumulate in fp32, as a new user would
 * write them, stating their claim through the plugin ABI 1.1 claim fields.
 * Built twice (impls/plugin/CMakeLists.txt):
 *   LNV_CLAIM_KEPT      states the range it keeps: rows whose exact sum of
 *                       squares is at most FLT_MAX / 8;
 *   LNV_CLAIM_TOO_WIDE  states every finite row, which it does not keep: its
 *                       float sum of squared deviations overflows past
 *                       |x| ~ 2^64, so ln_check must catch it there.
 *
 * Kernels (registry names "plugin:lnv_textbook_<variant>/<name>"):
 *   f32/two_pass/c        LayerNorm, x, gamma, beta f32
 *   bf16/two_pass_tree/c  LayerNorm, x, gamma, beta bf16 (uint16 bits)
 * Algorithm: two passes over the row: the mean, then the mean of squared
 *   deviations; rstd = 1/sqrtf(var + eps), y = (x - mean) rstd gamma + beta.
 * Accumulation: f32. Reduction: f32/two_pass/c left to right (SERIAL);
 *   bf16/two_pass_tree/c serial within chunks of kChunk elements, the chunk
 *   sums merged pairwise, level by level (TREE, chunk kChunk).
 * Bound: the two-pass bound of fp32 accumulation for that reduction
 *   (harness/bounds.h), which the registry's scalar kernels also claim.
 * Valid range: S = sum x^2 <= FLT_MAX / 8 keeps every intermediate finite
 *   (the derivation in impls/cpu/valid_range.h: every partial sum is at most
 *   4S, times at most 2 for rounding).
 * Specials: none handled; NaN and inf propagate by IEEE arithmetic.
 * Return codes: 0 success, 1 invalid arguments, 2 out of memory. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lnv_plugin.h"

enum { kOk = 0, kInvalidArgs = 1, kOutOfMemory = 2 };
enum { kChunk = 32 };

#if defined(LNV_CLAIM_KEPT)
#define MAX_ROW_SUMSQ ((double)FLT_MAX / 8.0)
#elif defined(LNV_CLAIM_TOO_WIDE)
#define MAX_ROW_SUMSQ 0.0 /* every finite row: wrong past |x| ~ 2^64 */
#else
#error "define LNV_CLAIM_KEPT or LNV_CLAIM_TOO_WIDE"
#endif

static float Bf16ToFloat(uint16_t b) {
  const uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t FloatToBf16(float f) { /* round to nearest even; NaN stays NaN */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* Sum of v[0..n): serial, or serial within chunks merged pairwise (tree). */
static float Sum(const float* v, int64_t n, int tree, float* scratch) {
  if (!tree) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += v[i];
    return s;
  }
  int64_t parts = 0;
  for (int64_t start = 0; start < n; start += kChunk, ++parts) {
    float s = 0.0f;
    for (int64_t i = start; i < n && i < start + kChunk; ++i) s += v[i];
    scratch[parts] = s;
  }
  while (parts > 1) { /* adjacent pairs, an odd last one carried up */
    int64_t out = 0;
    for (int64_t i = 0; i < parts; i += 2, ++out) {
      scratch[out] = i + 1 < parts ? scratch[i] + scratch[i + 1] : scratch[i];
    }
    parts = out;
  }
  return parts == 1 ? scratch[0] : 0.0f;
}

static int Forward(const lnv_forward_args* a, int bf16) {
  if (a == NULL || a->x == NULL || a->y == NULL || a->d < 1 || a->rows < 0) return kInvalidArgs;
  const int64_t d = a->d;
  float* row = malloc((size_t)d * sizeof(float));
  float* dev = malloc((size_t)d * sizeof(float));
  float* scratch = malloc((size_t)(d / kChunk + 1) * sizeof(float));
  if (row == NULL || dev == NULL || scratch == NULL) {
    free(row);
    free(dev);
    free(scratch);
    return kOutOfMemory;
  }
  for (int64_t r = 0; r < a->rows; ++r) {
    for (int64_t i = 0; i < d; ++i) {
      row[i] =
          bf16 ? Bf16ToFloat(((const uint16_t*)a->x)[r * d + i]) : ((const float*)a->x)[r * d + i];
    }
    const float mean = Sum(row, d, bf16, scratch) / (float)d;
    for (int64_t i = 0; i < d; ++i) dev[i] = (row[i] - mean) * (row[i] - mean);
    const float var = Sum(dev, d, bf16, scratch) / (float)d;
    const float rstd = 1.0f / sqrtf(var + a->eps);
    if (a->mean != NULL) a->mean[r] = mean;
    if (a->rstd != NULL) a->rstd[r] = rstd;
    for (int64_t i = 0; i < d; ++i) {
      float g = 1.0f, b = 0.0f;
      if (a->gamma != NULL)
        g = bf16 ? Bf16ToFloat(((const uint16_t*)a->gamma)[i]) : ((const float*)a->gamma)[i];
      if (a->beta != NULL)
        b = bf16 ? Bf16ToFloat(((const uint16_t*)a->beta)[i]) : ((const float*)a->beta)[i];
      const float y = (row[i] - mean) * rstd * g + b;
      if (bf16) {
        ((uint16_t*)a->y)[r * d + i] = FloatToBf16(y);
      } else {
        ((float*)a->y)[r * d + i] = y;
      }
    }
  }
  free(row);
  free(dev);
  free(scratch);
  return kOk;
}

static int F32Forward(const lnv_forward_args* a) { return Forward(a, 0); }
static int Bf16Forward(const lnv_forward_args* a) { return Forward(a, 1); }

static const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/two_pass/c", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, F32Forward,
     NULL, LNV_ALGO_TWO_PASS, LNV_REDUCTION_SERIAL, 0, MAX_ROW_SUMSQ, 0.0},
    {sizeof(lnv_kernel), "bf16/two_pass_tree/c", LNV_LAYER_NORM, LNV_BF16, LNV_BF16, LNV_F32,
     Bf16Forward, NULL, LNV_ALGO_TWO_PASS, LNV_REDUCTION_TREE, kChunk, MAX_ROW_SUMSQ, 0.0},
};

static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, LNV_PLUGIN_ABI_MINOR,
                                   (int32_t)(sizeof kKernels / sizeof kKernels[0]), kKernels};

const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
