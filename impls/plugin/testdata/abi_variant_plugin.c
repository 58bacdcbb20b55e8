/* Test plugins that break the plugin ABI, one way each: built once per
 * variant with -DLNV_VARIANT_<NAME> (impls/plugin/CMakeLists.txt). The loader
 * must refuse each with a clear one-line error (impls/plugin/loader_test.cc). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "lnv_plugin.h"

#define UNUSED __attribute__((unused)) /* some variants leave a table unused */

static int Forward(const lnv_forward_args* a) {
  (void)a;
  return 0;
}

#define KERNEL(name, fwd)                                                           \
  {                                                                                 \
    sizeof(lnv_kernel), name, LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, fwd, NULL, \
        LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0                         \
  }

#if defined(LNV_VARIANT_DUPLICATE_NAMES)
UNUSED static const lnv_kernel kKernels[] = {KERNEL("f32/twin/test", Forward),
                                             KERNEL("f32/twin/test", Forward),
                                             KERNEL("f32/single/test", Forward)};
#elif defined(LNV_VARIANT_BAD_KERNELS)
UNUSED static const lnv_kernel kKernels[] = {
    KERNEL("f32/no_forward/test", NULL),
    KERNEL(NULL, Forward),
    KERNEL("f32/has space/test", Forward),
    {sizeof(lnv_kernel), "f32/bad_dtype/test", LNV_LAYER_NORM, (lnv_dtype)9, LNV_F32, LNV_F32,
     Forward, NULL},
    KERNEL("f32/good/test", Forward)};
#elif defined(LNV_VARIANT_BAD_CLAIMS)
/* ABI 1.1 claims that are not valid, each refused; the last one is fine. */
#define CLAIM(name, algo, red, chunk, sumsq, weight)                                               \
  {                                                                                                \
    sizeof(lnv_kernel), name, LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, Forward, NULL, algo, red, \
        chunk, sumsq, weight                                                                       \
  }
UNUSED static const lnv_kernel kKernels[] = {
    CLAIM("f32/rms_algo/test", LNV_ALGO_SUM_OF_SQUARES, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0),
    CLAIM("f32/algo_9/test", (lnv_algorithm)9, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0),
    CLAIM("f32/tree_no_chunk/test", LNV_ALGO_TWO_PASS, LNV_REDUCTION_TREE, 0, 0.0, 0.0),
    CLAIM("f32/serial_chunk/test", LNV_ALGO_TWO_PASS, LNV_REDUCTION_SERIAL, 8, 0.0, 0.0),
    CLAIM("f32/nan_range/test", LNV_ALGO_TWO_PASS, LNV_REDUCTION_SERIAL, 0, NAN, 0.0),
    CLAIM("f32/negative_weight/test", LNV_ALGO_WELFORD, LNV_REDUCTION_SERIAL, 0, 0.0, -1.0),
    CLAIM("f32/welford_tree/test", LNV_ALGO_WELFORD, LNV_REDUCTION_TREE, 16, 1e30, 1e20)};
#elif defined(LNV_VARIANT_ABI_1_0)
/* Two kernels laid out as an ABI 1.0 plugin lays them out: lnv_kernel as it
 * was, without the 1.1 claim fields, so the array's stride is 1.0's size. They
 * load under the generic claim. */
typedef struct {
  uint32_t struct_size;
  const char* name;
  lnv_norm norm;
  lnv_dtype x_dtype, param_dtype, acc_dtype;
  int (*forward)(const lnv_forward_args*);
  int (*backward)(const lnv_backward_args*);
} lnv_kernel_1_0;
static const lnv_kernel_1_0 kKernels10[] = {
    {sizeof(lnv_kernel_1_0), "f32/old/test", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, Forward,
     NULL},
    {sizeof(lnv_kernel_1_0), "f32/old_rms/test", LNV_RMS_NORM, LNV_F32, LNV_F32, LNV_F32, Forward,
     NULL}};
#define kKernels ((const lnv_kernel*)kKernels10)
#define COUNT_OF_KERNELS 2
#elif defined(LNV_VARIANT_SMALL_KERNEL_STRUCT)
UNUSED static const lnv_kernel kKernels[] = {
    {16, "f32/small/test", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, Forward, NULL}};
#else
UNUSED static const lnv_kernel kKernels[] = {KERNEL("f32/fine/test", Forward)};
#endif

#ifdef COUNT_OF_KERNELS
#define COUNT COUNT_OF_KERNELS
#else
#define COUNT ((int32_t)(sizeof kKernels / sizeof kKernels[0]))
#endif

#if defined(LNV_VARIANT_WRONG_ABI_MAJOR)
UNUSED static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR + 1, 0, COUNT,
                                          kKernels};
#elif defined(LNV_VARIANT_SMALL_STRUCT)
UNUSED static const lnv_plugin kPlugin = {8, LNV_PLUGIN_ABI_MAJOR, 0, COUNT, kKernels};
#elif defined(LNV_VARIANT_NO_KERNELS)
UNUSED static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0, 0, NULL};
#else
UNUSED static const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0, COUNT,
                                          kKernels};
#endif

#if defined(LNV_VARIANT_NO_SYMBOL)
/* Exported under another name (as a C++ build without extern "C" would). */
const lnv_plugin* lnv_plugin_get_v1(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
#elif defined(LNV_VARIANT_RETURNS_NULL)
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  (void)host_abi_major;
  return NULL;
}
#elif defined(LNV_VARIANT_CRASHES_ON_GET)
static const lnv_plugin* const* volatile g_nowhere = NULL;
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  (void)host_abi_major;
  return *g_nowhere;
}
#elif defined(LNV_VARIANT_ABORTS_ON_GET)
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  (void)host_abi_major;
  abort();
}
#elif defined(LNV_VARIANT_EXITS_ON_GET)
/* Not a crash: an exit, which the loader must report as one. */
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  (void)host_abi_major;
  exit(3);
}
#else
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : NULL;
}
#endif
