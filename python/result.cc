#include "python/result.h"

#include <pybind11/stl.h>

#include <array>
#include <string>

#include "harness/baseline.h"
#include "harness/bounds.h"
#include "harness/families.h"

namespace py = pybind11;

namespace lnv::python {
namespace {

// The worst element of an output, or None.
py::object WorstOf(const OutputResult& o, std::int64_t d) {
  if (!o.worst) return py::none();
  const ElementResult& e = o.worst_element;
  py::dict w;
  w["index"] = e.index;
  w["row"] = IsRowOutput(o.output) ? RowOfIndex(o.output, e.index, d) : -1;
  w["col"] = o.output == Output::kY || o.output == Output::kDx ? e.index % d
             : IsRowOutput(o.output)                           ? -1
                                                               : e.index;
  w["kernel"] = e.kernel;
  w["exact"] = e.exact.hi + e.exact.lo;
  w["rounded"] = e.exact.rounded;
  w["error"] = e.error;
  w["ulps"] = e.ulps;
  w["bound"] = e.bound;
  w["bound_use"] = e.bound_use;
  w["typical_bound"] = e.typical_bound;
  w["verdict"] = std::string(VerdictName(e.verdict));
  return w;
}

py::dict OutputsOf(const Result& r) {
  py::dict out;
  for (const OutputResult& o : r.judgement.outputs) {
    if (!o.present) continue;
    py::dict s;
    s["verdict"] = std::string(VerdictName(o.verdict));
    s["count"] = o.count;
    s["max_ulp"] = o.max_ulp;
    s["max_bound_use"] = o.max_bound_use;
    s["unclaimed"] = o.unclaimed;
    s["out_of_range"] = o.out_of_range;
    s["undecided"] = o.undecided;
    s["beyond_typical"] = o.beyond_typical;
    s["worst"] = WorstOf(o, r.c.d);
    out[py::str(std::string(OutputName(o.output)))] = s;
  }
  return out;
}

// One (output, verdict) per failing output, as ln_check's baselines list them.
std::vector<std::pair<std::string, std::string>> FindingsOfResult(const Result& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Finding& f : FindingsOf(r.c.provenance.family, r.judgement)) {
    out.emplace_back(f.output, f.verdict);
  }
  return out;
}

// "" when the judgement held enough of its elements to a bound; else why
// not: no element at all (every row outside the stated range, or every
// bound +inf), or, on a random-data family's case, more than ln_check allows
// (NotJudgedReason, kMaxUnclaimedFraction). A pass without a claim is not a
// pass.
std::string NotJudged(const Result& r) {
  std::array<std::int64_t, 6> count{}, unclaimed{};
  std::int64_t total = 0, held = 0;
  for (const OutputResult& o : r.judgement.outputs) {
    if (!o.present) continue;
    const auto k = static_cast<std::size_t>(o.output);
    count[k] = o.count;
    unclaimed[k] = o.unclaimed + o.out_of_range;
    total += o.count;
    held += o.count - unclaimed[k];
  }
  if (total > 0 && held == 0) {
    return "no element was held to a bound (" + std::to_string(r.judgement.rows_out_of_range) +
           " row(s) outside the stated range, the rest without a finite bound)";
  }
  if (IsRandomDataFamily(r.c.provenance.family)) return NotJudgedReason(count, unclaimed);
  return "";
}

void WriteCase(Result& r, const std::string& path, const std::string& replay) {
  Case c = r.c;
  c.kernel = "-";  // not a registry kernel: the user's, which only the user can rerun
  c.provenance.why = Summarize(r.judgement);
  c.provenance.replay = replay;
  c.provenance.notes.push_back("kernel " + r.claim.name + " held to " + DescribeBound(r.claim));
  std::string error;
  if (!WriteCaseFile(path, c, &error)) throw py::value_error("cannot write " + path + ": " + error);
}

}  // namespace

void BindResult(py::module_& m) {
  py::class_<Result>(m, "Result", "The judge's verdict on a kernel's outputs for one case.")
      .def_property_readonly(
          "verdict", [](const Result& r) { return std::string(VerdictName(r.judgement.verdict)); })
      .def_property_readonly(
          "passed",
          [](const Result& r) { return !IsFailure(r.judgement.verdict) && NotJudged(r).empty(); })
      .def_property_readonly("not_judged", &NotJudged)
      .def_property_readonly("summary", [](const Result& r) { return Summarize(r.judgement); })
      .def_property_readonly("message", [](const Result& r) { return r.judgement.message; })
      .def_property_readonly("rows_out_of_range",
                             [](const Result& r) { return r.judgement.rows_out_of_range; })
      .def_property_readonly("claim", [](const Result& r) { return DescribeBound(r.claim); })
      .def_property_readonly("outputs", &OutputsOf)
      .def_property_readonly("findings", &FindingsOfResult)
      .def_property_readonly(
          "deciding_output",
          [](const Result& r) { return std::string(OutputName(DecidingOutput(r.judgement))); })
      .def_readonly("case", &Result::c)
      .def("write_case", &WriteCase, py::arg("path"), py::arg("replay") = "",
           "Writes the case in ln_check's case-file format, with the verdict as its 'why'.");
}

}  // namespace lnv::python
