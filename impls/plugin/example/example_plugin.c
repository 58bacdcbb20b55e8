/* An example lnverify plugin: fp32 LayerNorm and RMSNorm, forward and
 * backward, in C, using nothing but impls/plugin/lnv_plugin.h. Copy it to
 * start your own; README.md ("Check your own kernel") shows how to build and
 * check it.
 *
 * Kernels (registry names "plugin:lnv_example/<name>"):
 *   f32/layer_norm/c LayerNorm     x, gamma, beta f32
 *   f32/rms_norm/c   RMSNorm       x, gamma f32 (beta must be NULL)
 * Algorithm: two passes over the row (LayerNorm: mean, then the sum of
 *   squared deviations; RMSNorm: the sum of squares), each a left-to-right
 *   float sum. The backward recomputes the row statistics from x the same way
 *   (instead of reading the float mean/rstd, which lose bits at the ends of
 *   the float range) and accumulates its sums, dgamma and dbeta in double.
 * Accumulation: f32 for the row statistics, declared as acc_dtype LNV_F32.
 * Bound: the two-pass bound (RMSNorm: sum of squares) of fp32 accumulation,
 *   serial, k = d - 1, which it states through the ABI 1.1 claim fields
 *   (algorithm, reduction, valid range) exactly as a built-in kernel states
 *   its claim in the registry. A plugin that leaves those fields zero (or an
 *   ABI 1.0 plugin) is held to the generic bound of its accumulation dtype,
 *   the loosest of two-pass and Welford.
 * Valid range: every finite input. Each row is first scaled by the power of
 *   two 2^-e that brings max|x_i| into [0.5, 1) (exact, short of elements
 *   some 2^126 times smaller than the row's largest, whose lost bits are far
 *   below the bound), so no sum can overflow or lose everything to underflow;
 *   eps is scaled by 2^-2e in double, where it cannot overflow, and the
 *   results are scaled back in double before the one rounding to float.
 * Specials: a row holding NaN or +-inf gives NaN for all of its outputs (y,
 *   mean, rstd, dx) and makes every dgamma NaN, as the oracle does; dbeta,
 *   the column sums of dy, does not depend on x.
 * Return codes: 0 success, 1 invalid arguments, 2 out of memory. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lnv_plugin.h"

enum { kOk = 0, kInvalidArgs = 1, kOutOfMemory = 2 };

/* A row's statistics, in the scaled domain x' = x * 2^-e. */
typedef struct {
  int finite;  /* 0: the row holds a NaN or an infinity */
  int e;       /* the scale exponent */
  float mean;  /* mean of x' (0 for RMSNorm) */
  double rstd; /* 1 / sqrt(var(x') + eps * 2^-2e) = rstd(x) * 2^e */
} RowStats;

static RowStats ComputeRowStats(const float* x, int64_t d, float eps, int layer_norm) {
  RowStats s = {1, 0, 0.0f, 0.0};
  float max_abs = 0.0f;
  for (int64_t i = 0; i < d; ++i) {
    const float a = fabsf(x[i]);
    if (!(a <= FLT_MAX)) { /* NaN or inf */
      s.finite = 0;
      return s;
    }
    if (a > max_abs) max_abs = a;
  }
  if (max_abs > 0.0f) frexpf(max_abs, &s.e); /* max_abs = f * 2^e, f in [0.5, 1) */

  float sum = 0.0f;
  if (layer_norm) {
    for (int64_t i = 0; i < d; ++i) sum += ldexpf(x[i], -s.e);
    s.mean = sum / (float)d;
  }
  float sum_sq = 0.0f;
  for (int64_t i = 0; i < d; ++i) {
    const float c = ldexpf(x[i], -s.e) - s.mean;
    sum_sq += c * c;
  }
  const float var = sum_sq / (float)d;
  s.rstd = 1.0 / sqrt((double)var + ldexp((double)eps, -2 * s.e));
  return s;
}

/* xhat_i, exactly as the forward and the backward both use it. */
static double Xhat(const float* x, int64_t i, const RowStats* s) {
  return (double)(ldexpf(x[i], -s->e) - s->mean) * s->rstd;
}

static int Forward(const lnv_forward_args* a, int layer_norm) {
  if (a == NULL || a->x == NULL || a->y == NULL || a->d < 1 || a->rows < 0) return kInvalidArgs;
  if (!layer_norm && a->beta != NULL) return kInvalidArgs;
  const float* gamma = (const float*)a->gamma;
  const float* beta = (const float*)a->beta;
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* x = (const float*)a->x + r * a->d;
    float* y = (float*)a->y + r * a->d;
    const RowStats s = ComputeRowStats(x, a->d, a->eps, layer_norm);
    if (!s.finite) {
      for (int64_t i = 0; i < a->d; ++i) y[i] = NAN;
      if (layer_norm && a->mean != NULL) a->mean[r] = NAN;
      if (a->rstd != NULL) a->rstd[r] = NAN;
      continue;
    }
    for (int64_t i = 0; i < a->d; ++i) {
      double v = Xhat(x, i, &s);
      if (gamma != NULL) v *= gamma[i];
      if (beta != NULL) v += beta[i];
      y[i] = (float)v;
    }
    if (layer_norm && a->mean != NULL) a->mean[r] = ldexpf(s.mean, s.e);
    if (a->rstd != NULL) a->rstd[r] = (float)ldexp(s.rstd, -s.e);
  }
  return kOk;
}

static int Backward(const lnv_backward_args* a, int layer_norm) {
  if (a == NULL || a->x == NULL || a->dy == NULL || a->dx == NULL || a->d < 1 || a->rows < 0) {
    return kInvalidArgs;
  }
  if (!layer_norm && a->dbeta != NULL) return kInvalidArgs;
  const int64_t d = a->d;
  const float* gamma = (const float*)a->gamma;
  double* xhat = malloc((size_t)d * sizeof *xhat);
  double* dgamma = calloc((size_t)d, sizeof *dgamma);
  double* dbeta = calloc((size_t)d, sizeof *dbeta);
  if (xhat == NULL || dgamma == NULL || dbeta == NULL) {
    free(xhat);
    free(dgamma);
    free(dbeta);
    return kOutOfMemory;
  }
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* x = (const float*)a->x + r * d;
    const float* dy = (const float*)a->dy + r * d;
    float* dx = (float*)a->dx + r * d;
    const RowStats s = ComputeRowStats(x, d, a->eps, layer_norm);
    if (!s.finite) {
      for (int64_t i = 0; i < d; ++i) {
        dx[i] = NAN;
        dgamma[i] = NAN;
        dbeta[i] += dy[i];
      }
      continue;
    }
    /* g = dy * gamma; a = mean(g) (LayerNorm only); b = mean(g * xhat). */
    double mean_g = 0.0, mean_g_xhat = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      xhat[i] = Xhat(x, i, &s);
      const double g = gamma != NULL ? (double)dy[i] * gamma[i] : (double)dy[i];
      mean_g += g;
      mean_g_xhat += g * xhat[i];
      dgamma[i] += (double)dy[i] * xhat[i];
      dbeta[i] += dy[i];
    }
    mean_g = layer_norm ? mean_g / (double)d : 0.0;
    mean_g_xhat /= (double)d;
    const double rstd = ldexp(s.rstd, -s.e);
    for (int64_t i = 0; i < d; ++i) {
      const double g = gamma != NULL ? (double)dy[i] * gamma[i] : (double)dy[i];
      dx[i] = (float)(rstd * (g - mean_g - xhat[i] * mean_g_xhat));
    }
  }
  for (int64_t i = 0; i < d; ++i) {
    if (a->dgamma != NULL) ((float*)a->dgamma)[i] = (float)dgamma[i];
    if (a->dbeta != NULL) ((float*)a->dbeta)[i] = (float)dbeta[i];
  }
  free(xhat);
  free(dgamma);
  free(dbeta);
  return kOk;
}

static int LayerNormForward(const lnv_forward_args* a) { return Forward(a, 1); }
static int LayerNormBackward(const lnv_backward_args* a) { return Backward(a, 1); }
static int RmsNormForward(const lnv_forward_args* a) { return Forward(a, 0); }
static int RmsNormBackward(const lnv_backward_args* a) { return Backward(a, 0); }

/* The claim: algorithm, reduction, chunk (0: serial), and the valid range
 * (0, 0: every finite input, since rows are rescaled; no backward limit, since
 * the backward sums in double). */
static const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/layer_norm/c", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32,
     LayerNormForward, LayerNormBackward, LNV_ALGO_TWO_PASS, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
    {sizeof(lnv_kernel), "f32/rms_norm/c", LNV_RMS_NORM, LNV_F32, LNV_F32, LNV_F32, RmsNormForward,
     RmsNormBackward, LNV_ALGO_SUM_OF_SQUARES, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
};

static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, LNV_PLUGIN_ABI_MINOR,
                                   (int32_t)(sizeof kKernels / sizeof kKernels[0]), kKernels};

const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
