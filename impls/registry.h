// The one explicit registry of kernels under test. AllImpls() lists every
// built-in kernel; adding a kernel is one line in registry.cc. Tools append
// plugins (LNV_PLUGINS, --plugin) to a copy of this list.
#ifndef LNV_IMPLS_REGISTRY_H_
#define LNV_IMPLS_REGISTRY_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "impls/api.h"

namespace lnv {

// The algorithm that computes the row statistics; selects the bound model.
enum class Algorithm {
  kTwoPass,       // mean, then sum of squared deviations (LayerNorm)
  kWelford,       // Welford/West updating, merged with Chan et al.'s formula (LayerNorm)
  kKahanTwoPass,  // two-pass with Kahan-compensated sums (LayerNorm); RMSNorm: compensated sum of
                  // squares
  kOnePass,       // textbook sum(x^2) - sum(x)^2/d (LayerNorm): the negative control
  kSumOfSquares,  // RMSNorm: plain sum of squares
  kUnknown,       // third-party / plugin: judged under a generic model
};

enum class Reduction {
  kSerial,  // left-to-right: longest rounding chain k = d - 1
  kTree,   // serial within chunks of `chunk`, chunks merged pairwise: k = chunk + ceil(log2(parts))
  kLanes,  // dealt to parallel lanes (GPU threads), each serial, then a merge tree over the
           // lanes (shuffles): k = leaf + levels, from the kernel's ImplInfo::lane_shape(d)
};

// The reduction tree of a kLanes kernel for a row of d elements. The kernel
// guarantees: no lane reduces more than `leaf` elements serially; exactly
// `leaves` lanes hold an element; merging a lane that holds none is exact; and
// no element passes through more than `levels` (non-empty) merges.
struct LaneShape {
  std::int64_t leaf = 1;
  std::int64_t leaves = 1;
  std::int64_t levels = 0;
};
using LaneShapeFn = LaneShape (*)(std::int64_t d);

enum class ImplStatus {
  kClaimsBound,      // ours: must meet its bound, CI fails otherwise
  kNegativeControl,  // must be caught by the suite
  kObserved,         // third-party: compared against a recorded baseline
};

struct ImplInfo {
  std::string name;  // <dtype>/<algorithm>/<backend>, e.g. "bf16/welford_tree/cpu-scalar"
  Norm norm = Norm::kLayerNorm;
  DType x_dtype = DType::kF32;
  DType param_dtype = DType::kF32;
  DType acc_dtype = DType::kF32;
  Algorithm algorithm = Algorithm::kTwoPass;
  Reduction reduction = Reduction::kSerial;
  std::int64_t chunk = 0;            // leaf size of a kTree reduction
  LaneShapeFn lane_shape = nullptr;  // a kLanes reduction's tree for each row length
  // The model whose bound the kernel is held to. Equal to `algorithm` except
  // for negative controls, which are held to the bound of what they imitate.
  Algorithm bound_algorithm = Algorithm::kTwoPass;
  ImplStatus status = ImplStatus::kClaimsBound;
  // Valid range claimed: finite inputs whose row sum of squares (computed
  // exactly by the judge) is at most this. Infinity = the full finite range.
  double max_row_sumsq = std::numeric_limits<double>::infinity();
  // Backward claim (impls/cpu/valid_range.h): rows whose weight
  // W = sum_i |dy_i gamma_i| (1 + |xhat_i|), and dgamma/dbeta columns whose
  // weight sum_r |dy_ri| (1 + |xhat_ri|), are at most this, and for dx also
  // rstd W (the judge computes them from the inputs and the exact xhat and
  // rstd). Infinity = no limit.
  double max_backward_weight = std::numeric_limits<double>::infinity();
  ForwardFn forward = nullptr;
  BackwardFn backward = nullptr;  // nullptr: forward only
  std::string source;             // file that implements it (header comment with the claim)
  // The exact (bit-for-bit) relations of the property suite that this kernel
  // breaks by design, each "<relation>: <file>:<line> <why>", naming the
  // constant or branch that breaks it. The property skips the kernel for that
  // relation by this name (it is still held to its bound there). Relations:
  // "scaling" (2^k x with 4^k eps) and "rows" (a row alone and in a batch);
  // properties/README.md states them.
  std::vector<std::string> exact_relation_exemptions;
};

const std::vector<ImplInfo>& AllImpls();

// The entry named `name` exactly, or nullptr.
const ImplInfo* FindImpl(std::string_view name);

// Shell-style glob (*, ?) over registry names; "" or "*" matches everything.
bool GlobMatch(std::string_view pattern, std::string_view name);

std::string_view AlgorithmName(Algorithm a);
std::string_view StatusName(ImplStatus s);
std::string_view ReductionName(Reduction r);  // "serial", "tree", "lanes"

}  // namespace lnv

#endif  // LNV_IMPLS_REGISTRY_H_
