/* A textbook RMSNorm as a test plugin: fp32 storage, every sum and product in
 * double, and no special-casing of NaN or infinity anywhere, so that what it
 * returns on a row holding +-inf is plain IEEE arithmetic on the formula, as
 * in every straightforward RMSNorm (PyTorch's included). It is the positive
 * control of the special-value table (oracle/oracle.h): ln_check, the
 * property suite and fuzz_ln must pass it, inf rows included.
 *
 * Kernel (registry name "plugin:lnv_textbook_rms/f32/rms_norm/c"):
 *   f32/rms_norm/c   RMSNorm   x, gamma f32 (beta must be NULL)
 * Algorithm: ms = sum(x^2)/d, r = 1/sqrt(ms + eps), xhat = x r, y = xhat gamma,
 *   a left-to-right double sum. Backward (recomputing r from x in double):
 *   g = dy gamma, b = sum(g xhat)/d, dx = r (g - xhat b), dgamma = sum_rows dy xhat.
 * Accumulation: f64 (acc_dtype LNV_F64): no f32 value squared can overflow or
 *   underflow to 0 in double, so every finite input is in range.
 * Specials, by IEEE alone: a NaN gives NaN rows; +-inf gives ms = +inf, r = +0,
 *   rstd = 0, y = +-0 at the finite elements and NaN at the infinite one, and a
 *   NaN dx for the whole row (b holds inf * 0).
 * Return codes: 0 success, 1 invalid arguments, 2 out of memory. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lnv_plugin.h"

enum { kOk = 0, kInvalidArgs = 1, kOutOfMemory = 2 };

static double RowRstd(const float* x, int64_t d, float eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < d; ++i) sum_sq += (double)x[i] * (double)x[i];
  return 1.0 / sqrt(sum_sq / (double)d + (double)eps);
}

static double Gamma(const float* gamma, int64_t i) { return gamma != NULL ? gamma[i] : 1.0; }

static int Forward(const lnv_forward_args* a) {
  if (a == NULL || a->x == NULL || a->y == NULL || a->d < 1 || a->rows < 0 || a->beta != NULL) {
    return kInvalidArgs;
  }
  const float* gamma = (const float*)a->gamma;
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* x = (const float*)a->x + r * a->d;
    float* y = (float*)a->y + r * a->d;
    const double rstd = RowRstd(x, a->d, a->eps);
    for (int64_t i = 0; i < a->d; ++i) y[i] = (float)((double)x[i] * rstd * Gamma(gamma, i));
    if (a->rstd != NULL) a->rstd[r] = (float)rstd;
  }
  return kOk;
}

static int Backward(const lnv_backward_args* a) {
  if (a == NULL || a->x == NULL || a->dy == NULL || a->dx == NULL || a->d < 1 || a->rows < 0 ||
      a->dbeta != NULL) {
    return kInvalidArgs;
  }
  const int64_t d = a->d;
  const float* gamma = (const float*)a->gamma;
  double* xhat = malloc((size_t)d * sizeof *xhat);
  double* dgamma = calloc((size_t)d, sizeof *dgamma);
  if (xhat == NULL || dgamma == NULL) {
    free(xhat);
    free(dgamma);
    return kOutOfMemory;
  }
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* x = (const float*)a->x + r * d;
    const float* dy = (const float*)a->dy + r * d;
    float* dx = (float*)a->dx + r * d;
    const double rstd = RowRstd(x, d, a->eps);
    double sum_g_xhat = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      xhat[i] = (double)x[i] * rstd;
      sum_g_xhat += (double)dy[i] * Gamma(gamma, i) * xhat[i];
      dgamma[i] += (double)dy[i] * xhat[i];
    }
    const double b = sum_g_xhat / (double)d;
    for (int64_t i = 0; i < d; ++i) {
      dx[i] = (float)(rstd * ((double)dy[i] * Gamma(gamma, i) - xhat[i] * b));
    }
  }
  if (a->dgamma != NULL) {
    for (int64_t i = 0; i < d; ++i) ((float*)a->dgamma)[i] = (float)dgamma[i];
  }
  free(xhat);
  free(dgamma);
  return kOk;
}

static const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/rms_norm/c", LNV_RMS_NORM, LNV_F32, LNV_F32, LNV_F64, Forward,
     Backward},
};

static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0,
                                   (int32_t)(sizeof kKernels / sizeof kKernels[0]), kKernels};

const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
