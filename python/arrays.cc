#include "python/arrays.h"

#include <cstring>

#include "impls/dtype.h"

namespace py = pybind11;

namespace lnv::python {

py::dtype NumpyDTypeOf(DType t) {
  switch (t) {
    case DType::kF32:
      return py::dtype("float32");
    case DType::kF64:
      return py::dtype("float64");
    case DType::kF16:
      return py::dtype("float16");
    case DType::kBF16:
      return py::dtype("uint16");
  }
  throw py::value_error("unknown dtype");
}

std::vector<double> ValuesOf(const py::handle& a, const std::string& name, DType t,
                             std::int64_t expected) {
  if (!py::isinstance<py::array>(a)) {
    throw py::type_error(name + " must be a numpy array, got " +
                         std::string(py::str(py::type::of(a))));
  }
  const auto arr = py::reinterpret_borrow<py::array>(a);
  const py::dtype want = NumpyDTypeOf(t);
  if (!arr.dtype().is(want) && !arr.dtype().equal(want)) {
    throw py::type_error(name + " has numpy dtype " +
                         py::str(static_cast<py::object>(arr.dtype())).cast<std::string>() +
                         "; dtype " + std::string(DTypeName(t)) + " needs " +
                         py::str(static_cast<py::object>(want)).cast<std::string>());
  }
  if (!(arr.flags() & py::array::c_style)) {
    throw py::value_error(name +
                          " is not C-contiguous (use numpy.ascontiguousarray or "
                          "tensor.contiguous())");
  }
  const std::int64_t n = static_cast<std::int64_t>(arr.size());
  if (expected >= 0 && n != expected) {
    throw py::value_error(name + " has " + std::to_string(n) + " values, expected " +
                          std::to_string(expected));
  }
  std::vector<double> v(static_cast<std::size_t>(n));
  const void* data = arr.data();
  for (std::int64_t i = 0; i < n; ++i) v[i] = LoadAsDouble(data, t, i);
  return v;
}

py::array ArrayOf(const std::vector<double>& v, DType t, std::vector<std::int64_t> shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array out(NumpyDTypeOf(t), dims);
  void* data = out.mutable_data();
  for (std::size_t i = 0; i < v.size(); ++i) {
    StoreExact(data, t, static_cast<std::int64_t>(i), v[i]);
  }
  return out;
}

}  // namespace lnv::python
