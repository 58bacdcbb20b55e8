/* lnverify plugin ABI, version 1.1 (C). Fixed: see docs/DESIGN.md section 3.
 * A plugin is a shared library exporting lnv_plugin_get; every kernel it lists
 * is judged like a built-in kernel with the same claim: by default (ABI 1.0,
 * or the 1.1 claim fields left zero) the generic bound of its accumulation
 * dtype over every finite input; with the 1.1 fields, the bound of the
 * algorithm and reduction it states, over the range it states.
 * Buffers are row-major and contiguous. */
#ifndef LNV_PLUGIN_H_
#define LNV_PLUGIN_H_
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#define LNV_PLUGIN_ABI_MAJOR 1
#define LNV_PLUGIN_ABI_MINOR 1 /* 1.1 appended the claim fields of lnv_kernel */
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
/* ABI 1.1: the algorithm whose bound a kernel claims (docs/DESIGN.md section 2).
 * UNKNOWN: the generic bound of the accumulation dtype (the loosest of
 * two-pass and Welford). TWO_PASS and WELFORD are LayerNorm's, SUM_OF_SQUARES
 * RMSNorm's; KAHAN is a two-pass (LayerNorm) or sum of squares (RMSNorm) with
 * Kahan-compensated sums. */
typedef enum {
  LNV_ALGO_UNKNOWN = 0,
  LNV_ALGO_TWO_PASS = 1,
  LNV_ALGO_WELFORD = 2,
  LNV_ALGO_KAHAN = 3,
  LNV_ALGO_SUM_OF_SQUARES = 4
} lnv_algorithm;
/* ABI 1.1: the order of every row sum. SERIAL: left to right (an element
 * takes part in up to d - 1 roundings; valid for any order). TREE: serial
 * within chunks of `chunk` elements, the chunks' sums merged pairwise. */
typedef enum { LNV_REDUCTION_SERIAL = 0, LNV_REDUCTION_TREE = 1 } lnv_reduction;
typedef struct {
  uint32_t struct_size; /* sizeof(lnv_kernel) as the plugin was built */
  const char* name;     /* unique within the plugin, e.g. "bf16/my_welford/cpu" */
  lnv_norm norm;
  lnv_dtype x_dtype, param_dtype, acc_dtype;
  int (*forward)(const lnv_forward_args*);   /* returns 0 on success */
  int (*backward)(const lnv_backward_args*); /* NULL if not provided */
  /* ABI 1.1: the kernel's claim, as a built-in kernel states it. Read only when
   * struct_size covers it; all zero (and a 1.0 kernel) means the generic claim
   * over every finite input. */
  lnv_algorithm algorithm;
  lnv_reduction reduction;
  int64_t chunk;              /* TREE: the leaf size (1 to 2^40); SERIAL: 0 */
  double max_row_sumsq;       /* rows whose exact sum of x^2 exceeds this are outside
                               * the claimed range (judged by the NaN contract only);
                               * 0: every finite row is in range */
  double max_backward_weight; /* the backward's range: rows whose
                               * sum |dy gamma| (1 + |xhat|), and dgamma/dbeta
                               * columns whose sum |dy| (1 + |xhat|) (dbeta:
                               * |dy| where xhat is NaN), exceed
                               * this are outside it, and for dx also rows
                               * whose rstd times that sum does; 0: no limit */
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
