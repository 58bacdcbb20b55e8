// Loading users' kernels from shared libraries (the plugin ABI,
// impls/plugin/lnv_plugin.h). Every tool and every ctest suite gets its
// kernel list from ImplsWithPlugins(): the built-in registry plus the
// plugins named by LNV_PLUGINS (colon-separated) and by --plugin.
// A plugin kernel appears as "plugin:<file stem>/<name>" (a leading "lib" is
// dropped from the stem), status claims_bound. An ABI 1.0 kernel, or a 1.1
// kernel whose claim fields are zero, is held to the generic bound of its
// accumulation dtype (Algorithm::kUnknown: the loosest stable model, serial,
// k = d - 1) over the full finite input range; a 1.1 kernel that states an
// algorithm, reduction (and chunk) and valid range is held to exactly what a
// built-in kernel with that claim is held to.
//
// What is checked, each with a one-line error naming the plugin:
//   * the library loads (dlopen RTLD_NOW | RTLD_LOCAL: unresolved symbols
//     fail here), and loading it and calling lnv_plugin_get does not crash
//     or hang: both are tried first in a child process;
//   * it exports lnv_plugin_get with C linkage, which returns non-NULL for
//     this host's LNV_PLUGIN_ABI_MAJOR;
//   * abi_major is this host's, struct_size is at least this host's
//     sizeof(lnv_plugin) and ABI 1.0's sizeof(lnv_kernel) (a newer minor
//     version may append fields; a struct shorter than 1.0's is refused);
//   * a 1.1 claim names an algorithm of the kernel's norm, a reduction (TREE
//     with chunk >= 1, SERIAL with chunk 0) and limits that are >= 0;
//   * count > 0 with a non-NULL kernels array;
//   * every kernel has a printable name without spaces, a forward, a known
//     norm and dtypes; a name already taken (by the registry, an earlier
//     kernel or an earlier plugin) is refused. A bad kernel is skipped; the
//     plugin's other kernels still load.
// The same library named twice (LNV_PLUGINS and --plugin) is loaded once.
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

// Loads each path. A library stays loaded for the life of the process (its
// function pointers are in the entries).
PluginLoad LoadPlugins(const std::vector<std::string>& paths);

// The paths in LNV_PLUGINS (colon-separated; empty entries ignored).
std::vector<std::string> PluginPathsFromEnv();

// AllImpls() followed by the plugins from LNV_PLUGINS and then extra_paths.
PluginLoad ImplsWithPlugins(const std::vector<std::string>& extra_paths = {});

// Whether a registry entry came from a plugin ("plugin:" names): such
// kernels are run in a child process by ln_check (harness/isolate.h).
bool IsPluginImpl(const ImplInfo& impl);

}  // namespace lnv

#endif  // LNV_IMPLS_PLUGIN_LOADER_H_
