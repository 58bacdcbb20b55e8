// errors.json (schema in reports/SCHEMA.md): the sweep's result as JSON, and
// reading it back. Numbers that can be non-finite are written as the strings
// "inf", "-inf", "nan"; numbers that matter exactly also as C99 hex floats
// ("*_hex", printf("%a")), which read back bit for bit.
#ifndef LNV_HARNESS_ERRORS_JSON_H_
#define LNV_HARNESS_ERRORS_JSON_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/sweep.h"

namespace lnv {

inline constexpr int kSchemaVersion = 1;

// A double as JSON: a number when finite, else "inf", "-inf" or "nan".
nlohmann::json Num(double v);
// The inverse of Num (and of a hex-float string); NaN for anything else.
double ReadNum(const nlohmann::json& j);
// "0x1.8p+1", "inf", "-inf", "nan".
std::string Hex(double v);

// claims_bound|negative_control|observed|plugin: what a kernel's status
// requires (MeetsExpectation, harness/sweep.h).
std::string StatusWord(const ImplInfo& impl);

struct ReportInputs {
  nlohmann::json context;
  std::vector<std::string> load_errors;   // plugins that did not load
  std::vector<std::string> write_errors;  // case files that could not be written
  // Observed kernels compared with their recorded baselines (ln_check), by
  // index into SweepResult::kernels. None (ln_report): an observed kernel is
  // as expected.
  struct Baseline {
    std::string status;  // what the comparison said ("matches, ...", "CHANGED: ...")
    bool ok = true;      // the kernel matched it
    // Findings not in the baseline ("family output verdict"), and the case
    // file written for each (relative to the errors.json's directory; "" if none).
    std::vector<std::pair<std::string, std::string>> new_findings;
  };
  std::map<std::size_t, Baseline> baselines;
  // Overrides summary.exit_status (ln_check: 2 when a plugin did not load).
  std::optional<int> exit_status;
};

nlohmann::json ToJson(const SweepResult& result, const ReportInputs& inputs);

// Reads and checks an errors.json (its schema_version and the keys the
// renderer needs). Returns "" or a one-line reason.
std::string LoadReport(const std::string& path, nlohmann::json* out);
std::string CheckReport(const nlohmann::json& j);

// 0 when every kernel is as its status expects and every plugin loaded, else 1.
int ExitStatusOf(const nlohmann::json& report);

}  // namespace lnv

#endif  // LNV_HARNESS_ERRORS_JSON_H_
