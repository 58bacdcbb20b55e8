#include "impls/plugin/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>

#include "impls/plugin/lnv_plugin.h"

namespace lnv {
namespace {

bool ValidDType(int t) { return t == LNV_F32 || t == LNV_F16 || t == LNV_BF16 || t == LNV_F64; }

std::string Stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
  return stem;
}

void LoadOne(const std::string& path, std::set<std::string>* names, PluginLoad* out) {
  auto fail = [&](const std::string& why) { out->errors.push_back("plugin " + path + ": " + why); };
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return fail(std::string("cannot load: ") + (e != nullptr ? e : "unknown dlopen error"));
  }
  using GetFn = const lnv_plugin* (*)(std::uint32_t);
  auto get = reinterpret_cast<GetFn>(dlsym(handle, "lnv_plugin_get"));
  if (get == nullptr) return fail("no symbol lnv_plugin_get (is it exported with C linkage?)");
  const lnv_plugin* plugin = get(LNV_PLUGIN_ABI_MAJOR);
  if (plugin == nullptr) {
    return fail("lnv_plugin_get(" + std::to_string(LNV_PLUGIN_ABI_MAJOR) + ") returned NULL: it cannot serve this ABI");
  }
  if (plugin->struct_size < sizeof(lnv_plugin)) {
    return fail("lnv_plugin.struct_size " + std::to_string(plugin->struct_size) + " < " +
                std::to_string(sizeof(lnv_plugin)) + ": built against another ABI");
  }
  if (plugin->abi_major != LNV_PLUGIN_ABI_MAJOR) {
    return fail("abi_major " + std::to_string(plugin->abi_major) + ", this host speaks " +
                std::to_string(LNV_PLUGIN_ABI_MAJOR));
  }
  if (plugin->count < 0 || (plugin->count > 0 && plugin->kernels == nullptr)) {
    return fail("count " + std::to_string(plugin->count) + " with kernels = NULL");
  }
  const std::string stem = Stem(path);
  const auto* base = reinterpret_cast<const unsigned char*>(plugin->kernels);
  for (std::int32_t i = 0; i < plugin->count; ++i) {
    // Kernels are laid out with the plugin's own struct size (checked first).
    const auto* first = reinterpret_cast<const lnv_kernel*>(base);
    if (first->struct_size < sizeof(lnv_kernel)) {
      return fail("lnv_kernel.struct_size " + std::to_string(first->struct_size) + " < " +
                  std::to_string(sizeof(lnv_kernel)));
    }
    const auto* k = reinterpret_cast<const lnv_kernel*>(base + static_cast<std::size_t>(i) * first->struct_size);
    const std::string where = "kernel " + std::to_string(i);
    if (k->name == nullptr || k->name[0] == '\0') {
      fail(where + ": no name");
      continue;
    }
    if (k->forward == nullptr) {
      fail(where + " (" + k->name + "): forward is NULL");
      continue;
    }
    if (!ValidDType(k->x_dtype) || !ValidDType(k->param_dtype) || !ValidDType(k->acc_dtype) ||
        (k->norm != LNV_LAYER_NORM && k->norm != LNV_RMS_NORM)) {
      fail(where + " (" + k->name + "): unknown norm or dtype");
      continue;
    }
    ImplInfo info;
    info.name = "plugin:" + stem + "/" + k->name;
    if (!names->insert(info.name).second) {
      fail(where + ": duplicate name " + info.name);
      continue;
    }
    info.norm = static_cast<Norm>(k->norm);
    info.x_dtype = static_cast<DType>(k->x_dtype);
    info.param_dtype = static_cast<DType>(k->param_dtype);
    info.acc_dtype = static_cast<DType>(k->acc_dtype);
    info.algorithm = Algorithm::kUnknown;
    info.bound_algorithm = Algorithm::kUnknown;
    info.reduction = Reduction::kSerial;
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
  for (const auto& path : paths) LoadOne(path, &names, &out);
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

}  // namespace lnv
