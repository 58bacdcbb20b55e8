#include "impls/thirdparty/aten_layer_norm.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "impls/plugin/lnv_plugin.h"

#ifndef LNV_ATEN_MODULE
#error "LNV_ATEN_MODULE (the path of the built ATen module) must be defined"
#endif

namespace lnv::thirdparty {
namespace {

struct Module {
  std::string error;                 // "" when loaded
  const lnv_kernel* f32 = nullptr;   // f32/native_layer_norm/aten
  const lnv_kernel* bf16 = nullptr;  // bf16/native_layer_norm/aten
};

Module LoadModule() {
  Module m;
  void* handle = dlopen(LNV_ATEN_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    m.error = std::string("cannot load ") + LNV_ATEN_MODULE + ": " + (e ? e : "unknown error");
    return m;
  }
  using GetFn = const lnv_plugin* (*)(std::uint32_t);
  const auto get = reinterpret_cast<GetFn>(dlsym(handle, "lnv_plugin_get"));
  const lnv_plugin* p = get != nullptr ? get(LNV_PLUGIN_ABI_MAJOR) : nullptr;
  if (p == nullptr || p->abi_major != LNV_PLUGIN_ABI_MAJOR) {
    m.error = std::string(LNV_ATEN_MODULE) + " does not serve plugin ABI " +
              std::to_string(LNV_PLUGIN_ABI_MAJOR);
    return m;
  }
  for (std::int32_t i = 0; i < p->count; ++i) {  // built with this very header
    const lnv_kernel& k = p->kernels[i];
    if (std::strcmp(k.name, "f32/native_layer_norm/aten") == 0) m.f32 = &k;
    if (std::strcmp(k.name, "bf16/native_layer_norm/aten") == 0) m.bf16 = &k;
  }
  if (m.f32 == nullptr || m.bf16 == nullptr)
    m.error = std::string(LNV_ATEN_MODULE) + " lacks a kernel";
  return m;
}

const Module& TheModule() {
  static const Module m = [] {
    Module loaded = LoadModule();
    if (!loaded.error.empty())
      std::fprintf(stderr, "lnverify: ATen kernels: %s\n", loaded.error.c_str());
    return loaded;
  }();
  return m;
}

template <DType kX>
const lnv_kernel* Kernel() {
  const Module& m = TheModule();
  if (!m.error.empty()) return nullptr;
  return kX == DType::kBF16 ? m.bf16 : m.f32;
}

}  // namespace

template <DType kX>
int AtenLayerNormForward(const ForwardArgs* args) {
  const lnv_kernel* k = Kernel<kX>();
  return k != nullptr ? k->forward(args) : kAtenModuleUnavailable;
}

template <DType kX>
int AtenLayerNormBackward(const BackwardArgs* args) {
  const lnv_kernel* k = Kernel<kX>();
  return k != nullptr ? k->backward(args) : kAtenModuleUnavailable;
}

std::string AtenModuleError() { return TheModule().error; }

template int AtenLayerNormForward<DType::kF32>(const ForwardArgs*);
template int AtenLayerNormForward<DType::kBF16>(const ForwardArgs*);
template int AtenLayerNormBackward<DType::kF32>(const BackwardArgs*);
template int AtenLayerNormBackward<DType::kBF16>(const BackwardArgs*);

}  // namespace lnv::thirdparty
