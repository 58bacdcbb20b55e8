// Loading users' kernels from shared libraries (the plugin ABI,
// impls/plugin/lnv_plugin.h). Every tool and every ctest suite gets its
// kernel list from ImplsWithPlugins(): the built-in registry plus the
// plugins named by LNV_PLUGINS (colon-separated) and by --plugin.
// A plugin kernel appears as "plugin:<file stem>/<name>", status
// claims_bound, held to the generic bound of its accumulation dtype
// (Algorithm::kUnknown: the loosest stable model, serial, k = d - 1) over the
// full finite input range.
#ifndef LNV_IMPLS_PLUGIN_LOADER_H_
#define LNV_IMPLS_PLUGIN_LOADER_H_

#include <string>
#include <vector>

#include "impls/registry.h"

namespace lnv {

struct PluginLoad {
  std::vector<ImplInfo> impls;      // the kernels that loaded
  std::vector<std::string> errors;  // one line per plugin (or kernel) that did not
};

// Loads each path with dlopen(RTLD_NOW | RTLD_LOCAL). A library stays loaded
// for the life of the process (its function pointers are in the entries).
PluginLoad LoadPlugins(const std::vector<std::string>& paths);

// The paths in LNV_PLUGINS (colon-separated; empty entries ignored).
std::vector<std::string> PluginPathsFromEnv();

// AllImpls() followed by the plugins from LNV_PLUGINS and then extra_paths.
PluginLoad ImplsWithPlugins(const std::vector<std::string>& extra_paths = {});

}  // namespace lnv

#endif  // LNV_IMPLS_PLUGIN_LOADER_H_
