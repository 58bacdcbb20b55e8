// The renderer: any errors.json (schema_version 1) into one self-contained
// HTML page: inline CSS and SVG, tables written into the HTML (no
// JavaScript), the data embedded as a JSON script block, no external URLs.
#ifndef LNV_REPORTS_HTML_H_
#define LNV_REPORTS_HTML_H_

#include <nlohmann/json.hpp>
#include <string>

#include "reports/compare.h"

namespace lnv::report {

// `comparison` may be null (no --compare).
std::string RenderHtml(const nlohmann::json& report, const Comparison* comparison);

}  // namespace lnv::report

#endif  // LNV_REPORTS_HTML_H_
