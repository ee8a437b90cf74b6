"""Tensor and scalar arguments as the device process receives them."""

from __future__ import annotations

import ctypes
import struct

import numpy as np

try:
    import torch
except ImportError:  # numpy arrays work without torch
    torch = None

# pfsim's dtype names (simpler-compat.md 1.2) for torch and numpy dtypes.
_TORCH = {}
if torch is not None:
    for _name in ("float32", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
                  "uint16", "uint32", "uint64"):
        if hasattr(torch, _name):
            _TORCH[getattr(torch, _name)] = _name
_NUMPY = {np.dtype(n): n for n in ("float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "bool")}


def is_tensor(value) -> bool:
    return (torch is not None and isinstance(value, torch.Tensor)) or isinstance(value, np.ndarray)


def dtype_name(value, what: str) -> str:
    """pfsim's name of a tensor's dtype; TypeError naming `what` for one a2a3 kernels cannot take."""
    if torch is not None and isinstance(value, torch.Tensor):
        name = _TORCH.get(value.dtype)
    else:
        name = _NUMPY.get(value.dtype)
    if name is None:
        known = ", ".join(sorted(set(_TORCH.values()) | set(_NUMPY.values())))
        raise TypeError(f"{what}: dtype {value.dtype} has no a2a3 DataType (supported: {known})")
    return name


def tensor_bytes(value) -> bytes:
    """The tensor's elements, row-major, as the kernel sees them in GM."""
    if torch is not None and isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    return np.ascontiguousarray(value).tobytes()


def write_back(value, data: bytes) -> None:
    """Copies what the run left in GM into the caller's tensor, in place."""
    if torch is not None and isinstance(value, torch.Tensor):
        if value.numel() == 0:
            return
        raw = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        with torch.no_grad():
            value.copy_(raw.view(value.dtype).reshape(value.shape))
        return
    value[...] = np.frombuffer(data, dtype=value.dtype).reshape(value.shape)


def shape_of(value) -> list[int]:
    return [int(d) for d in value.shape]


_CTYPES_FLOAT = {ctypes.c_float: "<f", ctypes.c_double: "<d"}


def scalar_bits(value, what: str) -> int:
    """A scalar as the 64-bit slot the kernel reads (simpler's scalar_to_uint64):
    a Python float as float32 bits, an int as two's complement, a ctypes value
    by its own type."""
    if isinstance(value, ctypes._SimpleCData):
        kind = type(value)
        if kind in _CTYPES_FLOAT:
            return int.from_bytes(struct.pack(_CTYPES_FLOAT[kind], value.value).ljust(8, b"\0"), "little")
        value = value.value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 64):
            raise OverflowError(f"{what}: {value} does not fit in 64 bits")
        return value & ((1 << 64) - 1)
    if isinstance(value, (np.integer, np.floating)):
        return scalar_bits(value.item(), what) if isinstance(value, np.integer) else int.from_bytes(
            np.asarray(value).tobytes().ljust(8, b"\0"), "little")
    raise TypeError(f"{what}: a scalar must be an int, a float or a ctypes value, not {type(value).__name__}")
