"""Tensor and scalar arguments as the device process receives them."""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
import weakref

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


PAGE = 4096  # the device maps each tensor's pages from the transfer file: tensors start at its multiples


def tensor_buffer(value) -> np.ndarray:
    """The tensor's elements, row-major, as the kernel sees them in GM: a flat
    uint8 array that shares the tensor's memory where it is contiguous (a copy
    only where it is not, or lives off the CPU)."""
    if torch is not None and isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        return flat.view(torch.uint8).numpy() if flat.numel() else np.empty(0, np.uint8)
    return np.ascontiguousarray(value).reshape(-1).view(np.uint8)


SHARED_MIN_BYTES = 1 << 20  # smaller tensors are cloned: a mapping each is not worth its two descriptors
SHARED_MAX_TENSORS = 128  # descriptors: three a tensor (its memory file and a duplicate in each mapping)
_FILES = {}  # a shared tensor's first element's address -> its memory file, while the tensor lives
_COPIES = {}  # a private copy's first element's address -> its bytes, while the copy lives


def memory_file(value) -> str | None:
    """The memory file holding exactly `value`'s bytes from offset 0 (a path the
    device process can open), when `value` is the arguments' side of
    copy_on_write; None otherwise."""
    if torch is None or not isinstance(value, torch.Tensor):
        address = value.__array_interface__["data"][0] if isinstance(value, np.ndarray) else None
    else:
        address = value.data_ptr()
    known = _FILES.get(address)
    if known is None or known[1] != (value.numel() * value.element_size() if hasattr(value, "element_size")
                                     else value.nbytes):
        return None  # a view of part of it, or of other memory
    return known[0]


def copy_on_write(values: list) -> tuple[list, list]:
    """Two copies of the tensors `values` (torch tensors or numpy arrays, same order)
    that share their memory until either writes it: each large contiguous CPU tensor
    is moved into a memory file (one copy, its old memory freed when nothing else
    holds it); the first copy is a shared mapping of that file (its writes land in
    the file: memory_file names it, and a run maps it as the tensor's GM instead
    of writing it into the transfer file), the second a private one, whose pages
    are duplicated only when it writes them. The first never sees the second's
    writes; the second sees the first's later writes only on pages it has not
    written. Other tensors (small, strided, off the CPU, or wanting gradients)
    are cloned. A golden computed on the second copy costs memory only for what
    it writes (#49)."""
    kept, copies = [], []
    shared = 0
    for v in values:
        size = v.numel() * v.element_size() if torch is not None and isinstance(v, torch.Tensor) else v.nbytes
        pair = _shared_pair(v, size) if shared < SHARED_MAX_TENSORS and _mappable(v, size) else None
        if pair is None:
            kept.append(v)
            copies.append(v.clone() if hasattr(v, "clone") else v.copy())
            continue
        shared += 1
        kept.append(pair[0])
        copies.append(pair[1])
    return kept, copies


def _mappable(value, size: int) -> bool:
    """Whether `value` (of `size` bytes) can live in a memory file: large, contiguous, on the CPU."""
    return size >= SHARED_MIN_BYTES and (
        value.layout == torch.strided and value.is_contiguous() and value.device.type == "cpu" and
        not value.requires_grad if torch is not None and isinstance(value, torch.Tensor) else
        value.flags.c_contiguous and not value.dtype.hasobject)


def _memory_file(value) -> int | None:
    """A new memory file holding `value`'s bytes, its size rounded up to whole pages (the
    device maps whole pages): its descriptor; None when the host gives none. Bytes that
    are all zero are not written (a new file reads as zeros; its pages come when written)."""
    try:
        fd = os.memfd_create("pfsim-tensor", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        flat = tensor_buffer(value)
        words = flat.nbytes // 8
        zero = not flat[:words * 8].view(np.uint64).any() and not flat[words * 8:].any()
        data = memoryview(flat[:0] if zero else flat)
        pages = -(-flat.nbytes // PAGE) * PAGE
        while data.nbytes:
            data = data[os.write(fd, data):]
        os.ftruncate(fd, pages)
    except OSError:
        os.close(fd)
        return None
    return fd


def _share(kept, fd: int, size: int) -> None:
    """Names `kept` (a shared mapping of the memory file `fd`) as that file's tensor for
    memory_file while it lives; the file is closed with it."""
    address = kept.data_ptr() if torch is not None and isinstance(kept, torch.Tensor) else \
        kept.__array_interface__["data"][0]
    _FILES[address] = (f"/proc/{os.getpid()}/fd/{fd}", size)
    weakref.finalize(kept, _forget, address, fd)


def shared_copy(value):
    """A copy of `value` in a memory file of its own, mapped shared, that memory_file names:
    a run maps that file as the tensor's GM and writes its results there in place (no
    copy into or out of the transfer file). A plain clone where the tensor is small,
    strided or off the CPU, or past SHARED_MAX_TENSORS files."""
    size = value.numel() * value.element_size() if torch is not None and isinstance(value, torch.Tensor) else value.nbytes
    fd = _memory_file(value) if _mappable(value, size) and len(_FILES) < SHARED_MAX_TENSORS else None
    if fd is not None:
        try:
            kept = _mapped_like(value, fd, size, mmap.MAP_SHARED)
        except OSError:
            os.close(fd)
            fd = None
    if fd is None:
        return value.clone() if hasattr(value, "clone") else value.copy()
    _share(kept, fd, size)
    return kept


def _shared_pair(value, size: int):
    """A shared and a private mapping of a memory file holding `value`'s bytes, each as a
    tensor like `value`; None when the host gives no memory file (the caller clones instead)."""
    fd = _memory_file(value)
    if fd is None:
        return None
    try:
        kept = _mapped_like(value, fd, size, mmap.MAP_SHARED)
        copy = _mapped_like(value, fd, size, mmap.MAP_PRIVATE)
    except OSError:
        os.close(fd)
        return None
    _share(kept, fd, size)  # the file lives as long as the arguments' tensor
    copied = copy.data_ptr() if torch is not None and isinstance(copy, torch.Tensor) else \
        copy.__array_interface__["data"][0]
    _COPIES[copied] = size
    weakref.finalize(copy, _COPIES.pop, copied, None)
    return kept, copy


def _forget(address: int, fd: int) -> None:
    _FILES.pop(address, None)
    os.close(fd)


def unwritten_copies(values: list) -> list:
    """For each of `values`: True when it is the private side of copy_on_write and
    none of its pages has been written since (each page still the file's, none of
    its own: /proc/self/pagemap), False when written, None when not such a copy.
    Asks without reading the tensors' memory."""
    out = []
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        for v in values:
            address = v.data_ptr() if torch is not None and isinstance(v, torch.Tensor) else (
                v.__array_interface__["data"][0] if isinstance(v, np.ndarray) else None)
            size = _COPIES.get(address)
            if size is None or size != (v.numel() * v.element_size() if hasattr(v, "element_size") else v.nbytes):
                out.append(None)
                continue
            first, pages = address // mmap.PAGESIZE, -(-size // mmap.PAGESIZE)
            entries = np.frombuffer(os.pread(pagemap.fileno(), pages * 8, first * 8), np.uint64)
            # A page present or swapped out that is not the file's is one the copy wrote.
            own = ((entries >> np.uint64(62)) != 0) & ((entries >> np.uint64(61)) & np.uint64(1) == 0)
            out.append(len(entries) == pages and not own.any())
    return out


def _mapped_like(value, fd: int, size: int, flags: int):
    """A tensor of `value`'s type, dtype and shape over a mapping (`flags`) of the memory file `fd`."""
    pages = mmap.mmap(fd, size, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    if torch is not None and isinstance(value, torch.Tensor):
        return torch.frombuffer(pages, dtype=value.dtype, count=value.numel()).reshape(value.shape)
    return np.frombuffer(pages, dtype=value.dtype, count=value.size).reshape(value.shape)


def same_bytes(a, b) -> bool:
    """Whether two tensors hold the same bytes (compared a piece at a time, no copy of either)."""
    x, y = tensor_buffer(a), tensor_buffer(b)
    if x.nbytes != y.nbytes:
        return False
    piece = 1 << 24
    return all(np.array_equal(x[i:i + piece], y[i:i + piece]) for i in range(0, x.nbytes, piece))


def read_into(value, f) -> None:
    """Reads the tensor's bytes from the file `f` at its position into the
    caller's tensor, in place (straight into its memory where it is a
    contiguous CPU tensor)."""
    if torch is not None and isinstance(value, torch.Tensor):
        if value.numel() == 0:
            return
        if value.is_contiguous() and value.device.type == "cpu":
            _read_exactly(f, value.detach().reshape(-1).view(torch.uint8).numpy())
            return
        raw = torch.empty(value.numel() * value.element_size(), dtype=torch.uint8)
        _read_exactly(f, raw.numpy())
        with torch.no_grad():
            value.copy_(raw.view(value.dtype).reshape(value.shape))
        return
    if value.flags.c_contiguous and value.flags.writeable:
        _read_exactly(f, value.reshape(-1).view(np.uint8))
        return
    raw = np.empty(value.nbytes, np.uint8)
    _read_exactly(f, raw)
    value[...] = raw.view(value.dtype).reshape(value.shape)


def _read_exactly(f, into: np.ndarray) -> None:
    view = memoryview(into).cast("B")
    while view.nbytes:
        n = f.readinto(view)
        if not n:
            raise RuntimeError("the device left a tensor's bytes short in the transfer file")
        view = view[n:]


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
