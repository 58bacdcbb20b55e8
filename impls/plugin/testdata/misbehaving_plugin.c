/* Test plugin: kernels that misbehave in the ways ln_check must survive and
 * report (harness/isolate.h). Each computes a plain float two-pass LayerNorm
 * (correct where its sums cannot overflow) and then, on cue, does one wrong
 * thing. Not an example to follow: see impls/plugin/example/. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lnv_plugin.h"

/* Reading the address from a volatile keeps the compiler from proving the
 * dereference wrong at build time. */
static int* volatile g_nowhere = NULL;

static void TwoPass(const lnv_forward_args* a) {
  const float* gamma = (const float*)a->gamma;
  const float* beta = (const float*)a->beta;
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* x = (const float*)a->x + r * a->d;
    float* y = (float*)a->y + r * a->d;
    float sum = 0.0f, sum_sq = 0.0f;
    for (int64_t i = 0; i < a->d; ++i) sum += x[i];
    const float mean = sum / (float)a->d;
    for (int64_t i = 0; i < a->d; ++i) sum_sq += (x[i] - mean) * (x[i] - mean);
    const float rstd = 1.0f / sqrtf(sum_sq / (float)a->d + a->eps);
    for (int64_t i = 0; i < a->d; ++i) {
      float v = (x[i] - mean) * rstd;
      if (gamma != NULL) v *= gamma[i];
      if (beta != NULL) v += beta[i];
      y[i] = v;
    }
    if (a->mean != NULL) a->mean[r] = mean;
    if (a->rstd != NULL) a->rstd[r] = rstd;
  }
}

static int HasHugeValue(const lnv_forward_args* a) {
  for (int64_t i = 0; i < a->rows * a->d; ++i) {
    if (fabsf(((const float*)a->x)[i]) >= 0x1p64f) return 1;
  }
  return 0;
}

static int SegfaultsOnHuge(const lnv_forward_args* a) {
  if (HasHugeValue(a)) g_nowhere[2] = 1; /* a NULL-struct dereference */
  TwoPass(a);
  return 0;
}

static int Hangs(const lnv_forward_args* a) {
  for (volatile int spin = 1; spin;) {
  }
  TwoPass(a);
  return 0;
}

static int WritesPastEnd(const lnv_forward_args* a) {
  TwoPass(a);
  ((float*)a->y)[a->rows * a->d] = 0.0f; /* one element too far */
  return 0;
}

static int WritesFarPastEnd(const lnv_forward_args* a) {
  TwoPass(a);
  ((volatile float*)a->y)[a->rows * a->d + 512] = 0.0f; /* 2 KiB too far */
  return 0;
}

static int WritesBeforeStart(const lnv_forward_args* a) {
  TwoPass(a);
  ((float*)a->y)[-1] = 0.0f;
  return 0;
}

static int WritesInput(const lnv_forward_args* a) {
  ((volatile float*)a->x)[0] = 0.0f; /* x is const */
  TwoPass(a);
  return 0;
}

static int ReturnsError(const lnv_forward_args* a) {
  TwoPass(a);
  return 7;
}

static int Aborts(const lnv_forward_args* a) {
  (void)a;
  abort();
}

static int Exits(const lnv_forward_args* a) {
  (void)a;
  exit(3);
}

static int Forward(const lnv_forward_args* a) {
  TwoPass(a);
  return 0;
}

static int BackwardSegfaults(const lnv_backward_args* a) {
  (void)a;
  g_nowhere[4] = 1;
  return 0;
}

#define KERNEL(name, fwd, bwd) \
  { sizeof(lnv_kernel), name, LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, fwd, bwd }

#ifdef LNV_ONLY_SEGFAULTS_ON_HUGE
/* liblnv_segfaults.so: one kernel, a two-pass that is fine but for that. */
#define UNUSED __attribute__((unused))
UNUSED static int (*const kUnused[])(const lnv_forward_args*) = {
    Hangs,  WritesPastEnd, WritesFarPastEnd, WritesBeforeStart, WritesInput, ReturnsError,
    Aborts, Exits,         Forward};
UNUSED static int (*const kUnusedBackward)(const lnv_backward_args*) = BackwardSegfaults;
static const lnv_kernel kKernels[] = {
    KERNEL("f32/two_pass/segfaults_on_huge", SegfaultsOnHuge, NULL)};
#elif defined(LNV_ONLY_WRITES_PAST_END)
/* liblnv_writes_past_end.so: one kernel that writes one float past the end of
 * y on every call (the suites must report it, not die of it). */
#define UNUSED __attribute__((unused))
UNUSED static int (*const kUnused[])(const lnv_forward_args*) = {
    SegfaultsOnHuge, Hangs, WritesFarPastEnd, WritesBeforeStart, WritesInput, ReturnsError,
    Aborts,          Exits, Forward};
UNUSED static int (*const kUnusedBackward)(const lnv_backward_args*) = BackwardSegfaults;
static const lnv_kernel kKernels[] = {KERNEL("f32/two_pass/writes_past_end", WritesPastEnd, NULL)};
#else
static const lnv_kernel kKernels[] = {
    KERNEL("f32/segfaults_on_huge/test", SegfaultsOnHuge, NULL),
    KERNEL("f32/hangs/test", Hangs, NULL),
    KERNEL("f32/writes_past_end/test", WritesPastEnd, NULL),
    KERNEL("f32/writes_far_past_end/test", WritesFarPastEnd, NULL),
    KERNEL("f32/writes_before_start/test", WritesBeforeStart, NULL),
    KERNEL("f32/writes_input/test", WritesInput, NULL),
    KERNEL("f32/returns_error/test", ReturnsError, NULL),
    KERNEL("f32/aborts/test", Aborts, NULL),
    KERNEL("f32/exits/test", Exits, NULL),
    KERNEL("f32/backward_segfaults/test", Forward, BackwardSegfaults),
};
#endif

static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0,
                                   (int32_t)(sizeof kKernels / sizeof kKernels[0]), kKernels};

const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
