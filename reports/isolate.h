// Judging a plugin kernel in a child process (DESIGN §7: plugins are
// isolated), so that a kernel that crashes or hangs is a finding with its
// case, not a dead ln_report. The child runs the kernel and the judge on the
// parent's Reference (shared by fork) and sends the CaseMeasure back through
// a pipe; a signal or a timeout becomes a kernel_error verdict that says which.
#ifndef LNV_REPORTS_ISOLATE_H_
#define LNV_REPORTS_ISOLATE_H_

#include <cstdint>
#include <string>

#include "harness/judge.h"
#include "reports/measure.h"

namespace lnv::report {

// Built-in kernels run in-process; plugin kernels ("plugin:...") in a child.
bool RunsIsolated(const ImplInfo& impl);

// Judge + Measure in a child process, waiting at most timeout_seconds.
CaseMeasure MeasureIsolated(const ImplInfo& impl, const Case& c, const Reference& ref,
                            bool with_points, std::int32_t item, double timeout_seconds);

// The pipe's text format (JSON; doubles as hex floats, so it is exact).
std::string SerializeMeasure(const CaseMeasure& m);
bool ParseMeasure(const std::string& text, CaseMeasure* m);

}  // namespace lnv::report

#endif  // LNV_REPORTS_ISOLATE_H_
