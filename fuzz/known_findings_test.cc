#include "fuzz/known_findings.h"

#include <gtest/gtest.h>

namespace lnv::fuzz {
namespace {

TEST(KnownFindings, AMatchingKeyNamesItsReasonAndOthersDoNot) {
  std::vector<KnownFinding> known;
  std::string error;
  ASSERT_TRUE(ParseKnownFindings("# comment\n\n*|nan_mismatch|dx|*/g:huge/*   sums of g overflow\n",
                                 &known, &error))
      << error;
  ASSERT_EQ(known.size(), 1u);
  const KnownFinding* k = MatchKnownFinding(known,
                                            "f32/two_pass/cpu-scalar|nan_mismatch|dx|layer_norm/"
                                            "f32/x:finite/params:finite/dy:finite/g:huge/"
                                            "kappa:moderate/eps:small");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->reason, "sums of g overflow");
  // The negative control: the same kernel and output with g:ok is not known.
  EXPECT_EQ(MatchKnownFinding(known,
                              "f32/two_pass/cpu-scalar|nan_mismatch|dx|layer_norm/f32/x:finite/"
                              "params:finite/dy:finite/g:ok/kappa:moderate/eps:small"),
            nullptr);
}

TEST(KnownFindings, AnEntryWithoutAReasonOrAKeyShapedPatternIsRefused) {
  std::vector<KnownFinding> known;
  std::string error;
  EXPECT_FALSE(ParseKnownFindings("*|*|dx|*\n", &known, &error));
  EXPECT_NE(error.find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseKnownFindings("ok\nnot-a-key because\n", &known, &error));
  EXPECT_NE(error.find("line 1"), std::string::npos);
}

TEST(KnownFindings, TheCommittedListParses) {
  std::vector<KnownFinding> known;
  std::string error;
  EXPECT_TRUE(
      ReadKnownFindings(std::string(LNV_SOURCE_DIR) + "/fuzz/known_findings.txt", &known, &error))
      << error;
}

}  // namespace
}  // namespace lnv::fuzz
