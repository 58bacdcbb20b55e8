// What a Python user's kernel claims, as the ImplInfo the judge reads: its
// norm and dtypes, the algorithm, reduction and accumulation that select its
// bound model (harness/bounds.h), and its valid range. The same fields a
// built-in kernel states in the registry, so the judge holds the user's
// kernel to exactly what it would hold such a built-in to.
#ifndef LNV_PYTHON_CLAIM_H_
#define LNV_PYTHON_CLAIM_H_

#include <cstdint>
#include <optional>
#include <string>

#include "impls/registry.h"

namespace lnv::python {

struct ClaimArgs {
  std::string name = "kernel";  // shown in messages and case files, as python:<name>
  std::string norm = "layer";   // "layer" | "rms" (or "layer_norm" | "rms_norm")
  std::string dtype = "f32";    // x, y, dy, dx
  std::string param_dtype;      // gamma, beta, dgamma, dbeta; "": dtype
  std::string accumulation = "f32";
  std::string algorithm = "unknown";  // two_pass | welford | kahan | sum_of_squares | unknown
  std::string reduction = "serial";   // serial | tree
  std::optional<std::int64_t> chunk;  // leaf size of a tree reduction
  double max_row_sumsq = -1;          // -1 (None): the full finite range; else > 0
  double max_backward_weight = -1;    // -1 (None): no limit; else > 0
};

// The ImplInfo of the claim (status claims_bound, no kernel functions), or a
// pybind11 ValueError naming the argument that is not valid.
ImplInfo MakeClaim(const ClaimArgs& a);

// "layer"/"layer_norm" -> kLayerNorm, ...; ValueError otherwise.
Norm NormArg(const std::string& s);
// "f32" etc. -> DType; ValueError naming `arg` otherwise.
DType DTypeArg(const std::string& s, const char* arg);

}  // namespace lnv::python

#endif  // LNV_PYTHON_CLAIM_H_
