#include "fuzz/fuzz_input.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "harness/families.h"
#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

DecodeConfig EverySignature() {
  DecodeConfig config;
  for (Norm n : {Norm::kLayerNorm, Norm::kRmsNorm}) {
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64})
      config.signatures.push_back({n, t, t});
  }
  return config;
}

std::vector<std::uint8_t> RandomBytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  for (auto& v : b) v = static_cast<std::uint8_t>(rng());
  return b;
}

TEST(FuzzInput, AnyByteStringDecodesToAValidCase) {
  std::mt19937_64 rng(7);
  const DecodeConfig config = EverySignature();
  for (int k = 0; k < 2000; ++k) {
    const auto bytes = RandomBytes(rng, rng() % 700);
    const FuzzInput in = DecodeInput(bytes.data(), bytes.size(), config);
    const Case c = Materialize(in);
    ASSERT_EQ(ValidateCase(c), "") << "input " << k;
    EXPECT_LE(c.d, config.max_d);
    EXPECT_LE(EncodedSize(in), std::max(bytes.size(), kHeaderSize));
  }
}

TEST(FuzzInput, EncodingThenDecodingGivesTheSameInputAndCase) {
  const DecodeConfig config = EverySignature();
  for (const Family& f : AllFamilies()) {
    if (f.name == "many_rows" || f.name == "large_d") continue;  // shapes beyond one input
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64}) {
      FamilyParams p;
      p.dtype = p.param_dtype = t;
      p.d = 24;
      p.rows = 3;
      const Case c = GenerateCase(f, p);
      FuzzInput in;
      std::string error;
      ASSERT_TRUE(InputFromCase(c, c.d, &in, &error)) << f.name << ": " << error;
      const auto bytes = EncodeInput(in);
      EXPECT_EQ(bytes.size(), EncodedSize(in));
      const FuzzInput back = DecodeInput(bytes.data(), bytes.size(), config);
      EXPECT_EQ(EncodeInput(back), bytes) << f.name;
      const Case m = Materialize(back);
      ASSERT_EQ(m.x.size(), c.x.size());
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        EXPECT_TRUE(m.x[i] == c.x[i] || (std::isnan(m.x[i]) && std::isnan(c.x[i])))
            << f.name << " x" << i;
      }
      EXPECT_EQ(m.gamma, c.gamma) << f.name;
      EXPECT_EQ(m.beta, c.beta) << f.name;
      EXPECT_EQ(m.dy, c.dy) << f.name;
      EXPECT_EQ(m.eps, c.eps);
    }
  }
}

TEST(FuzzInput, ARandomDataInputIsItsFamilysCaseForTheHeadersShape) {
  const DecodeConfig config = EverySignature();
  for (int f = 0; f < 4; ++f) {
    EXPECT_TRUE(IsRandomDataFamily(kRandomDataFamilies[f])) << kRandomDataFamilies[f];
    FuzzInput in;
    in.signature = {Norm::kLayerNorm, DType::kBF16, DType::kBF16};
    in.d = 300;
    in.cols = 2;
    in.rows = 5;
    in.eps_index = 3;
    in.backward = true;
    in.affine = AffineMode::kGammaBeta;
    in.random_family = f;
    Normalize(&in);
    const auto bytes = EncodeInput(in);
    const FuzzInput back = DecodeInput(bytes.data(), bytes.size(), config);
    EXPECT_EQ(back.random_family, f);
    EXPECT_EQ(EncodeInput(back), bytes);
    const Case c = Materialize(back);
    FamilyParams p;
    p.dtype = p.param_dtype = DType::kBF16;
    p.d = 300;
    p.rows = 5;
    p.eps = static_cast<double>(EpsTable()[3]);
    p.seed = RandomDataSeed(back);
    const Case want = GenerateCase(*FindFamily(kRandomDataFamilies[f]), p);
    EXPECT_EQ(c.provenance.family, kRandomDataFamilies[f]);
    EXPECT_EQ(c.x, want.x);
    EXPECT_EQ(c.gamma, want.gamma);
    EXPECT_EQ(c.beta, want.beta);
    EXPECT_EQ(c.dy, want.dy);
    EXPECT_EQ(c.eps, want.eps);
    // Another explicit x value draws another row.
    FuzzInput other = back;
    other.x[0] ^= 1;
    EXPECT_NE(Materialize(other).x, c.x);
  }
}

TEST(FuzzInput, AShortInputDrivesALongRowThroughTheFill) {
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF32, DType::kF32};
  in.d = 4096;
  in.cols = 4;
  in.rows = 2;
  in.fill = FillMode::kScatter;
  for (int i = 0; i < 8; ++i) in.x.push_back(ToBits(1000.0 + i, DType::kF32));
  const Case c = Materialize(in);
  ASSERT_EQ(c.x.size(), 2u * 4096u);
  std::set<double> row0, row1;
  for (int j = 0; j < 4096; ++j) {
    row0.insert(c.x[j]);
    row1.insert(c.x[4096 + j]);
  }
  // Each row is made of its own explicit values only.
  EXPECT_EQ(row0, (std::set<double>{1000, 1001, 1002, 1003}));
  EXPECT_EQ(row1, (std::set<double>{1004, 1005, 1006, 1007}));
  EXPECT_LT(EncodedSize(in), 64u);
}

TEST(FuzzInput, TheNoisyFillScramblesOnlyLowMantissaBits) {
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF32, DType::kF32};
  in.d = 512;
  in.cols = 2;
  in.fill = FillMode::kScatterLowBits;
  in.x = {ToBits(3.0, DType::kF32), ToBits(-7.5, DType::kF32)};
  const Case c = Materialize(in);
  int changed = 0;
  for (double v : c.x) {
    const std::uint64_t b = ToBits(v, DType::kF32);
    const bool near_a = (b & ~std::uint64_t{3}) == (in.x[0] & ~std::uint64_t{3});
    const bool near_b = (b & ~std::uint64_t{3}) == (in.x[1] & ~std::uint64_t{3});
    EXPECT_TRUE(near_a || near_b) << v;
    changed += b != in.x[0] && b != in.x[1];
  }
  EXPECT_GT(changed, 100);  // the noise is there (not a silent copy)
}

TEST(FuzzInput, SnapsToASignatureThatSomeKernelHas) {
  DecodeConfig config;
  config.signatures = {{Norm::kLayerNorm, DType::kF32, DType::kF32},
                       {Norm::kRmsNorm, DType::kBF16, DType::kBF16}};
  std::vector<std::uint8_t> bytes(kHeaderSize + 64, 0);
  bytes[1] = 1 | (2 << 1) | (0 << 3);  // rms_norm, bf16 x, f32 params: not registered
  bytes[2] = 4;
  FuzzInput in = DecodeInput(bytes.data(), bytes.size(), config);
  EXPECT_EQ(in.signature, (Signature{Norm::kRmsNorm, DType::kBF16, DType::kBF16}));
  bytes[1] = 1 | (1 << 1);  // rms_norm, f16: no f16 kernel, no match at all but the norm
  in = DecodeInput(bytes.data(), bytes.size(), config);
  EXPECT_EQ(in.signature, (Signature{Norm::kRmsNorm, DType::kBF16, DType::kBF16}));
}

TEST(FuzzInput, DWithinMaxDIsKeptAndLargerDWraps) {
  DecodeConfig config;
  config.max_d = 64;
  std::vector<std::uint8_t> bytes(kHeaderSize, 0);
  bytes[2] = 64;
  EXPECT_EQ(DecodeInput(bytes.data(), bytes.size(), config).d, 64);
  bytes[2] = 65;
  EXPECT_EQ(DecodeInput(bytes.data(), bytes.size(), config).d, 1);
  bytes[2] = 0;
  bytes[3] = 0x10;  // 4096
  EXPECT_EQ(DecodeInput(bytes.data(), bytes.size(), config).d, (4096 - 1) % 64 + 1);
  config.max_d = 4096;
  EXPECT_EQ(DecodeInput(bytes.data(), bytes.size(), config).d, 4096);
}

TEST(FuzzInput, SpecialBitPatternsAreTheValuesTheyName) {
  const auto f32 = SpecialBits(DType::kF32);
  auto has = [](const std::vector<std::uint64_t>& v, double x, DType t) {
    for (std::uint64_t b : v) {
      const double y = FromBits(b, t);
      if (y == x && std::signbit(y) == std::signbit(x)) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(f32, 0.0, DType::kF32));
  EXPECT_TRUE(has(f32, -0.0, DType::kF32));
  EXPECT_TRUE(has(f32, HUGE_VAL, DType::kF32));
  EXPECT_TRUE(has(f32, -HUGE_VAL, DType::kF32));
  EXPECT_TRUE(has(f32, FLT_MAX, DType::kF32));
  EXPECT_TRUE(has(f32, 0x1p-149, DType::kF32));
  EXPECT_TRUE(has(f32, FLT_MIN, DType::kF32));
  EXPECT_TRUE(has(f32, 0x1p24, DType::kF32));
  EXPECT_TRUE(has(SpecialBits(DType::kF16), 65504.0, DType::kF16));
  EXPECT_TRUE(has(SpecialBits(DType::kF16), 0x1p-24, DType::kF16));
  EXPECT_TRUE(has(SpecialBits(DType::kBF16), 0x1p-133, DType::kBF16));
  EXPECT_TRUE(has(SpecialBits(DType::kF64), DBL_MAX, DType::kF64));
  int nans = 0;
  for (std::uint64_t b : f32) nans += std::isnan(FromBits(b, DType::kF32));
  EXPECT_EQ(nans, 3);
}

// Parses libFuzzer's dictionary syntax: name="bytes" with \xNN escapes.
std::set<std::string> ReadDictionary(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> entries;
  std::string line;
  while (std::getline(in, line)) {
    const auto q = line.find('"');
    if (line.empty() || line[0] == '#' || q == std::string::npos) continue;
    std::string bytes;
    for (std::size_t i = q + 1; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 3 < line.size() && line[i + 1] == 'x') {
        bytes += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else {
        bytes += line[i];
      }
    }
    entries.insert(bytes);
  }
  return entries;
}

TEST(FuzzInput, TheCommittedDictionaryHoldsEverySpecialBitPattern) {
  const auto entries = ReadDictionary(std::string(LNV_SOURCE_DIR) + "/fuzz/fuzz_ln.dict");
  ASSERT_FALSE(entries.empty());
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64}) {
    for (std::uint64_t b : SpecialBits(t)) {
      std::string bytes;
      for (std::size_t i = 0; i < SizeOf(t); ++i) bytes += static_cast<char>((b >> (8 * i)) & 0xff);
      EXPECT_TRUE(entries.count(bytes)) << DTypeName(t) << " pattern 0x" << std::hex << b;
    }
  }
}

TEST(FuzzInput, CasesOutsideTheFormatAreRefusedWithAReason) {
  Case c;
  c.d = 2;
  c.rows = 1;
  c.x = {1, 2};
  c.eps = 0x1p-3;  // not in the eps table
  FuzzInput in;
  std::string error;
  EXPECT_FALSE(InputFromCase(c, 2, &in, &error));
  EXPECT_NE(error.find("eps"), std::string::npos);
  c.eps = static_cast<double>(1e-5f);
  EXPECT_TRUE(InputFromCase(c, 2, &in, &error)) << error;
  c.rows = kMaxRows + 1;
  c.x.assign(static_cast<std::size_t>(2 * c.rows), 1.0);
  EXPECT_FALSE(InputFromCase(c, 2, &in, &error));
}

}  // namespace
}  // namespace lnv::fuzz
