"""The KDA ops with upstream's positional signatures (see kparity._family.Op)."""
from ._family import Op

recurrent = Op("kda/recurrent")
packed_decode = Op("kda/packed_decode")
replayssm_decode = Op("kda/replayssm_decode")

__all__ = ["recurrent", "packed_decode", "replayssm_decode"]
