// LNV_PLUGINS adds kernels to every property without rebuilding: the suite
// takes its kernels from ImplsWithPlugins() at run time. ctest runs this with
// LNV_PLUGINS naming the suite's test plugin (testdata/tiny_plugin.cc);
// without LNV_PLUGINS it is skipped. Each property is run on the plugin
// kernels alone and must judge each of them (where the property applies to
// its norm) and pass.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "properties/coverage.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

constexpr int kCasesPerProperty = 20;

TEST(Plugins, EveryPropertyJudgesAndPassesTheKernelsFromLnvPlugins) {
  const char* env = std::getenv("LNV_PLUGINS");
  if (env == nullptr || env[0] == '\0') GTEST_SKIP() << "LNV_PLUGINS is not set";
  Targets targets;
  for (const ImplInfo& k : LoadedKernels()) {
    if (k.name.rfind("plugin:", 0) == 0) targets.kernels.push_back(&k);
  }
  ASSERT_FALSE(targets.kernels.empty()) << "LNV_PLUGINS=" << env << " loaded no kernel";
  for (const PropertyDef& p : AllProperties()) {
    Coverage::Current().Reset(std::string(p.name));
    const QuietRun run = RunQuietly(p, targets, kCasesPerProperty);
    EXPECT_FALSE(run.failed) << p.name << ": " << run.message;
    for (const std::string& k : NeverJudged(p, targets, Coverage::Current())) {
      ADD_FAILURE() << p.name << " never judged " << k;
    }
    for (const ImplInfo* k : targets.kernels) {
      const auto& judged = Coverage::Current().judged();
      const auto it = judged.find(k->name);
      std::cout << p.name << ": " << k->name << " judged " << (it == judged.end() ? 0 : it->second)
                << " time(s)\n";
    }
  }
}

}  // namespace
}  // namespace lnv::props
