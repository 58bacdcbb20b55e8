#include "impls/plugin/loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lnv {
namespace {

// The one error line for a plugin that must fail to load entirely.
std::string OnlyError(const std::string& path) {
  const PluginLoad load = LoadPlugins({path});
  EXPECT_TRUE(load.impls.empty());
  EXPECT_EQ(load.errors.size(), 1u);
  return load.errors.empty() ? "" : load.errors.front();
}

std::vector<std::string> Names(const PluginLoad& load) {
  std::vector<std::string> names;
  for (const ImplInfo& i : load.impls) names.push_back(i.name);
  return names;
}

std::filesystem::path TempDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("lnv_loader_test_" + name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(PluginLoader, TheExamplePluginLoadsAsTwoClaimsBoundKernelsWithTheClaimItStates) {
  const PluginLoad load = LoadPlugins({LNV_EXAMPLE_PLUGIN});
  EXPECT_TRUE(load.errors.empty()) << load.errors.front();
  ASSERT_EQ(Names(load), (std::vector<std::string>{"plugin:lnv_example/f32/layer_norm/c",
                                                   "plugin:lnv_example/f32/rms_norm/c"}));
  for (const ImplInfo& i : load.impls) {
    EXPECT_TRUE(IsPluginImpl(i));
    EXPECT_EQ(i.status, ImplStatus::kClaimsBound);
    EXPECT_EQ(i.reduction, Reduction::kSerial);
    EXPECT_EQ(i.acc_dtype, DType::kF32);
    EXPECT_EQ(i.max_row_sumsq, std::numeric_limits<double>::infinity());
    EXPECT_EQ(i.max_backward_weight, std::numeric_limits<double>::infinity());
    EXPECT_NE(i.forward, nullptr);
    EXPECT_NE(i.backward, nullptr);
  }
  EXPECT_EQ(load.impls[0].bound_algorithm, Algorithm::kTwoPass);
  EXPECT_EQ(load.impls[1].norm, Norm::kRmsNorm);
  EXPECT_EQ(load.impls[1].bound_algorithm, Algorithm::kSumOfSquares);
}

TEST(PluginLoader, AnAbi10KernelTableLoadsUnderTheGenericClaim) {
  const PluginLoad load = LoadPlugins({LNV_TEST_PLUGIN_ABI_1_0});
  EXPECT_TRUE(load.errors.empty()) << load.errors.front();
  // Two kernels: the second is found at 1.0's stride, not 1.1's.
  ASSERT_EQ(Names(load), (std::vector<std::string>{"plugin:lnv_abi_abi_1_0/f32/old/test",
                                                   "plugin:lnv_abi_abi_1_0/f32/old_rms/test"}));
  EXPECT_EQ(load.impls[1].norm, Norm::kRmsNorm);
  for (const ImplInfo& i : load.impls) {
    EXPECT_EQ(i.bound_algorithm, Algorithm::kUnknown);
    EXPECT_EQ(i.reduction, Reduction::kSerial);
    EXPECT_EQ(i.max_row_sumsq, std::numeric_limits<double>::infinity());
    EXPECT_EQ(i.max_backward_weight, std::numeric_limits<double>::infinity());
  }
}

TEST(PluginLoader, InvalidClaimsAreRefusedKernelByKernel) {
  const PluginLoad load = LoadPlugins({LNV_TEST_PLUGIN_BAD_CLAIMS});
  ASSERT_EQ(Names(load),
            std::vector<std::string>{"plugin:lnv_abi_bad_claims/f32/welford_tree/test"});
  const ImplInfo& i = load.impls[0];
  EXPECT_EQ(i.bound_algorithm, Algorithm::kWelford);
  EXPECT_EQ(i.reduction, Reduction::kTree);
  EXPECT_EQ(i.chunk, 16);
  EXPECT_EQ(i.max_row_sumsq, 1e30);
  EXPECT_EQ(i.max_backward_weight, 1e20);
  const std::vector<std::string> why = {
      "kernel 0 (f32/rms_algo/test): algorithm SUM_OF_SQUARES is RMSNorm's",
      "kernel 1 (f32/algo_9/test): unknown algorithm 9",
      "kernel 2 (f32/tree_no_chunk/test): reduction TREE needs chunk in [1, 2^40], got 0",
      "kernel 3 (f32/serial_chunk/test): chunk is 8 with reduction SERIAL",
      "kernel 4 (f32/nan_range/test): max_row_sumsq is nan",
      "kernel 5 (f32/negative_weight/test): max_backward_weight is -1"};
  ASSERT_EQ(load.errors.size(), why.size());
  for (std::size_t k = 0; k < why.size(); ++k) {
    EXPECT_NE(load.errors[k].find(why[k]), std::string::npos) << load.errors[k];
  }
}

TEST(PluginLoader, AWellFormedTestPluginLoadsSoTheRefusalsBelowAreNotVacuous) {
  const PluginLoad load = LoadPlugins({LNV_TEST_PLUGIN_FINE});
  EXPECT_TRUE(load.errors.empty());
  EXPECT_EQ(Names(load), std::vector<std::string>{"plugin:lnv_abi_fine/f32/fine/test"});
}

TEST(PluginLoader, AMissingFileIsRefusedWithDlopensReason) {
  const std::string e = OnlyError("/nonexistent/libnothing.so");
  EXPECT_NE(e.find("/nonexistent/libnothing.so: cannot load: "), std::string::npos) << e;
  EXPECT_NE(e.find("No such file"), std::string::npos) << e;
}

TEST(PluginLoader, AFileThatIsNotASharedLibraryIsRefused) {
  const auto path = TempDir("text") / "libtext.so";
  std::ofstream(path) << "not an ELF file\n";
  EXPECT_NE(OnlyError(path.string()).find("cannot load: "), std::string::npos);
}

TEST(PluginLoader, ALibraryWithoutLnvPluginGetIsRefused) {
  EXPECT_NE(OnlyError(LNV_TEST_PLUGIN_NO_SYMBOL).find("no symbol lnv_plugin_get"),
            std::string::npos);
}

TEST(PluginLoader, APluginWhoseGetReturnsNullIsRefused) {
  EXPECT_NE(OnlyError(LNV_TEST_PLUGIN_RETURNS_NULL).find("returned NULL"), std::string::npos);
}

TEST(PluginLoader, AWrongAbiMajorIsRefusedNamingBothVersions) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_WRONG_ABI_MAJOR);
  EXPECT_NE(e.find("built for plugin ABI 2.0, this host speaks ABI 1"), std::string::npos) << e;
}

TEST(PluginLoader, APluginStructSmallerThanTheHostsIsRefused) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_SMALL_STRUCT);
  EXPECT_NE(e.find("lnv_plugin.struct_size is 8, less than"), std::string::npos) << e;
}

TEST(PluginLoader, AKernelStructSmallerThanTheHostsIsRefused) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_SMALL_KERNEL_STRUCT);
  EXPECT_NE(e.find("lnv_kernel.struct_size is 16, less than"), std::string::npos) << e;
}

TEST(PluginLoader, APluginListingNoKernelsIsRefused) {
  EXPECT_NE(OnlyError(LNV_TEST_PLUGIN_NO_KERNELS).find("lists no kernels"), std::string::npos);
}

TEST(PluginLoader, ADuplicateNameIsRefusedAndTheOtherKernelsLoad) {
  const PluginLoad load = LoadPlugins({LNV_TEST_PLUGIN_DUPLICATE_NAMES});
  EXPECT_EQ(Names(load),
            (std::vector<std::string>{"plugin:lnv_abi_duplicate_names/f32/twin/test",
                                      "plugin:lnv_abi_duplicate_names/f32/single/test"}));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_NE(
      load.errors[0].find("kernel 1: duplicate name plugin:lnv_abi_duplicate_names/f32/twin/test"),
      std::string::npos)
      << load.errors[0];
}

TEST(PluginLoader, TwoLibrariesWithTheSameStemCollideByName) {
  const auto copy = TempDir("stem") / "liblnv_example.so";
  std::filesystem::copy_file(LNV_EXAMPLE_PLUGIN, copy,
                             std::filesystem::copy_options::overwrite_existing);
  const PluginLoad load = LoadPlugins({LNV_EXAMPLE_PLUGIN, copy.string()});
  EXPECT_EQ(load.impls.size(), 2u);
  ASSERT_EQ(load.errors.size(), 2u);
  EXPECT_NE(load.errors[0].find("duplicate name plugin:lnv_example/f32/layer_norm/c"),
            std::string::npos);
}

TEST(PluginLoader, TheSameLibraryNamedTwiceLoadsOnce) {
  const PluginLoad load = LoadPlugins({LNV_EXAMPLE_PLUGIN, LNV_EXAMPLE_PLUGIN});
  EXPECT_TRUE(load.errors.empty());
  EXPECT_EQ(load.impls.size(), 2u);
}

TEST(PluginLoader, BadKernelsAreSkippedEachWithItsReasonAndTheGoodOneLoads) {
  const PluginLoad load = LoadPlugins({LNV_TEST_PLUGIN_BAD_KERNELS});
  EXPECT_EQ(Names(load), std::vector<std::string>{"plugin:lnv_abi_bad_kernels/f32/good/test"});
  ASSERT_EQ(load.errors.size(), 4u);
  EXPECT_NE(load.errors[0].find("kernel 0 (f32/no_forward/test): forward is NULL"),
            std::string::npos);
  EXPECT_NE(load.errors[1].find("kernel 1: name is NULL"), std::string::npos);
  EXPECT_NE(load.errors[2].find("kernel 2: name is NULL, empty, or not printable"),
            std::string::npos);
  EXPECT_NE(load.errors[3].find("kernel 3 (f32/bad_dtype/test): unknown norm or dtype"),
            std::string::npos);
}

// The same reason in every build: under ASan the child's SEGV reaches a
// sanitizer handler that would end it with an exit status, not the signal.
TEST(PluginLoader, APluginThatCrashesWhileLoadingIsRefusedAndThisProcessSurvives) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_CRASHES_ON_GET);
  EXPECT_NE(e.find("crashed the process with signal 11 (SIGSEGV"), std::string::npos) << e;
}

TEST(PluginLoader, APluginThatAbortsWhileLoadingIsReportedAsACrashBySIGABRT) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_ABORTS_ON_GET);
  EXPECT_NE(e.find("crashed the process with signal 6 (SIGABRT"), std::string::npos) << e;
}

TEST(PluginLoader, APluginThatExitsWhileLoadingIsReportedAsAnExitNotACrash) {
  const std::string e = OnlyError(LNV_TEST_PLUGIN_EXITS_ON_GET);
  EXPECT_NE(e.find("loading it exited the process with status 3"), std::string::npos) << e;
  EXPECT_EQ(e.find("signal"), std::string::npos) << e;
}

TEST(PluginLoader, LnvPluginsIsColonSeparatedAndComesBeforeTheCommandLine) {
  setenv("LNV_PLUGINS", ":" LNV_TEST_PLUGIN_FINE "::" LNV_TEST_PLUGIN_RETURNS_NULL ":", 1);
  EXPECT_EQ(PluginPathsFromEnv(),
            (std::vector<std::string>{LNV_TEST_PLUGIN_FINE, LNV_TEST_PLUGIN_RETURNS_NULL}));
  const PluginLoad all = ImplsWithPlugins({LNV_EXAMPLE_PLUGIN});
  unsetenv("LNV_PLUGINS");
  ASSERT_EQ(all.impls.size(), AllImpls().size() + 3);
  EXPECT_EQ(all.impls[AllImpls().size()].name, "plugin:lnv_abi_fine/f32/fine/test");
  EXPECT_EQ(all.impls.back().name, "plugin:lnv_example/f32/rms_norm/c");
  ASSERT_EQ(all.errors.size(), 1u);
  EXPECT_NE(all.errors[0].find("returned NULL"), std::string::npos);
}

}  // namespace
}  // namespace lnv
