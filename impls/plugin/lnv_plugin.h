/* lnverify plugin ABI, version 1 (C). Fixed: see docs/DESIGN.md section 3.
 * A plugin is a shared library exporting lnv_plugin_get; every kernel it lists
 * is judged like a built-in kernel under the generic bound of its accumulation
 * dtype. Buffers are row-major and contiguous. */
#ifndef LNV_PLUGIN_H_
#define LNV_PLUGIN_H_
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#define LNV_PLUGIN_ABI_MAJOR 1
typedef enum { LNV_F32 = 0, LNV_F16 = 1, LNV_BF16 = 2, LNV_F64 = 3 } lnv_dtype;
typedef enum { LNV_LAYER_NORM = 0, LNV_RMS_NORM = 1 } lnv_norm;
typedef struct {
  int64_t rows, d;   /* x is [rows][d], row-major, contiguous */
  const void* x;     /* x_dtype */
  const void* gamma; /* param_dtype [d]; NULL means all ones */
  const void* beta;  /* param_dtype [d]; NULL means all zeros; always NULL for RMSNorm */
  float eps;
  void* y;     /* x_dtype [rows][d] */
  float* mean; /* [rows] or NULL; LayerNorm only */
  float* rstd; /* [rows] or NULL */
} lnv_forward_args;
typedef struct {
  int64_t rows, d;
  const void* x;
  const void* gamma;
  const void* dy; /* dy: x_dtype [rows][d] */
  const float* mean;
  const float* rstd; /* as written by this kernel's forward */
  float eps;
  void* dx; /* x_dtype [rows][d] */
  void* dgamma;
  void* dbeta; /* param_dtype [d]; NULL means not wanted */
} lnv_backward_args;
typedef struct {
  uint32_t struct_size; /* sizeof(lnv_kernel) as the plugin was built */
  const char* name;     /* unique within the plugin, e.g. "bf16/my_welford/cpu" */
  lnv_norm norm;
  lnv_dtype x_dtype, param_dtype, acc_dtype;
  int (*forward)(const lnv_forward_args*);   /* returns 0 on success */
  int (*backward)(const lnv_backward_args*); /* NULL if not provided */
} lnv_kernel;
typedef struct {
  uint32_t struct_size;
  uint16_t abi_major, abi_minor;
  int32_t count;
  const lnv_kernel* kernels;
} lnv_plugin;
/* The one symbol a plugin exports; returns NULL if it cannot serve host_abi_major. */
const lnv_plugin* lnv_plugin_get(uint32_t host_abi_major);
#ifdef __cplusplus
}
#endif
#endif /* LNV_PLUGIN_H_ */
