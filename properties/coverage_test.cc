// A property run passes only when it judged every kernel it applies to
// (properties_main.cc fails the run otherwise): NeverJudged names the others.
#include "properties/coverage.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "properties/property.h"

namespace lnv::props {
namespace {

void NoOp(const Targets&) {}
bool LayerNormOnly(const ImplInfo& k) { return k.norm == Norm::kLayerNorm; }
int Forward(const ForwardArgs*) { return 0; }

ImplInfo Kernel(const std::string& name, Norm norm) {
  ImplInfo k;
  k.name = name;
  k.norm = norm;
  k.forward = &Forward;
  return k;
}

TEST(NeverJudged, NamesEachApplicableKernelTheRunNeverJudged) {
  const ImplInfo a = Kernel("a", Norm::kLayerNorm), b = Kernel("b", Norm::kLayerNorm);
  Targets t;
  t.kernels = {&a, &b};
  Coverage c;
  c.Reset("p");
  c.Judged("a");
  c.Skipped("b", "a skip is not a judgement");
  const PropertyDef p{"p", &NoOp};
  EXPECT_EQ(NeverJudged(p, t, c), std::vector<std::string>{"b"});
  c.Judged("b");
  EXPECT_TRUE(NeverJudged(p, t, c).empty());
}

TEST(NeverJudged, SkipsKernelsThePropertyDoesNotApplyTo) {
  const ImplInfo ln = Kernel("ln", Norm::kLayerNorm), rms = Kernel("rms", Norm::kRmsNorm);
  ImplInfo no_forward = Kernel("none", Norm::kLayerNorm);
  no_forward.forward = nullptr;
  Targets t;
  t.kernels = {&ln, &rms, &no_forward};
  Coverage c;
  c.Reset("p");
  const PropertyDef p{"p", &NoOp, &LayerNormOnly};
  EXPECT_EQ(NeverJudged(p, t, c), std::vector<std::string>{"ln"});
}

}  // namespace
}  // namespace lnv::props
