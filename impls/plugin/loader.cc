#include "impls/plugin/loader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>

#include "impls/plugin/lnv_plugin.h"

namespace lnv {
namespace {

constexpr std::string_view kPluginPrefix = "plugin:";
constexpr double kProbeTimeoutSeconds = 10;

using GetFn = const lnv_plugin* (*)(std::uint32_t);

bool ValidDType(std::int64_t t) {
  return t == LNV_F32 || t == LNV_F16 || t == LNV_BF16 || t == LNV_F64;
}

// A plugin's enum field read as the integer it is: loading a value outside
// the enum's range through the enum type is undefined behaviour in C++, and
// an untrusted plugin is exactly where such values come from. So every enum
// field is read as its underlying integer, validated, and only then converted.
template <class Enum>
std::int64_t RawEnum(const Enum& field) {
  using Int = std::underlying_type_t<Enum>;
  Int v;
  std::memcpy(&v, &field, sizeof v);
  return static_cast<std::int64_t>(v);
}

// sizeof(lnv_kernel) in ABI 1.0: everything before the 1.1 claim fields. A
// plugin built against 1.0 has this struct_size and keeps the generic claim.
constexpr std::size_t kKernelSize10 = offsetof(lnv_kernel, algorithm);

// The 1.1 claim fields of k into info, when struct_size covers them; "" or
// why they are not a valid claim.
std::string ReadClaim(const lnv_kernel& k, std::uint32_t stride, ImplInfo* info) {
  info->algorithm = Algorithm::kUnknown;
  info->reduction = Reduction::kSerial;
  if (stride < sizeof(lnv_kernel)) return "";  // ABI 1.0: the generic claim
  const bool layer = info->norm == Norm::kLayerNorm;
  switch (RawEnum(k.algorithm)) {
    case LNV_ALGO_UNKNOWN:
      break;
    case LNV_ALGO_TWO_PASS:
      if (!layer) return "algorithm TWO_PASS is LayerNorm's (RMSNorm: SUM_OF_SQUARES)";
      info->algorithm = Algorithm::kTwoPass;
      break;
    case LNV_ALGO_WELFORD:
      if (!layer) return "algorithm WELFORD is LayerNorm's (RMSNorm: SUM_OF_SQUARES)";
      info->algorithm = Algorithm::kWelford;
      break;
    case LNV_ALGO_KAHAN:
      info->algorithm = Algorithm::kKahanTwoPass;
      break;
    case LNV_ALGO_SUM_OF_SQUARES:
      if (layer) return "algorithm SUM_OF_SQUARES is RMSNorm's (LayerNorm: TWO_PASS or WELFORD)";
      info->algorithm = Algorithm::kSumOfSquares;
      break;
    default:
      return "unknown algorithm " + std::to_string(RawEnum(k.algorithm));
  }
  const std::int64_t reduction = RawEnum(k.reduction);
  if (reduction == LNV_REDUCTION_TREE) {
    // At most 2^40: the bound models add the chunk to row lengths in int64.
    if (k.chunk < 1 || k.chunk > (std::int64_t{1} << 40)) {
      return "reduction TREE needs chunk in [1, 2^40], got " + std::to_string(k.chunk);
    }
    info->reduction = Reduction::kTree;
    info->chunk = k.chunk;
  } else if (reduction != LNV_REDUCTION_SERIAL) {
    return "unknown reduction " + std::to_string(reduction);
  } else if (k.chunk != 0) {
    return "chunk is " + std::to_string(k.chunk) + " with reduction SERIAL (0 expected)";
  }
  // 0 means no limit; a NaN or negative limit is a bug in the plugin.
  for (const auto& [value, field, name] :
       {std::tuple{k.max_row_sumsq, &info->max_row_sumsq, "max_row_sumsq"},
        std::tuple{k.max_backward_weight, &info->max_backward_weight, "max_backward_weight"}}) {
    if (!(value >= 0)) return std::string(name) + " is " + std::to_string(value) + " (0: no limit)";
    if (value > 0) *field = value;
  }
  info->bound_algorithm = info->algorithm;
  return "";
}

bool ValidName(const char* name) {
  if (name == nullptr || name[0] == '\0') return false;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p <= ' ' || *p > '~') return false;  // printable ASCII, no spaces
  }
  return true;
}

std::string Stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
  return stem;
}

// The fatal signals a probe reports as a crash, whichever way its process
// then ends: killed by the signal, or exited by a sanitizer's handler.
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
int g_probe_fault_fd = -1;

// Async-signal-safe: one byte down the pipe. SA_RESETHAND has restored the
// default action, so returning re-raises the fault and ends the child by it.
void OnProbeFault(int sig) {
  const auto byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = write(g_probe_fault_fd, &byte, 1);
}

// In the probe child: record any fatal signal in fault_fd before dying of it.
// Our handler replaces a sanitizer's, so the child also dies by the signal.
void ReportFaultsTo(int fault_fd) {
  g_probe_fault_fd = fault_fd;
  struct sigaction sa = {};
  sa.sa_handler = &OnProbeFault;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFaultSignals) sigaction(sig, &sa, nullptr);
}

std::string SignalText(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (abbrev ? std::string("SIG") + abbrev : "") +
         (abbrev && text ? ", " : "") + (text ? text : "") + ")";
}

// Loads the library and reads its plugin table without keeping anything:
// run in a child process first, so that a constructor or lnv_plugin_get that
// crashes or hangs costs the child, not the tool.
int ProbeInChild(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return 0;  // the parent reports dlopen's own error
  const auto get = reinterpret_cast<GetFn>(dlsym(handle, "lnv_plugin_get"));
  if (get == nullptr) return 0;
  const lnv_plugin* p = get(LNV_PLUGIN_ABI_MAJOR);
  if (p == nullptr || p->abi_major != LNV_PLUGIN_ABI_MAJOR || p->struct_size < sizeof(lnv_plugin) ||
      p->count <= 0 || p->kernels == nullptr) {
    return 0;
  }
  const auto* base = reinterpret_cast<const unsigned char*>(p->kernels);
  const std::uint32_t stride = p->kernels[0].struct_size;
  if (stride < kKernelSize10) return 0;
  volatile std::size_t sink = 0;  // touch every name: a wild pointer faults here
  for (std::int32_t i = 0; i < p->count; ++i) {
    const auto* k =
        reinterpret_cast<const lnv_kernel*>(base + static_cast<std::size_t>(i) * stride);
    if (k->name != nullptr) sink = sink + std::string_view(k->name).size();
  }
  return 0;
}

// How the probe child ended, as a reason to refuse the plugin; "" when
// loading it went fine. A fault recorded by the child's handler wins over the
// exit status: a sanitizer's handler may turn a SIGSEGV into exit(1).
std::string ProbeOutcome(int status, int fault_signal) {
  if (fault_signal != 0) {
    return "loading it or calling lnv_plugin_get (or reading its kernel table) crashed the "
           "process with " +
           SignalText(fault_signal);
  }
  if (WIFSIGNALED(status)) {
    return "loading it or calling lnv_plugin_get (or reading its kernel table) killed the "
           "process with " +
           SignalText(WTERMSIG(status));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return "loading it exited the process with status " + std::to_string(WEXITSTATUS(status));
  }
  return "";
}

// "" when loading the library in a child process went fine.
std::string Probe(const std::string& path) {
  int fault_pipe[2];
  if (pipe2(fault_pipe, O_CLOEXEC) != 0) return "";  // cannot probe: load it directly
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fault_pipe[0]);
    close(fault_pipe[1]);
    return "";
  }
  if (pid == 0) {
    close(fault_pipe[0]);
    ReportFaultsTo(fault_pipe[1]);
    _exit(ProbeInChild(path));
  }
  close(fault_pipe[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(kProbeTimeoutSeconds);
  int status = 0;
  std::string outcome;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      unsigned char sig = 0;  // the write end is closed now: read cannot block
      const ssize_t n = read(fault_pipe[0], &sig, 1);
      outcome = ProbeOutcome(status, n == 1 ? sig : 0);
      break;
    }
    if (w < 0) break;
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      outcome = "loading it or calling lnv_plugin_get did not finish within " +
                std::to_string(static_cast<int>(kProbeTimeoutSeconds)) + " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  close(fault_pipe[0]);
  return outcome;
}

void LoadOne(const std::string& path, std::set<std::string>* names, PluginLoad* out) {
  auto fail = [&](const std::string& why) { out->errors.push_back("plugin " + path + ": " + why); };
  if (const std::string crash = Probe(path); !crash.empty()) return fail(crash);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return fail(std::string("cannot load: ") + (e != nullptr ? e : "unknown dlopen error"));
  }
  auto get = reinterpret_cast<GetFn>(dlsym(handle, "lnv_plugin_get"));
  if (get == nullptr) return fail("no symbol lnv_plugin_get (is it exported with C linkage?)");
  const lnv_plugin* plugin = get(LNV_PLUGIN_ABI_MAJOR);
  if (plugin == nullptr) {
    return fail("lnv_plugin_get(" + std::to_string(LNV_PLUGIN_ABI_MAJOR) +
                ") returned NULL: it cannot serve this host's ABI");
  }
  // abi_major and struct_size are the first fields of every version.
  if (plugin->abi_major != LNV_PLUGIN_ABI_MAJOR) {
    return fail("built for plugin ABI " + std::to_string(plugin->abi_major) + "." +
                std::to_string(plugin->abi_minor) + ", this host speaks ABI " +
                std::to_string(LNV_PLUGIN_ABI_MAJOR) + " (rebuild it against this lnv_plugin.h)");
  }
  if (plugin->struct_size < sizeof(lnv_plugin)) {
    return fail("lnv_plugin.struct_size is " + std::to_string(plugin->struct_size) +
                ", less than this host's " + std::to_string(sizeof(lnv_plugin)) +
                " (set it to sizeof(lnv_plugin))");
  }
  if (plugin->count <= 0 || plugin->kernels == nullptr) {
    return fail("lists no kernels (count " + std::to_string(plugin->count) + ", kernels " +
                (plugin->kernels == nullptr ? "NULL" : "non-NULL") + ")");
  }
  // Kernels are laid out with the plugin's own struct size (checked first).
  const std::uint32_t stride = plugin->kernels[0].struct_size;
  if (stride < kKernelSize10) {
    return fail("lnv_kernel.struct_size is " + std::to_string(stride) + ", less than ABI 1.0's " +
                std::to_string(kKernelSize10) + " (set it to sizeof(lnv_kernel))");
  }
  const std::string stem = Stem(path);
  const auto* base = reinterpret_cast<const unsigned char*>(plugin->kernels);
  for (std::int32_t i = 0; i < plugin->count; ++i) {
    const auto* k =
        reinterpret_cast<const lnv_kernel*>(base + static_cast<std::size_t>(i) * stride);
    const std::string where = "kernel " + std::to_string(i);
    if (k->struct_size != stride) {
      fail(where + ": struct_size " + std::to_string(k->struct_size) + " differs from kernel 0's " +
           std::to_string(stride));
      continue;
    }
    if (!ValidName(k->name)) {
      fail(where + ": name is NULL, empty, or not printable ASCII without spaces");
      continue;
    }
    if (k->forward == nullptr) {
      fail(where + " (" + k->name + "): forward is NULL");
      continue;
    }
    const std::int64_t norm = RawEnum(k->norm), x_dtype = RawEnum(k->x_dtype),
                       param_dtype = RawEnum(k->param_dtype), acc_dtype = RawEnum(k->acc_dtype);
    if (!ValidDType(x_dtype) || !ValidDType(param_dtype) || !ValidDType(acc_dtype) ||
        (norm != LNV_LAYER_NORM && norm != LNV_RMS_NORM)) {
      fail(where + " (" + k->name + "): unknown norm or dtype");
      continue;
    }
    ImplInfo info;
    info.name = std::string(kPluginPrefix) + stem + "/" + k->name;
    if (!names->insert(info.name).second) {
      fail(where + ": duplicate name " + info.name);
      continue;
    }
    info.norm = static_cast<Norm>(norm);
    info.x_dtype = static_cast<DType>(x_dtype);
    info.param_dtype = static_cast<DType>(param_dtype);
    info.acc_dtype = static_cast<DType>(acc_dtype);
    info.bound_algorithm = Algorithm::kUnknown;
    if (const std::string bad = ReadClaim(*k, stride, &info); !bad.empty()) {
      names->erase(info.name);
      fail(where + " (" + k->name + "): " + bad);
      continue;
    }
    info.status = ImplStatus::kClaimsBound;
    info.forward = k->forward;
    info.backward = k->backward;
    info.source = path;
    out->impls.push_back(std::move(info));
  }
}

}  // namespace

PluginLoad LoadPlugins(const std::vector<std::string>& paths) {
  PluginLoad out;
  std::set<std::string> names;
  for (const auto& impl : AllImpls()) names.insert(impl.name);
  std::set<std::string> seen;
  for (const auto& path : paths) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(path, ec);
    if (!seen.insert(ec ? path : canonical.string()).second) continue;  // named twice
    LoadOne(path, &names, &out);
  }
  return out;
}

std::vector<std::string> PluginPathsFromEnv() {
  std::vector<std::string> paths;
  const char* env = std::getenv("LNV_PLUGINS");
  if (env == nullptr) return paths;
  std::string_view rest(env);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    std::string_view item = rest.substr(0, colon);
    if (!item.empty()) paths.emplace_back(item);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return paths;
}

PluginLoad ImplsWithPlugins(const std::vector<std::string>& extra_paths) {
  std::vector<std::string> paths = PluginPathsFromEnv();
  paths.insert(paths.end(), extra_paths.begin(), extra_paths.end());
  PluginLoad loaded = LoadPlugins(paths);
  PluginLoad out;
  out.impls = AllImpls();
  out.impls.insert(out.impls.end(), loaded.impls.begin(), loaded.impls.end());
  out.errors = std::move(loaded.errors);
  return out;
}

bool IsPluginImpl(const ImplInfo& impl) { return impl.name.starts_with(kPluginPrefix); }

}  // namespace lnv
