// fuzz_ln_seeds: writes fuzz_ln's seed corpus from the harness's input
// families, one small input per family x norm x dtype. See kUsage.
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "harness/driver.h"
#include "harness/families.h"

namespace {

constexpr const char* kUsage =
    "usage: fuzz_ln_seeds --out DIR [--seed N] [--d N] [--rows N]\n"
    "\n"
    "Writes fuzz_ln's seed corpus: for every input family of harness/families,\n"
    "both norms and the dtypes f32, bf16, f16, f64 (params in the same dtype, with\n"
    "dy, gamma and beta), one fuzz_ln input named seed-<family>-<norm>-<dtype>,\n"
    "with the oracle cross-check flag set for f16 and bf16. Rows longer than\n"
    "--d keep their first --d columns explicit and fill the rest\n"
    "(fuzz/fuzz_input.h). Then, for each random-data family fuzz_ln draws from\n"
    "(kRandomDataFamilies), both norms and f32 and bf16, one random-data input\n"
    "(d = 512, judged under the statistical tier where the family holds its\n"
    "model) named seed-random-<family>-<norm>-<dtype>.\n"
    "\n"
    "  --out DIR   where to write (created if missing)\n"
    "  --seed N    the families' seed (default: ln_check's default seed)\n"
    "  --d N       row length of the families that do not fix it (default 32)\n"
    "  --rows N    rows per input, 1..8 (default 4)\n"
    "\n"
    "Exit status: 0 written, 2 bad usage or a file that cannot be written.\n";

// Row length of the random-data seeds: long enough for the statistical
// tier to be tighter than the worst case, short enough to run fast.
constexpr std::int64_t kRandomDataD = 512;

bool Write(const std::string& out_dir, const std::string& name, const lnv::fuzz::FuzzInput& in) {
  const std::vector<std::uint8_t> bytes = lnv::fuzz::EncodeInput(in);
  const std::string path = (std::filesystem::path(out_dir) / name).string();
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!o) std::cerr << "fuzz_ln_seeds: cannot write " << path << "\n";
  return static_cast<bool>(o);
}

bool ParseU64(const std::string& s, std::uint64_t* v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string out_dir;
  std::uint64_t seed = lnv::kDefaultSeed, d = 32, rows = 4;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    const bool has_value = i + 1 < args.size();
    if (a == "--out" && has_value) {
      out_dir = args[++i];
    } else if (a == "--seed" && has_value && ParseU64(args[i + 1], &seed)) {
      ++i;
    } else if (a == "--d" && has_value && ParseU64(args[i + 1], &d) && d >= 1 && d <= 4096) {
      ++i;
    } else if (a == "--rows" && has_value && ParseU64(args[i + 1], &rows) && rows >= 1 &&
               rows <= static_cast<std::uint64_t>(lnv::fuzz::kMaxRows)) {
      ++i;
    } else {
      std::cerr << "fuzz_ln_seeds: bad or incomplete option " << a << " (see --help)\n";
      return 2;
    }
  }
  if (out_dir.empty()) {
    std::cerr << "fuzz_ln_seeds: --out DIR is required (see --help)\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  std::cout << "fuzz_ln_seeds: seed " << seed << ", d " << d << ", rows " << rows << "\n";
  int written = 0;
  for (const lnv::Family& family : lnv::AllFamilies()) {
    for (lnv::Norm norm : {lnv::Norm::kLayerNorm, lnv::Norm::kRmsNorm}) {
      for (lnv::DType t :
           {lnv::DType::kF32, lnv::DType::kBF16, lnv::DType::kF16, lnv::DType::kF64}) {
        lnv::FamilyParams p;
        p.norm = norm;
        p.dtype = t;
        p.param_dtype = t;
        p.d = static_cast<std::int64_t>(d);
        p.rows = static_cast<std::int64_t>(rows);
        p.seed = seed;
        p.large_d = 4096;  // long rows: d columns explicit, the rest filled
        p.many_rows = lnv::fuzz::kMaxRows;
        const lnv::Case c = lnv::GenerateCase(family, p);
        lnv::fuzz::FuzzInput in;
        std::string error;
        const std::string name = "seed-" + std::string(family.name) + "-" +
                                 std::string(lnv::NormName(norm)) + "-" +
                                 std::string(lnv::DTypeName(t));
        if (!lnv::fuzz::InputFromCase(c, static_cast<std::int64_t>(d), &in, &error)) {
          std::cout << "skip  " << name << ": " << error << "\n";
          continue;
        }
        // The narrow formats have the most ties and midpoints to decide.
        in.cross_check_oracle = t == lnv::DType::kF16 || t == lnv::DType::kBF16;
        if (!Write(out_dir, name, in)) return 2;
        ++written;
      }
    }
  }
  for (int f = 0; f < 4; ++f) {
    for (lnv::Norm norm : {lnv::Norm::kLayerNorm, lnv::Norm::kRmsNorm}) {
      for (lnv::DType t : {lnv::DType::kF32, lnv::DType::kBF16}) {
        lnv::fuzz::FuzzInput in;
        in.signature = {norm, t, t};
        in.d = kRandomDataD;
        in.cols = 0;
        in.rows = static_cast<std::int64_t>(rows);
        in.backward = true;
        in.affine = lnv::fuzz::AffineMode::kGammaBeta;
        in.random_family = f;
        in.fill_seed = static_cast<std::uint8_t>(seed);
        lnv::fuzz::Normalize(&in);
        const std::string name = "seed-random-" + std::string(lnv::fuzz::kRandomDataFamilies[f]) +
                                 "-" + std::string(lnv::NormName(norm)) + "-" +
                                 std::string(lnv::DTypeName(t));
        if (!Write(out_dir, name, in)) return 2;
        ++written;
      }
    }
  }
  std::cout << "fuzz_ln_seeds: wrote " << written << " inputs to " << out_dir << "\n";
  return 0;
}
