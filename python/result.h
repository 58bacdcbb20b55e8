// The result of judging a Python kernel's arrays: the case, the claim it was
// held to, and the judge's Judgement, with what the Python half reads from it
// (verdict, per-output maxima and worst elements, findings) and write_case.
#ifndef LNV_PYTHON_RESULT_H_
#define LNV_PYTHON_RESULT_H_

#include <pybind11/pybind11.h>

#include "harness/case_file.h"
#include "harness/judge.h"
#include "impls/registry.h"

namespace lnv::python {

struct Result {
  Case c;
  ImplInfo claim;
  Judgement judgement;
};

void BindResult(pybind11::module_& m);

}  // namespace lnv::python

#endif  // LNV_PYTHON_RESULT_H_
