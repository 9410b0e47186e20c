"""The KDA ops with upstream's positional signatures (see kparity._family.Op)."""
from ._family import Op

recurrent = Op("kda/recurrent")
chunk = Op("kda/chunk")  # fla's chunk_kda (fla/ops/kda/chunk.py)
packed_decode = Op("kda/packed_decode")
replayssm_decode = Op("kda/replayssm_decode")

__all__ = ["recurrent", "chunk", "packed_decode", "replayssm_decode"]
