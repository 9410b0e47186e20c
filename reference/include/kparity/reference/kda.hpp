#pragma once
// Scalar references of the KDA ops. Each validates its inputs first (check_* with
// Entry::reference; `options` defaults to every kparity check, deep ones included, because the
// reference reads the data anyway), then updates outputs/state/rings in place like upstream.
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::reference::kda {

using kparity::kda::PackedDecodeArgs;
using kparity::kda::RecurrentArgs;
using kparity::kda::ReplaySsmDecodeArgs;

void recurrent(const RecurrentArgs& args, Precision p,
               const ValidateOptions& options = ValidateOptions::strict(Entry::reference));
void packed_decode(const PackedDecodeArgs& args, Precision p,
                   const ValidateOptions& options = ValidateOptions::strict(Entry::reference));
void replayssm_decode(const ReplaySsmDecodeArgs& args, Precision p,
                      const ValidateOptions& options = ValidateOptions::strict(Entry::reference));

// A-priori error bounds of every tensor the op writes (error_bound.hpp; the recipe is in
// reference/kda/error_bound.cpp). The call is assumed valid (run the contract first).
ErrorBounds recurrent_error_bound(const RecurrentArgs& args, const Fp32Model& m = {});
ErrorBounds packed_decode_error_bound(const PackedDecodeArgs& args, const Fp32Model& m = {});
ErrorBounds replayssm_decode_error_bound(const ReplaySsmDecodeArgs& args, const Fp32Model& m = {});

// The caller's cursor protocol (kda.md B.2.8), used by tests and fuzzing, not by the op: after a
// step, a row that flushed restarts at 0, any other non-padding row advances by one.
void advance_cursors(const ReplaySsmDecodeArgs& args);

}  // namespace kparity::reference::kda
