#include "impls/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace lnv {
namespace {

TEST(Registry, IsBuiltOnceAndListsEveryScalarKernelForEveryDtype) {
  const std::vector<ImplInfo>& impls = AllImpls();
  EXPECT_EQ(&impls, &AllImpls());
  int scalar = 0;
  for (const ImplInfo& info : impls) scalar += info.name.ends_with("/cpu-scalar");
  EXPECT_EQ(scalar, 8 * 4);  // 8 algorithms x {f32, bf16, f16, f64}
}

TEST(Registry, NamesAreUniqueAndWellFormed) {
  const std::regex pattern("(f32|bf16|f16|f64)/[a-z0-9_]+/[a-z0-9-]+");
  std::set<std::string> seen;
  for (const ImplInfo& info : AllImpls()) {
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(std::regex_match(info.name, pattern));
    EXPECT_TRUE(seen.insert(info.name).second) << "duplicate name";
    EXPECT_TRUE(info.name.starts_with(std::string(DTypeName(info.x_dtype)) + "/"));
  }
}

TEST(Registry, EveryEntryIsCompleteAndConsistent) {
  for (const ImplInfo& info : AllImpls()) {
    SCOPED_TRACE(info.name);
    EXPECT_NE(info.forward, nullptr);
    EXPECT_NE(info.backward, nullptr);
    EXPECT_FALSE(info.source.empty());
    // Parameters in x's dtype, or f32 (oneDNN takes f32 scale/shift for bf16 data).
    EXPECT_TRUE(info.param_dtype == info.x_dtype || info.param_dtype == DType::kF32);
    EXPECT_EQ(info.acc_dtype, info.x_dtype == DType::kF64 ? DType::kF64 : DType::kF32);
    EXPECT_EQ(info.reduction == Reduction::kTree, info.chunk > 0);
    EXPECT_EQ(info.reduction == Reduction::kLanes, info.lane_shape != nullptr);
    EXPECT_GT(info.max_row_sumsq, 0.0);
    const bool rms = info.name.find("/rms_") != std::string::npos;
    EXPECT_EQ(info.norm, rms ? Norm::kRmsNorm : Norm::kLayerNorm);
    if (info.status == ImplStatus::kNegativeControl) {
      // The one-pass variance, or a two-pass kernel with one bug (impls/broken/).
      EXPECT_TRUE(info.algorithm == Algorithm::kOnePass ||
                  info.source.starts_with("impls/broken/"));
      EXPECT_EQ(info.bound_algorithm, Algorithm::kTwoPass);
    } else if (info.status == ImplStatus::kObserved) {  // third-party: the generic model
      EXPECT_EQ(info.bound_algorithm, Algorithm::kUnknown);
    } else {
      EXPECT_EQ(info.status, ImplStatus::kClaimsBound);
      EXPECT_EQ(info.bound_algorithm, info.algorithm);
    }
  }
}

TEST(Registry, ExactlyTheOnePassAndTheBrokenKernelsAreNegativeControls) {
  for (const ImplInfo& info : AllImpls()) {
    SCOPED_TRACE(info.name);
    EXPECT_EQ(
        info.status == ImplStatus::kNegativeControl,
        info.name.find("/one_pass/") != std::string::npos || info.name.ends_with("/cpu-broken"));
  }
}

TEST(Registry, EachSourceFileStatesItsClaimInItsHeaderComment) {
  for (const ImplInfo& info : AllImpls()) {
    SCOPED_TRACE(info.name);
    std::ifstream in(std::string(LNV_SOURCE_DIR) + "/" + info.source);
    ASSERT_TRUE(in) << info.source;
    std::stringstream text;
    text << in.rdbuf();
    for (const char* part : {"Algorithm:", "Accumulation:", "ound", "Valid range:"}) {
      EXPECT_NE(text.str().find(part), std::string::npos) << part;
    }
  }
}

TEST(Registry, FloatAccumulatingKernelsClaimOnlyWhereSumsOfSquaresStayFinite) {
  for (const ImplInfo& info : AllImpls()) {
    SCOPED_TRACE(info.name);
    // A full-range claim is for kernels that rescale rows (their headers say
    // how); their own tests show rows beyond this limit.
    if (std::isinf(info.max_row_sumsq)) continue;
    const double max = info.acc_dtype == DType::kF64 ? std::numeric_limits<double>::max()
                                                     : std::numeric_limits<float>::max();
    EXPECT_LE(4 * info.max_row_sumsq, max);  // every intermediate is <= 4 sum(x^2)
  }
}

TEST(GlobMatch, EmptyPatternAndStarMatchEverything) {
  EXPECT_TRUE(GlobMatch("", "f32/two_pass/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_TRUE(GlobMatch("*", "f32/two_pass/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("*", ""));
}

TEST(GlobMatch, LiteralPatternsMatchOnlyTheWholeName) {
  EXPECT_TRUE(GlobMatch("f32/two_pass/cpu-scalar", "f32/two_pass/cpu-scalar"));
  EXPECT_FALSE(GlobMatch("f32", "f32/two_pass/cpu-scalar"));
  EXPECT_FALSE(GlobMatch("f32/two_pass/cpu-scalar", "f32/two_pass/cpu-scalarx"));
  EXPECT_FALSE(GlobMatch("a", ""));
}

TEST(GlobMatch, StarMatchesAnyRunIncludingSlashesAndNothing) {
  EXPECT_TRUE(GlobMatch("f32/*", "f32/two_pass/cpu-scalar"));
  EXPECT_FALSE(GlobMatch("f32/*", "bf16/two_pass/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("*/welford*/cpu-scalar", "bf16/welford_tree/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("*/welford*/cpu-scalar", "f16/welford/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("*rms*", "f64/rms_kahan/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("f32/two_pass/cpu-scalar*", "f32/two_pass/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("**a**", "a"));
  EXPECT_FALSE(GlobMatch("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaa"));
  EXPECT_TRUE(GlobMatch("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaab"));
}

TEST(GlobMatch, QuestionMarkMatchesExactlyOneCharacter) {
  EXPECT_TRUE(GlobMatch("?16/*", "f16/two_pass/cpu-scalar"));
  EXPECT_FALSE(GlobMatch("?16/*", "bf16/two_pass/cpu-scalar"));
  EXPECT_TRUE(GlobMatch("??16/*", "bf16/two_pass/cpu-scalar"));
  EXPECT_FALSE(GlobMatch("?", ""));
  EXPECT_TRUE(GlobMatch("f?4/*", "f64/one_pass/cpu-scalar"));
}

TEST(GlobMatch, SelectsTheExpectedRegistrySubsets) {
  int bf16 = 0, welford = 0;
  for (const ImplInfo& info : AllImpls()) {
    bf16 += GlobMatch("bf16/*/cpu-scalar", info.name);
    welford += GlobMatch("*/welford*/cpu-scalar", info.name);
  }
  EXPECT_EQ(bf16, 8);
  EXPECT_EQ(welford, 2 * 4);
}

TEST(Names, AlgorithmAndStatusNamesAreTheDesignsWords) {
  EXPECT_EQ(AlgorithmName(Algorithm::kTwoPass), "two_pass");
  EXPECT_EQ(AlgorithmName(Algorithm::kWelford), "welford");
  EXPECT_EQ(AlgorithmName(Algorithm::kKahanTwoPass), "kahan_two_pass");
  EXPECT_EQ(AlgorithmName(Algorithm::kOnePass), "one_pass");
  EXPECT_EQ(AlgorithmName(Algorithm::kSumOfSquares), "sum_of_squares");
  EXPECT_EQ(AlgorithmName(Algorithm::kUnknown), "unknown");
  EXPECT_EQ(StatusName(ImplStatus::kClaimsBound), "claims_bound");
  EXPECT_EQ(StatusName(ImplStatus::kNegativeControl), "negative_control");
  EXPECT_EQ(StatusName(ImplStatus::kObserved), "observed");
}

}  // namespace
}  // namespace lnv
