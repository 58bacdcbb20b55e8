#include "harness/case_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

namespace lnv {
namespace {

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

double FromBits(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

Case SmallCase() {
  Case c;
  c.kernel = "f32/two_pass/cpu-scalar";
  c.norm = Norm::kLayerNorm;
  c.dtype = c.param_dtype = DType::kF32;
  c.d = 3;
  c.rows = 2;
  c.eps = static_cast<double>(1e-5f);
  c.x = {1.0, -0.0, 0x1p-149, std::numeric_limits<double>::infinity(), 3.5, -2.25};
  c.gamma = {1.0, 0.5, -2.0};
  c.beta = {0.0, 0.125, 1e-3f};
  c.dy = {0.1f, 0.2f, 0.3f, -1.0, 2.0, std::numeric_limits<double>::quiet_NaN()};
  c.provenance.found_by = "case_file_test";
  c.provenance.seed = 42;
  c.provenance.family = "hand";
  c.provenance.why = "covers -0, a subnormal, inf and NaN";
  c.provenance.replay = "ln_check --replay small.case";
  c.provenance.notes = {"first note", "second note"};
  return c;
}

void ExpectBitsEqual(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(Bits(a[i]), Bits(b[i])) << "element " << i;
}

TEST(CaseFile, RoundTripsEveryValueBitExactly) {
  Case c = SmallCase();
  c.dtype = c.param_dtype = DType::kF64;
  c.x = {0.0,
         -0.0,
         std::numeric_limits<double>::denorm_min(),
         -std::numeric_limits<double>::max(),
         std::numeric_limits<double>::infinity(),
         -std::numeric_limits<double>::infinity()};
  c.dy = {std::numeric_limits<double>::quiet_NaN(),
          -std::numeric_limits<double>::quiet_NaN(),
          FromBits(0x7ff0000000000001ULL),  // a signalling NaN, by its bits
          FromBits(0xfff8dead00000000ULL),
          0x1.23456789abcdep-1000,
          1.0 / 3.0};
  ASSERT_EQ(ValidateCase(c), "");
  Case back;
  std::string error;
  ASSERT_TRUE(ParseCase(FormatCase(c), &back, &error)) << error;
  ExpectBitsEqual(back.x, c.x);
  ExpectBitsEqual(back.dy, c.dy);
  ExpectBitsEqual(back.gamma, c.gamma);
  ExpectBitsEqual(back.beta, c.beta);
  EXPECT_EQ(Bits(back.eps), Bits(c.eps));
  EXPECT_EQ(FormatCase(back), FormatCase(c));
}

TEST(CaseFile, KeepsHeaderAndProvenance) {
  const Case c = SmallCase();
  Case back;
  std::string error;
  ASSERT_TRUE(ParseCase(FormatCase(c), &back, &error)) << error;
  EXPECT_EQ(back.kernel, c.kernel);
  EXPECT_EQ(back.norm, c.norm);
  EXPECT_EQ(back.d, 3);
  EXPECT_EQ(back.rows, 2);
  EXPECT_EQ(back.provenance.found_by, "case_file_test");
  EXPECT_EQ(back.provenance.seed, 42u);
  EXPECT_EQ(back.provenance.family, "hand");
  EXPECT_EQ(back.provenance.why, c.provenance.why);
  EXPECT_EQ(back.provenance.replay, c.provenance.replay);
  EXPECT_EQ(back.provenance.notes, c.provenance.notes);
}

TEST(CaseFile, WritesValuesAsHexFloats) {
  EXPECT_EQ(FormatValue(1.5), "0x1.8p+0");
  EXPECT_EQ(FormatValue(-0.0), "-0x0p+0");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatValue(FromBits(0x7ff0000000000001ULL)), "nan:0x7ff0000000000001");
  double v = 0;
  EXPECT_TRUE(ParseValue("0x1.8p+0", &v));
  EXPECT_EQ(v, 1.5);
  EXPECT_TRUE(ParseValue("-0x1p-1074", &v));
  EXPECT_EQ(v, -std::numeric_limits<double>::denorm_min());
  EXPECT_FALSE(ParseValue("1.5", &v));         // decimals are not accepted
  EXPECT_FALSE(ParseValue("0x1.8", &v));       // no exponent
  EXPECT_FALSE(ParseValue("0x1p+99999", &v));  // overflows
  EXPECT_FALSE(ParseValue("nan:0x12", &v));
  EXPECT_FALSE(ParseValue("nan:0x3ff0000000000000", &v));  // bits of 1.0, not a NaN
  EXPECT_FALSE(ParseValue("0x1p0junk", &v));
  EXPECT_FALSE(ParseValue("", &v));
}

// Each malformed input gives a one-line reason naming the problem.
TEST(CaseFile, RejectsMalformedFilesWithAClearReason) {
  const std::string good = FormatCase(SmallCase());
  auto error_of = [](const std::string& text) {
    Case c;
    std::string error;
    EXPECT_FALSE(ParseCase(text, &c, &error)) << text;
    EXPECT_EQ(error.find('\n'), std::string::npos);
    return error;
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("hello\n").find("not a case file"), std::string::npos);
  EXPECT_NE(error_of(replace("lnv-case 1", "lnv-case 7")).find("version"), std::string::npos);
  EXPECT_NE(error_of(replace("end\n", "")).find("missing 'end'"), std::string::npos);
  EXPECT_NE(error_of(replace("norm layer_norm", "norm batch_norm")).find("norm"),
            std::string::npos);
  EXPECT_NE(error_of(replace("dtype f32", "dtype f8")).find("dtype"), std::string::npos);
  EXPECT_NE(error_of(replace("d 3", "d -3")).find("d:"), std::string::npos);
  EXPECT_NE(error_of(replace("rows 2", "rows 3")).find("'x' lines"), std::string::npos);
  EXPECT_NE(error_of(replace("gamma 0x1p+0 ", "gamma ")).find("expected 3 values"),
            std::string::npos);
  EXPECT_NE(error_of(replace("gamma 0x1p+0", "gamma 1.0")).find("bad value '1.0'"),
            std::string::npos);
  EXPECT_NE(error_of(replace("kernel ", "colonel ")).find("unknown key 'colonel'"),
            std::string::npos);
  EXPECT_NE(error_of(replace("rows 2\n", "rows 2\nrows 2\n")).find("duplicate 'rows'"),
            std::string::npos);
  EXPECT_NE(error_of(replace("end\n", "end\nx 0x1p+0\n")).find("after 'end'"), std::string::npos);
  EXPECT_NE(error_of(replace("eps 0x1.4f8b58p-17", "eps 0x1.4f8b588p-17")).find("not a float"),
            std::string::npos);
  // A value that is not representable in the dtype: 1 + 2^-30 in f32.
  EXPECT_NE(error_of(replace("gamma 0x1p+0", "gamma 0x1.00000004p+0")).find("not representable"),
            std::string::npos);
}

TEST(CaseFile, RejectsValuesNotRepresentableInTheDtype) {
  Case c = SmallCase();
  c.dtype = c.param_dtype = DType::kF16;
  c.x = {1.0, 2.0, 3.0, 4.0, 5.0, 1e6};  // beyond fp16's 65504
  c.gamma = {1.0, 1.0, 1.0};
  c.beta = {0.0, 0.0, 0.0};
  c.dy.clear();
  EXPECT_NE(ValidateCase(c).find("x[5]"), std::string::npos);
  c.x[5] = 6.0;
  EXPECT_EQ(ValidateCase(c), "");
  c.dtype = c.param_dtype = DType::kBF16;
  c.gamma[1] = 1.00390625;  // 1 + 2^-8: needs 9 bits
  EXPECT_NE(ValidateCase(c).find("gamma[1]"), std::string::npos);
  c.gamma[1] = 1.0;
  c.norm = Norm::kRmsNorm;
  EXPECT_NE(ValidateCase(c).find("beta given for rms_norm"), std::string::npos);
}

TEST(CaseFile, SurvivesEveryTruncation) {
  const std::string good = FormatCase(SmallCase());
  for (std::size_t n = 0; n < good.size(); ++n) {
    Case c;
    std::string error;
    const bool ok = ParseCase(std::string_view(good).substr(0, n), &c, &error);
    EXPECT_EQ(ok, n + 1 >= good.size()) << n;  // only the full text (maybe less its last '\n')
    if (!ok) {
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST(CaseFile, WritesAndReadsFiles) {
  const auto path = std::filesystem::temp_directory_path() / "lnv_case_file_test.case";
  std::string error;
  ASSERT_TRUE(WriteCaseFile(path.string(), SmallCase(), &error)) << error;
  Case back;
  ASSERT_TRUE(ReadCaseFile(path.string(), &back, &error)) << error;
  EXPECT_EQ(FormatCase(back), FormatCase(SmallCase()));
  std::filesystem::remove(path);
  EXPECT_FALSE(ReadCaseFile(path.string(), &back, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST(CaseFile, SelectsRows) {
  const Case c = SmallCase();
  const Case one = SelectRows(c, {1});
  EXPECT_EQ(one.rows, 1);
  ExpectBitsEqual(one.x, {std::numeric_limits<double>::infinity(), 3.5, -2.25});
  ExpectBitsEqual(one.dy, {-1.0, 2.0, std::numeric_limits<double>::quiet_NaN()});
  EXPECT_EQ(ValidateCase(one), "");
}

}  // namespace
// Every tool names its case files by the kernel through this one function.
TEST(FileSafeName, KeepsLettersDigitsDotDashUnderscoreAndMapsTheRestToUnderscore) {
  EXPECT_EQ(FileSafeName("plugin:lnv_textbook_rms/f32/rms_norm/c"),
            "plugin_lnv_textbook_rms_f32_rms_norm_c");
  EXPECT_EQ(FileSafeName("f32/two_pass/cpu-fast-avx2 *?"), "f32_two_pass_cpu-fast-avx2___");
  EXPECT_EQ(FileSafeName("a.b-C_9"), "a.b-C_9");
}

}  // namespace lnv
