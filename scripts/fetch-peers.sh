#!/usr/bin/env bash
# Fills the git-ignored .peers/ with what the peer benchmarks import (bench/peers/run_peers.py runs them
# on the GPU machine, which has torch and triton but no network; carry .peers there). Upstream code is
# never committed: it stays in .peers/.
#
#   FLA_MIRROR=<git dir> scripts/fetch-peers.sh [--check]
#
#   scripts  ../shared/peers/*.py (the project's peer scripts, not ours to edit; SHARED_PEERS to point
#            elsewhere) -> .peers/scripts/
#   fla      `git archive $FLA_COMMIT fla` of a fetched fla-org/flash-linear-attention mirror -> .peers/fla/
#            (FLA_MIRROR: the git directory the session's fetch tool returns for
#            github:fla-org/flash-linear-attention, e.g. /work/.mirror/fla-org+flash-linear-attention/repo;
#            FLA_COMMIT default bc3b101d, the commit the peer figures were measured at)
#   sglang   three files the sglang repository is too large to fetch for. Read each with the search
#            tool's read_file (repo sgl-project/sglang, the path and commit below, the commit given
#            explicitly: without it read_file may answer another version; page with `offset` until
#            `total_chars`) and write the text exactly, as .peers/<name>:
#              fused_recurrent_linear_replayssm.py  python/sglang/kernels/ops/attention/fla/
#                                                   @ 03a70bf334be953130693f4f67453c33ca7f3290 (37011 chars)
#              paged_prefill.py                     python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/
#                                                   @ 856c2e57c8a03551f7659a13e05c2ab92989e43f (12551 chars)
#              paged_decode.py                      python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/
#                                                   @ 078e5e2a5227bb6af1727574bb6212f0afb25250 (35846 chars)
#            Either write each file directly, or save each page's "text" value as read_file returned it
#            (the JSON string's body, escapes and all, on one line) as .peers/raw/<stem>.<offset>.jsonstr
#            (<stem> without .py): this script then joins and decodes the pages. Either way it checks the
#            character counts read_file reported.
#   --check  change nothing; report what is there and what is missing (exit 1 if anything is).
set -euo pipefail
cd "$(dirname "$0")/.."
PEERS=.peers
FLA_COMMIT=${FLA_COMMIT:-bc3b101d}
SHARED=${SHARED_PEERS:-}  # the project's shared folder beside the checkout (a worktree sits one level deeper)
if [ -z "$SHARED" ]; then for d in ../shared/peers ../../shared/peers; do [ -d "$d" ] && { SHARED=$d; break; }; done; fi
SHARED=${SHARED:-../shared/peers}
check_only=0
[ "${1:-}" = "--check" ] && check_only=1
mkdir -p "$PEERS"
missing=0

if [ $check_only = 0 ]; then
  if [ -d "$SHARED" ]; then
    mkdir -p "$PEERS/scripts"
    cp "$SHARED"/*.py "$SHARED"/README.md "$PEERS/scripts/" 2>/dev/null || true
  else
    echo "fetch-peers: $SHARED not found: peer scripts not copied" >&2
  fi
  if [ -n "${FLA_MIRROR:-}" ]; then
    rm -rf "$PEERS/fla"
    git -C "$FLA_MIRROR" archive "$FLA_COMMIT" fla | tar -x -C "$PEERS"
    echo "fla @ $(git -C "$FLA_MIRROR" rev-parse --short "$FLA_COMMIT") -> $PEERS/fla"
  fi
fi

for s in bench_replayssm_peer.py bench_sparse_peer.py bench_sparse_decode_peer.py bench_kda_decode_fla_peer.py \
         bench_kda_prefill_peer.py; do
  [ -f "$PEERS/scripts/$s" ] || { echo "missing: $PEERS/scripts/$s (from $SHARED)"; missing=1; }
done
[ -f "$PEERS/fla/ops/kda/fused_recurrent.py" ] || { echo "missing: $PEERS/fla (FLA_MIRROR=... $0)"; missing=1; }
# name, characters reported by read_file (total_chars); python counts code points as read_file does.
while read -r name chars; do
  f=$PEERS/$name
  if [ $check_only = 0 ] && ls "$PEERS/raw/${name%.py}".*.jsonstr >/dev/null 2>&1; then
    python3 - "$PEERS" "${name%.py}" <<'PY' || missing=1
import glob, json, os, sys
peers, stem = sys.argv[1], sys.argv[2]
pages = sorted(glob.glob(os.path.join(peers, "raw", stem + ".*.jsonstr")), key=lambda p: int(p.rsplit(".", 2)[1]))
text = ""
for p in pages:
    if int(p.rsplit(".", 2)[1]) != len(text):
        sys.exit(f"fetch-peers: {p} starts at offset {p.rsplit('.', 2)[1]}, but the pages before it hold {len(text)}")
    text += json.loads('"' + open(p, encoding="utf-8").read().rstrip("\n") + '"')
open(os.path.join(peers, stem + ".py"), "w", encoding="utf-8").write(text)
PY
  fi
  if [ ! -f "$f" ]; then
    echo "missing: $f (read it with read_file, see the header of $0)"; missing=1; continue
  fi
  n=$(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$f")
  if [ -n "$chars" ] && [ "$n" != "$chars" ]; then
    echo "wrong size: $f has $n characters, read_file reported $chars"; missing=1
  else
    echo "ok: $f ($n characters)"
  fi
done <<EOF
fused_recurrent_linear_replayssm.py 37011
paged_prefill.py 12551
paged_decode.py 35846
EOF
[ $missing = 0 ] && echo "fetch-peers: $PEERS complete (carry it to the GPU machine)"
exit $missing
