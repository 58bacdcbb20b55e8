// A Case: one input to a LayerNorm/RMSNorm kernel, with where it came from;
// and its text format (hex floats), which every tool writes on a failure and
// replays (ln_check --replay, ctest regression folders, the fuzzer's replay).
//
// Format (version 1), one item per line, '#' starts a comment line:
//   lnv-case 1
//   kernel f32/two_pass/cpu-scalar      # registry name ("-": not tied to one)
//   norm layer_norm                     # or rms_norm
//   dtype f32                           # x, y, dy, dx: f32 | f16 | bf16 | f64
//   param_dtype f32                     # gamma, beta, dgamma, dbeta
//   d 4
//   rows 2
//   eps 0x1.4f8b58p-17                  # a float value
//   found_by ln_check --budget quick    # provenance: free text to end of line
//   seed 42
//   family large_mean
//   why one-pass variance cancels at kappa = 1e4
//   replay ln_check --replay lnv-cases/x.case
//   note <text>                          # any number of these
//   x <d values>                         # one line per row, `rows` lines
//   gamma <d values>                     # optional (absent: all ones)
//   beta <d values>                      # optional, LayerNorm only (absent: zeros)
//   dy <d values>                        # optional, one line per row (backward)
//   end
// Values are C99 hex floats as printf("%a") writes them ("-0x0p+0" for -0),
// "inf", "-inf", "nan" (the default quiet NaN), "-nan", or "nan:0x<16 hex
// digits>" (any other NaN, by its bits): every double round-trips bit-exactly.
#ifndef LNV_HARNESS_CASE_FILE_H_
#define LNV_HARNESS_CASE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impls/api.h"

namespace lnv {

struct Provenance {
  std::string found_by;  // tool and command line, e.g. "ln_check --budget quick"
  std::optional<std::uint64_t> seed;
  std::string family;  // input family name
  std::string why;     // why it matters
  std::string replay;  // the one command that replays it
  std::vector<std::string> notes;
};

struct Case {
  std::string kernel = "-";  // registry name of the kernel it was found on
  Norm norm = Norm::kLayerNorm;
  DType dtype = DType::kF32;        // x, dy (and y, dx)
  DType param_dtype = DType::kF32;  // gamma, beta (and dgamma, dbeta)
  std::int64_t d = 0;
  std::int64_t rows = 0;
  double eps = 0.0;           // a float value
  std::vector<double> x;      // rows * d
  std::vector<double> gamma;  // d, or empty (all ones)
  std::vector<double> beta;   // d, or empty (zeros); empty for RMSNorm
  std::vector<double> dy;     // rows * d, or empty (forward only)
  Provenance provenance;
};

// Checks the shape (sizes match d and rows), that every value is exactly
// representable in its dtype and eps in binary32. Returns "" when valid,
// otherwise a one-line reason.
std::string ValidateCase(const Case& c);

// Text of a valid case (the format above).
std::string FormatCase(const Case& c);

// Parses the format; on failure returns false and sets *error to a one-line
// reason with the line number. A parsed case is also validated.
bool ParseCase(std::string_view text, Case* out, std::string* error);

bool ReadCaseFile(const std::string& path, Case* out, std::string* error);
bool WriteCaseFile(const std::string& path, const Case& c, std::string* error);

// Hex-float text of one value, and its inverse (false on anything else).
std::string FormatValue(double v);
bool ParseValue(std::string_view token, double* v);

// "f32" etc. and "layer_norm"/"rms_norm" back to the enums.
std::optional<DType> ParseDType(std::string_view s);
std::optional<Norm> ParseNorm(std::string_view s);

// The case restricted to the given rows (in order), for a smaller replay.
Case SelectRows(const Case& c, const std::vector<std::int64_t>& rows);

// A registry name (which holds '/' and ':') as a file name: [A-Za-z0-9._-]
// kept, every other character '_'. What every tool names its case files by.
std::string FileSafeName(std::string_view s);

}  // namespace lnv

#endif  // LNV_HARNESS_CASE_FILE_H_
