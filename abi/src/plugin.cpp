// Loading an implementation plugin and calling its entry points (plugin.hpp, kparity/impl_abi.h).
#include "kparity/abi/plugin.hpp"

#include <dlfcn.h>

#include <array>
#include <map>
#include <optional>

#include "kparity/abi/dlpack_views.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::abi {
namespace {

std::string symbol_of(std::string_view op) {
  std::string s = "kparity_impl_" + std::string(op);
  for (char& c : s)
    if (c == '/') c = '_';
  return s;
}

// The DLTensors of one call, by argument name.
class Arguments {
 public:
  explicit Arguments(const ArgBag& bag) : bag_(bag) {
    for (const auto& [name, view] : bag.tensors) views_.emplace(name, std::make_unique<DLView>(view));
  }
  DLTensor* t(const char* name) const {
    const auto it = views_.find(name);
    return it == views_.end() ? nullptr : &it->second->tensor;
  }
  double s(const char* name) const { return bag_.required_scalar(name); }
  const double* opt(const char* name) {
    const auto v = bag_.scalar(name);
    if (!v) return nullptr;
    return &optional_.emplace(name, *v).first->second;
  }
  int f(const char* name) const { return bag_.flag(name) ? 1 : 0; }

 private:
  const ArgBag& bag_;
  std::map<std::string, std::unique_ptr<DLView>> views_;
  std::map<std::string, double> optional_;
};

}  // namespace

std::string_view status_name(int status) noexcept {
  switch (status) {
    case KPARITY_IMPL_OK: return "ok";
    case KPARITY_IMPL_REJECTED: return "rejected";
    case KPARITY_IMPL_UNSUPPORTED: return "unsupported";
    case KPARITY_IMPL_ERROR: return "error";
    default: return "unknown status";
  }
}

std::shared_ptr<const Plugin> Plugin::load(const std::string& path) {
  std::shared_ptr<Plugin> p(new Plugin());
  p->path_ = path;
  p->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle_) {
    const char* e = dlerror();
    throw PluginError("cannot load implementation plugin '" + path + "': " + (e ? e : "dlopen failed"));
  }
  auto info_fn = reinterpret_cast<kparity_impl_get_info_fn>(p->symbol("kparity_impl_get_info"));
  if (!info_fn) throw PluginError("'" + path + "' is not a kparity implementation plugin: it exports no kparity_impl_get_info");
  const kparity_impl_info* info = info_fn();
  if (!info) throw PluginError("'" + path + "': kparity_impl_get_info returned NULL");
  if (info->abi_version != KPARITY_IMPL_ABI_VERSION)
    throw PluginError("'" + path + "' was built for kparity implementation ABI " + std::to_string(info->abi_version) +
                      "; this kparity speaks ABI " + std::to_string(KPARITY_IMPL_ABI_VERSION) +
                      " (rebuild it against this kparity's kparity/impl_abi.h)");
  p->name_ = info->name && *info->name ? info->name : path;
  if (info->device_type == kDLCPU) p->device_ = Device::cpu();
  else if (info->device_type == kDLCUDA) p->device_ = Device::cuda(0);
  else throw PluginError("'" + path + "': device type " + std::to_string(info->device_type) + " (kparity runs kDLCPU or kDLCUDA plugins)");
  for (const auto& row : ops::op_table())
    if (p->symbol(symbol_of(row.op).c_str())) p->ops_.emplace_back(row.op);
  if (p->ops_.empty())
    throw PluginError("'" + path + "' (" + p->name_ + ") exports no op entry point (kparity_impl_kda_recurrent, ..., "
                      "kparity_impl_sparse_paged_decode)");
  return p;
}

Plugin::~Plugin() {
  if (handle_) dlclose(handle_);
}

void* Plugin::symbol(const char* name) const {
  dlerror();
  return dlsym(handle_, name);
}

bool Plugin::implements(std::string_view op) const {
  for (const auto& o : ops_)
    if (o == op) return true;
  return false;
}

PluginResult Plugin::call(std::string_view op, const ArgBag& bag, void* stream) const {
  if (!implements(op)) throw std::invalid_argument("plugin '" + name_ + "' does not implement " + std::string(op));
  void* fn = symbol(symbol_of(op).c_str());
  std::array<char, 4096> message{};
  const kparity_impl_context ctx{stream, message.data(), message.size()};
  Arguments a(bag);
  int st = KPARITY_IMPL_ERROR;
  if (op == kda::kRecurrentOp) {
    st = reinterpret_cast<kparity_impl_kda_recurrent_fn>(fn)(
        a.t("q"), a.t("k"), a.t("v"), a.t("g"), a.t("beta"), a.opt("scale"), a.t("initial_state"),
        a.f("use_qk_l2norm_in_kernel"), a.t("cu_seqlens"), a.t("a"), a.t("dt_bias"), a.t("A_log"), a.opt("lower_bound"),
        a.f("beta_is_logits"), a.t("out"), a.t("final_state"), &ctx);
  } else if (op == kda::kPackedDecodeOp) {
    st = reinterpret_cast<kparity_impl_kda_packed_decode_fn>(fn)(
        a.t("mixed_qkv"), a.t("a"), a.t("b"), a.t("A_log"), a.t("dt_bias"), a.s("scale"), a.t("initial_state"),
        a.t("out"), a.t("ssm_state_indices"), a.f("use_qk_l2norm_in_kernel"), a.opt("lower_bound"), &ctx);
  } else if (op == kda::kReplaySsmDecodeOp) {
    st = reinterpret_cast<kparity_impl_kda_replayssm_decode_fn>(fn)(
        a.t("mixed_qkv"), a.t("a"), a.t("b"), a.t("A_log"), a.t("dt_bias"), a.s("scale"), a.t("initial_state"),
        a.t("d_cache"), a.t("k_cache"), a.t("g_cache"), a.t("out"), a.t("ssm_state_indices"), a.t("write_pos"),
        a.t("force_flush"), a.f("use_qk_l2norm_in_kernel"), a.opt("lower_bound"), a.f("beta_in_fp32"), &ctx);
  } else if (op == sparse::kPagedPrefillOp) {
    const double* shift = a.opt("replicated_logit_shift");
    st = reinterpret_cast<kparity_impl_sparse_paged_prefill_fn>(fn)(
        a.t("q"), a.t("unified_kv"), a.t("kv_indices_prefix"), a.t("kv_indptr_prefix"), a.t("kv"),
        a.t("kv_indices_extend"), a.t("kv_indptr_extend"), a.t("attn_sink"), a.s("softmax_scale"), a.f("return_lse"),
        shift ? *shift : 0.0, a.t("out"), a.f("return_lse") ? a.t("lse") : nullptr, &ctx);
  } else if (op == sparse::kPagedDecodeOp) {
    st = reinterpret_cast<kparity_impl_sparse_paged_decode_fn>(fn)(
        a.t("q"), a.t("unified_kv"), a.t("kv_indices"), a.t("kv_indptr"), a.t("attn_sink"), a.s("softmax_scale"),
        a.f("return_lse"), a.t("out"), a.f("return_lse") ? a.t("lse") : nullptr, &ctx);
  }
  message.back() = '\0';
  PluginResult r;
  r.status = static_cast<kparity_impl_status>(st);
  if (st != KPARITY_IMPL_OK) {
    r.message = message.data();
    if (r.message.empty()) r.message = "(the plugin gave no message)";
  }
  return r;
}

}  // namespace kparity::abi
