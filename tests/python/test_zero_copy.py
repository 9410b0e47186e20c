"""Tensors cross through DLPack as views of the caller's memory: data pointer, shape and strides are
the producer's, whatever the layout; nothing is copied for a check."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import kparity
from kparity import _kparity
from kp_helpers import Labelled, replayssm_args

BASE = torch.arange(4 * 6 * 8, dtype=torch.float32).reshape(4, 6, 8)

VIEWS = {
    "contiguous": BASE,
    "transposed": BASE.transpose(0, 2),
    "sliced": BASE[1:3, ::2, 3:],
    "offset": BASE.reshape(-1)[5:5 + 40].reshape(5, 8),
    "expanded": torch.ones(3, 1).expand(3, 7),
    "column": BASE[:, :, 2],
    "empty": BASE[:, :0],
    "scalar": BASE[1, 2, 3],
    "bf16 strided": torch.zeros(8, 10, dtype=torch.bfloat16)[:, 1::3],
}


@pytest.mark.parametrize("name", VIEWS)
def test_torch_views_keep_pointer_shape_strides(name: str) -> None:
    t = VIEWS[name]
    v = _kparity._view(t)
    assert v["shape"] == list(t.shape)
    if t.numel() == 0:
        return  # no element: pointer and strides carry nothing (torch exports them normalised)
    assert v["data"] == t.data_ptr()
    assert v["shape"] == list(t.shape)
    assert v["strides"] == list(t.stride())
    assert v["device"] == "cpu"


def test_numpy_views_keep_pointer_shape_strides() -> None:
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for view in (a, a.T, a[:, 1:3, ::2], a[2]):
        v = _kparity._view(view)
        assert v["data"] == view.__array_interface__["data"][0]
        assert v["strides"] == [s // view.itemsize for s in view.strides]
        assert v["shape"] == list(view.shape)


def test_device_label_and_pointer_kept() -> None:
    t = BASE[1:, 2:]
    v = _kparity._view(Labelled(t, 2, 1))
    assert v["device"] == "cuda:1" and v["data"] == t.data_ptr() and v["strides"] == list(t.stride())


@pytest.mark.gpu
def test_cuda_views_keep_pointer_shape_strides() -> None:
    t = BASE.cuda().transpose(0, 1)[1:]
    v = _kparity._view(t)
    assert v["data"] == t.data_ptr() and v["strides"] == list(t.stride()) and v["device"] == "cuda:0"


def test_check_sees_the_callers_layout_not_a_copy() -> None:
    # A transposed `a` (non-contiguous) is upstream's "`a` must be contiguous" error: a contiguous copy
    # would have hidden it. A padded state (strided slots) is accepted as it is.
    args = replayssm_args()
    a = args["a"]
    args["a"] = a.reshape(2, 2, 16).transpose(1, 2).contiguous().transpose(1, 2)
    assert not args["a"].is_contiguous()
    with pytest.raises(ValueError, match="contiguous"):
        kparity.check("kda/replayssm_decode", **args)
    args = replayssm_args()
    before = {k: v.clone() for k, v in args.items() if isinstance(v, torch.Tensor)}
    assert kparity.check("kda/replayssm_decode", extra=True, deep=True, **args) == []
    for k, v in before.items():
        assert torch.equal(args[k], v), k  # nothing written


def test_overlap_seen_through_real_addresses() -> None:
    # `out` aliasing mixed_qkv's memory: only visible through the real pointers.
    args = replayssm_args()
    out = args["out"]
    args["out"] = args["mixed_qkv"].reshape(-1)[: out.numel()].view(out.shape)
    with pytest.raises(ValueError) as info:
        kparity.check("kda/replayssm_decode", extra=True, **args)
    assert info.value.slug == "kda-out-overlap"
