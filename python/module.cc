// _lnverify: the compiled half of the Python module lnverify. It links the
// same oracle, judge, bounds, families and case files as ln_check; the
// Python half (lnverify/__init__.py) turns torch tensors and other
// array-likes into numpy arrays, names arguments in errors and builds the
// messages of the pytest assertions.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/bounds.h"
#include "harness/case_file.h"
#include "harness/driver.h"
#include "harness/families.h"
#include "harness/judge.h"
#include "python/arrays.h"
#include "python/claim.h"
#include "python/result.h"

namespace py = pybind11;

namespace lnv::python {
namespace {

// A case from the user's arrays: x and dy are rows x d (checked by the
// Python half), gamma and beta d values or None.
Case MakeCase(const ImplInfo& claim, double eps, const py::array& x, std::int64_t rows,
              std::int64_t d, const py::object& gamma, const py::object& beta, const py::object& dy,
              const std::string& family) {
  if (std::isnan(eps) || eps < 0)
    throw py::value_error("eps must be >= 0, got " + std::to_string(eps));
  // The ABI's eps is a float, which every kernel adds. An f32, bf16 or f16
  // kernel adds float(eps); a float64 kernel adds the double it was given, so
  // that one must be a float value too, or the exact values would be of
  // another eps.
  const float eps32 = static_cast<float>(eps);
  if (!std::isfinite(eps32)) throw py::value_error("eps is beyond the float range");
  if (claim.x_dtype == DType::kF64 && static_cast<double>(eps32) != eps) {
    throw py::value_error(
        "eps must be a float32 value for an f64 kernel (the ABI's eps is a float): give the "
        "kernel and the check numpy.float32(eps)");
  }
  if (rows < 1 || d < 1) throw py::value_error("x must have at least one row and one column");
  Case c;
  c.norm = claim.norm;
  c.dtype = claim.x_dtype;
  c.param_dtype = claim.param_dtype;
  c.rows = rows;
  c.d = d;
  c.eps = static_cast<double>(eps32);
  c.x = ValuesOf(x, "x", c.dtype, rows * d);
  if (!gamma.is_none()) c.gamma = ValuesOf(gamma, "gamma", c.param_dtype, d);
  if (!beta.is_none()) {
    if (c.norm == Norm::kRmsNorm) throw py::value_error("beta is given, but RMSNorm has none");
    c.beta = ValuesOf(beta, "beta", c.param_dtype, d);
  }
  if (!dy.is_none()) c.dy = ValuesOf(dy, "dy", c.dtype, rows * d);
  c.provenance.found_by = "lnverify (Python), kernel " + claim.name;
  c.provenance.family = family;
  const std::string invalid = ValidateCase(c);
  if (!invalid.empty()) throw py::value_error(invalid);
  return c;
}

// The outputs the user gave (a dict name -> numpy array; None values and
// missing names: not produced).
KernelOutputs OutputsOf(const Case& c, const py::dict& given) {
  KernelOutputs out;
  const auto take = [&](const char* name, DType t, std::int64_t n, std::vector<double>* v) {
    if (!given.contains(name) || given[name].is_none()) return;
    *v = ValuesOf(given[name], name, t, n);
  };
  const bool layer = c.norm == Norm::kLayerNorm;
  for (const auto& item : given) {
    const std::string k = py::str(item.first);
    if (k != "y" && k != "mean" && k != "rstd" && k != "dx" && k != "dgamma" && k != "dbeta") {
      throw py::value_error("unknown output '" + k + "'");
    }
  }
  if (!layer && given.contains("mean") && !given["mean"].is_none()) {
    throw py::value_error("mean is given, but RMSNorm has none");
  }
  if (!layer && given.contains("dbeta") && !given["dbeta"].is_none()) {
    throw py::value_error("dbeta is given, but RMSNorm has none");
  }
  take("y", c.dtype, c.rows * c.d, &out.y);
  take("mean", DType::kF32, c.rows, &out.mean);
  take("rstd", DType::kF32, c.rows, &out.rstd);
  take("dx", c.dtype, c.rows * c.d, &out.dx);
  take("dgamma", c.param_dtype, c.d, &out.dgamma);
  take("dbeta", c.param_dtype, c.d, &out.dbeta);
  const bool backward = !out.dx.empty() || !out.dgamma.empty() || !out.dbeta.empty();
  if (backward && c.dy.empty()) throw py::value_error("dx, dgamma or dbeta is given without dy");
  if (out.y.empty() && out.mean.empty() && out.rstd.empty() && !backward) {
    throw py::value_error("no output to judge: give y, mean, rstd, dx, dgamma or dbeta");
  }
  return out;
}

TypicalTier TierArg(const std::string& s) {
  TypicalTier t;
  if (!ParseTypicalTier(s, &t))
    throw py::value_error("typical '" + s + "' is not fail, report or off");
  return t;
}

Result JudgeArrays(const ImplInfo& claim, const Case& c, const py::dict& outputs,
                   const std::string& typical) {
  const KernelOutputs out = OutputsOf(c, outputs);
  JudgeOptions opt;
  opt.typical = TierArg(typical);
  const Reference ref = ComputeReference(c, opt.oracle);
  Result r;
  r.c = c;
  r.claim = claim;
  r.judgement = JudgeOutputs(claim, c, ref, out, opt);
  return r;
}

// The correctly rounded outputs, in the storage dtypes (mean and rstd in
// float32), shaped like the kernel's.
py::dict Exact(const Case& c) {
  const Reference ref = ComputeReference(c);
  const auto rounded = [](const std::vector<ExactValue>& v) {
    std::vector<double> r;
    r.reserve(v.size());
    for (const ExactValue& e : v) r.push_back(e.rounded);
    return r;
  };
  py::dict out;
  out["y"] = ArrayOf(rounded(ref.forward.y), c.dtype, {c.rows, c.d});
  if (c.norm == Norm::kLayerNorm)
    out["mean"] = ArrayOf(rounded(ref.forward.mean), DType::kF32, {c.rows});
  out["rstd"] = ArrayOf(rounded(ref.forward.rstd), DType::kF32, {c.rows});
  if (ref.backward) {
    out["dx"] = ArrayOf(rounded(ref.backward->dx), c.dtype, {c.rows, c.d});
    out["dgamma"] = ArrayOf(rounded(ref.backward->dgamma), c.param_dtype, {c.d});
    if (c.norm == Norm::kLayerNorm) {
      out["dbeta"] = ArrayOf(rounded(ref.backward->dbeta), c.param_dtype, {c.d});
    }
  }
  return out;
}

// Exactly the cases ln_check judges for a kernel of this signature.
std::vector<Case> Cases(const std::string& norm, const std::string& dtype,
                        const std::string& param_dtype, const std::string& budget,
                        std::uint64_t seed, const std::vector<std::string>& families) {
  ClaimArgs a;
  a.norm = norm;
  a.dtype = dtype;
  a.param_dtype = param_dtype;
  const ImplInfo claim = MakeClaim(a);
  if (budget != "quick" && budget != "full") {
    throw py::value_error("budget '" + budget + "' is not 'quick' or 'full'");
  }
  const std::vector<PlannedRun> plan =
      BudgetPlan(budget == "quick" ? Budget::kQuick : Budget::kFull);
  // Every glob must select something: a typo never reads as an empty pass.
  for (const std::string& glob : families) {
    if (std::none_of(plan.begin(), plan.end(),
                     [&](const PlannedRun& run) { return GlobMatch(glob, run.family); })) {
      throw py::value_error("no input family matches '" + glob +
                            "' (lnverify.families() lists them)");
    }
  }
  std::vector<Case> out;
  for (const PlannedRun& run : plan) {
    if (std::none_of(families.begin(), families.end(),
                     [&](const std::string& glob) { return GlobMatch(glob, run.family); })) {
      continue;
    }
    Case c = PlannedCase(run, FamilyParamsFor(claim), seed);
    c.provenance.found_by = "lnverify.cases(budget='" + budget + "')";
    out.push_back(std::move(c));
  }
  if (out.empty()) throw py::value_error("families is empty");
  return out;
}

py::object ArrayOrNone(const std::vector<double>& v, DType t, std::vector<std::int64_t> shape) {
  if (v.empty()) return py::none();
  return ArrayOf(v, t, std::move(shape));
}

void BindCase(py::module_& m) {
  py::class_<Case>(m, "Case", "One input of a LayerNorm/RMSNorm kernel (ln_check's case file).")
      .def_property_readonly("norm", [](const Case& c) { return std::string(NormName(c.norm)); })
      .def_property_readonly("dtype", [](const Case& c) { return std::string(DTypeName(c.dtype)); })
      .def_property_readonly("param_dtype",
                             [](const Case& c) { return std::string(DTypeName(c.param_dtype)); })
      .def_readonly("rows", &Case::rows)
      .def_readonly("d", &Case::d)
      .def_readonly("eps", &Case::eps)
      .def_property_readonly("x",
                             [](const Case& c) {
                               return ArrayOf(c.x, c.dtype, {c.rows, c.d});
                             })
      .def_property_readonly(
          "gamma", [](const Case& c) { return ArrayOrNone(c.gamma, c.param_dtype, {c.d}); })
      .def_property_readonly(
          "beta", [](const Case& c) { return ArrayOrNone(c.beta, c.param_dtype, {c.d}); })
      .def_property_readonly("dy",
                             [](const Case& c) {
                               return ArrayOrNone(c.dy, c.dtype, {c.rows, c.d});
                             })
      .def_property_readonly("family", [](const Case& c) { return c.provenance.family; })
      .def_property_readonly("seed", [](const Case& c) { return c.provenance.seed; })
      .def_property_readonly("why", [](const Case& c) { return c.provenance.why; })
      .def("text", &FormatCase, "The case in ln_check's case-file format.")
      .def("__repr__", [](const Case& c) {
        return "<lnverify.Case " + std::string(NormName(c.norm)) + " " +
               std::string(DTypeName(c.dtype)) + "/" + std::string(DTypeName(c.param_dtype)) +
               " rows=" + std::to_string(c.rows) + " d=" + std::to_string(c.d) +
               (c.provenance.family.empty() ? "" : " family=" + c.provenance.family) + ">";
      });
}

void BindFunctions(py::module_& m) {
  py::class_<ClaimArgs>(m, "ClaimArgs")
      .def(py::init<>())
      .def_readwrite("name", &ClaimArgs::name)
      .def_readwrite("norm", &ClaimArgs::norm)
      .def_readwrite("dtype", &ClaimArgs::dtype)
      .def_readwrite("param_dtype", &ClaimArgs::param_dtype)
      .def_readwrite("accumulation", &ClaimArgs::accumulation)
      .def_readwrite("algorithm", &ClaimArgs::algorithm)
      .def_readwrite("reduction", &ClaimArgs::reduction)
      .def_readwrite("chunk", &ClaimArgs::chunk)
      .def_readwrite("max_row_sumsq", &ClaimArgs::max_row_sumsq)
      .def_readwrite("max_backward_weight", &ClaimArgs::max_backward_weight);
  py::class_<ImplInfo>(m, "Claim")
      .def_readonly("name", &ImplInfo::name)
      .def("describe", [](const ImplInfo& i) { return DescribeBound(i); });
  m.def("make_claim", &MakeClaim);
  m.def("make_case", &MakeCase, py::arg("claim"), py::arg("eps"), py::arg("x"), py::arg("rows"),
        py::arg("d"), py::arg("gamma"), py::arg("beta"), py::arg("dy"), py::arg("family") = "");
  m.def("judge", &JudgeArrays, py::arg("claim"), py::arg("case"), py::arg("outputs"),
        py::arg("typical") = "off");
  m.def("exact", &Exact, py::arg("case"));
  m.def("cases", &Cases, py::arg("norm"), py::arg("dtype"), py::arg("param_dtype"),
        py::arg("budget"), py::arg("seed"), py::arg("families"));
  m.def("families", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Family& f : AllFamilies()) out.emplace_back(f.name, f.why);
    return out;
  });
  m.def("holds_typical_model", [](const std::string& f) { return HoldsTheTypicalModel(f); });
  m.def("read_case", [](const std::string& path) {
    Case c;
    std::string error;
    if (!ReadCaseFile(path, &c, &error)) throw py::value_error(error);
    return c;
  });
  m.attr("default_seed") = kDefaultSeed;
}

}  // namespace
}  // namespace lnv::python

PYBIND11_MODULE(_lnverify, m) {
  m.doc() = "lnverify's compiled core: the exact oracle and the judge (use the lnverify package)";
  lnv::python::BindCase(m);
  lnv::python::BindResult(m);
  lnv::python::BindFunctions(m);
}
