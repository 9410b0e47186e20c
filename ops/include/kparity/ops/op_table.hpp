#pragma once
// The op table: everything kparity knows about an op's call that is not its contract or its math.
// One row per op (ops/src/op_table.cpp), read by the CLI (`kparity run`), the fuzz harness (its
// corpus, its references) and the Python package:
//
//   params    every argument, in upstream positional order (the order a Python `*args` binds in),
//             then kparity's keyword-only extras; each a tensor, a scalar or a flag, with upstream's
//             default spelled as in Python ("None", "False", "0.0"; empty: required);
//   written   the tensors the op writes (outputs and in-place state), in dump order; `pure` when the
//             op never reads their old contents; `only_if` names the flag without which it is not
//             written (sparse `lse` needs `return_lse`);
//   aliases   dump spellings that differ from the ArgBag's (kda/recurrent's `o`, `b` for logits);
//   allocate  adds the outputs upstream allocates itself (a dump or a binding may leave them out);
//   run       the scalar reference on an ArgBag.
//
// Names are upstream's, which are also the ArgBag keys of the op's contract (diagnostics/contracts).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::ops {

enum class ArgKind { tensor, scalar, flag };

struct Param {
  std::string_view name;
  ArgKind kind = ArgKind::tensor;
  std::string_view default_value;  // Python spelling of the default; empty: a required argument
  bool keyword_only = false;       // not an upstream positional parameter (kparity's, or an output upstream allocates)
};

struct Output {
  std::string_view name;
  bool pure = false;         // the old contents are never read (poisoned before a fuzzed run)
  std::string_view only_if;  // a flag that must be set for the op to write it; empty: always
};

// A dump name for an argument: `dump_name` is read as `name`, and a tensor read through it sets
// flag `sets_flag` if given (then `name_means`/`dump_means` say what each spelling holds, for the
// error when a dump has both).
struct Alias {
  std::string_view dump_name;
  std::string_view name;
  std::string_view sets_flag;
  std::string_view name_means;
  std::string_view dump_means;
};

struct OpInfo {
  std::string_view op;        // "kda/replayssm_decode", ... (the name every layer uses)
  std::string_view upstream;  // the upstream function whose signature `params` follows
  std::vector<Param> params;
  std::vector<Output> written;
  std::vector<Alias> aliases;
  void (*allocate)(ArgBag& bag, std::map<std::string, Tensor>& owned);
  void (*run)(const ArgBag& bag, reference::Precision p, const ValidateOptions& o);

  const Param* param(std::string_view name) const;
  // The names of `params` of one kind, in table order.
  std::vector<std::string_view> names(ArgKind kind) const;
  std::vector<std::string_view> tensors() const { return names(ArgKind::tensor); }
  std::vector<std::string_view> scalars() const { return names(ArgKind::scalar); }
  std::vector<std::string_view> flags() const { return names(ArgKind::flag); }
  std::vector<std::string_view> positional() const;  // upstream's positional parameters, in order
  std::vector<std::string_view> written_names() const;
  std::vector<std::string_view> pure_outputs() const;
  bool writes(std::string_view name) const;
  // The tensors a call with these arguments writes: those of `written` the bag holds, without the
  // ones whose `only_if` flag is unset.
  std::vector<std::string> written_by(const ArgBag& bag) const;
};

const std::vector<OpInfo>& op_table();
const OpInfo* find_op(std::string_view op);
// Throws std::invalid_argument naming the known ops.
const OpInfo& op_info(std::string_view op);
std::string known_ops();  // "kda/recurrent, kda/packed_decode, ..."

// The reference of `op` on arguments by name (throws what the reference throws, and
// std::invalid_argument for an op without one).
void run_reference(std::string_view op, const ArgBag& bag, reference::Precision p, const ValidateOptions& o);
// Adds zero tensors for the outputs of `op` the bag lacks and upstream would allocate, when the
// shapes they derive from allow; `owned` keeps them alive.
void allocate_outputs(std::string_view op, ArgBag& bag, std::map<std::string, Tensor>& owned);
// The outputs allocate_outputs would add to `bag`, as views without storage (data null, contiguous
// strides, labelled CPU): the shapes and dtypes upstream allocates, for checks of a call that leaves
// them to upstream, at no cost in memory (a null view touches no bytes in the overlap checks).
std::map<std::string, TensorView> output_views(std::string_view op, const ArgBag& bag);

}  // namespace kparity::ops
