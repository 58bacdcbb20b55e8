// numpy arrays <-> the harness's double vectors, for the Python module. The
// Python layer (lnverify/__init__.py) has already turned torch tensors and
// other array-likes into numpy arrays and checked shapes with messages that
// name the argument; this layer checks again what it relies on (dtype,
// C-contiguity, size) and raises TypeError or ValueError, never crashes.
//
// Storage dtypes as numpy holds them: f32 float32, f64 float64, f16 float16,
// bf16 uint16 (the bit pattern; numpy has no bfloat16).
#ifndef LNV_PYTHON_ARRAYS_H_
#define LNV_PYTHON_ARRAYS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "impls/api.h"

namespace lnv::python {

// The numpy dtype that holds `t` (uint16 for bf16).
pybind11::dtype NumpyDTypeOf(DType t);

// The values of `a` (any shape, C-contiguous, numpy dtype NumpyDTypeOf(t)),
// exactly, as doubles; `name` names the argument in the error. With
// expected >= 0, its size must be that.
std::vector<double> ValuesOf(const pybind11::handle& a, const std::string& name, DType t,
                             std::int64_t expected = -1);

// A new C-contiguous array of dtype NumpyDTypeOf(t) and the given shape
// holding `v` (each value exactly representable in t).
pybind11::array ArrayOf(const std::vector<double>& v, DType t, std::vector<std::int64_t> shape);

}  // namespace lnv::python

#endif  // LNV_PYTHON_ARRAYS_H_
