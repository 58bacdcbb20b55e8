#include "python/claim.h"

#include <pybind11/pybind11.h>

#include <cmath>
#include <limits>

namespace py = pybind11;

namespace lnv::python {
namespace {

Algorithm AlgorithmArg(const std::string& s, Norm norm) {
  const bool layer = norm == Norm::kLayerNorm;
  if (s == "unknown") return Algorithm::kUnknown;
  if (s == "kahan" || s == "kahan_two_pass") return Algorithm::kKahanTwoPass;
  if (layer && s == "two_pass") return Algorithm::kTwoPass;
  if (layer && s == "welford") return Algorithm::kWelford;
  if (!layer && s == "sum_of_squares") return Algorithm::kSumOfSquares;
  throw py::value_error("algorithm '" + s + "' is not one of " +
                        (layer ? std::string("two_pass, welford, kahan, unknown (LayerNorm)")
                               : std::string("sum_of_squares, kahan, unknown (RMSNorm)")));
}

// A limit of the claimed range: None (passed as -1) is no limit; anything
// else must be > 0 (0 would leave only all-zero rows in range).
double RangeArg(double v, const char* arg) {
  if (v == -1) return std::numeric_limits<double>::infinity();
  if (!(v > 0)) {
    throw py::value_error(std::string(arg) + " must be > 0 (None: no limit), got " +
                          std::to_string(v));
  }
  return v;
}

// The largest chunk a tree reduction may state: the bound models add it to
// row lengths in 64-bit integers.
constexpr std::int64_t kMaxChunk = std::int64_t{1} << 40;

}  // namespace

Norm NormArg(const std::string& s) {
  if (s == "layer" || s == "layer_norm") return Norm::kLayerNorm;
  if (s == "rms" || s == "rms_norm") return Norm::kRmsNorm;
  throw py::value_error("norm '" + s + "' is not 'layer' or 'rms'");
}

DType DTypeArg(const std::string& s, const char* arg) {
  if (s == "f32") return DType::kF32;
  if (s == "f64") return DType::kF64;
  if (s == "f16") return DType::kF16;
  if (s == "bf16") return DType::kBF16;
  throw py::value_error(std::string(arg) + " '" + s + "' is not one of f32, bf16, f16, f64");
}

ImplInfo MakeClaim(const ClaimArgs& a) {
  ImplInfo info;
  info.norm = NormArg(a.norm);
  info.x_dtype = DTypeArg(a.dtype, "dtype");
  info.param_dtype = a.param_dtype.empty() ? info.x_dtype : DTypeArg(a.param_dtype, "param_dtype");
  info.acc_dtype = DTypeArg(a.accumulation, "accumulation");
  info.algorithm = AlgorithmArg(a.algorithm, info.norm);
  info.bound_algorithm = info.algorithm;
  if (a.reduction == "serial") {
    if (a.chunk)
      throw py::value_error("chunk is the leaf size of a tree reduction; reduction is 'serial'");
    info.reduction = Reduction::kSerial;
  } else if (a.reduction == "tree") {
    if (!a.chunk || *a.chunk < 1 || *a.chunk > kMaxChunk) {
      throw py::value_error("reduction 'tree' needs chunk, its leaf size (1 to 2^40)");
    }
    info.reduction = Reduction::kTree;
    info.chunk = *a.chunk;
  } else {
    throw py::value_error("reduction '" + a.reduction + "' is not 'serial' or 'tree'");
  }
  info.max_row_sumsq = RangeArg(a.max_row_sumsq, "max_row_sumsq");
  info.max_backward_weight = RangeArg(a.max_backward_weight, "max_backward_weight");
  info.status = ImplStatus::kClaimsBound;
  info.name = "python:" + a.name;
  info.source = "(a Python kernel)";
  return info;
}

}  // namespace lnv::python
