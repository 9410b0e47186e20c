"""The DeepSeek-V4 sparse attention ops with upstream's positional signatures (see kparity._family.Op)."""
from ._family import Op

paged_prefill = Op("sparse/paged_prefill")
paged_decode = Op("sparse/paged_decode")

__all__ = ["paged_prefill", "paged_decode"]
