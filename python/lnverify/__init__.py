"""lnverify: judge a LayerNorm or RMSNorm kernel's outputs against the exact
oracle and the error bound its algorithm guarantees, from numpy or torch.

    import lnverify
    r = lnverify.judge_forward(x, gamma, beta, 1e-5, y, mean, rstd,
                               algorithm="two_pass", accumulation="f32")
    assert r.passed, r.summary

    # in a pytest, in place of torch.testing.assert_close(y, ref, rtol=..., atol=...):
    lnverify.assert_layer_norm_close(x, gamma, beta, 1e-5, y=y)

Arrays: numpy arrays, torch tensors (on the CPU), or anything with __dlpack__
or __array__. x, y, dy and dx are rows x d and C-contiguous; gamma, beta,
dgamma and dbeta have d values; mean and rstd one per row, float32 (bf16 and
f16 tensors are converted, exactly). bf16, which numpy lacks, is a torch
bfloat16 tensor or a uint16 array of its bits with dtype="bf16".

The claim a kernel is held to: algorithm ("two_pass", "welford", "kahan",
"sum_of_squares" for RMSNorm, or "unknown": the generic bound), reduction
("serial" or "tree" with chunk, its leaf size), accumulation (the dtype the
sums are kept in), and the valid range (max_row_sumsq: rows whose exact sum
of x^2 is larger are outside it and judged only by the NaN contract;
max_backward_weight likewise for the backward). eps is rounded to float32,
the value a kernel adds. Elements where the exact value cannot be bounded
(bound +inf) are counted as "unclaimed": a finite input must still give a
finite output there, and a result that held no element to a bound (or, on a
random-data family's case, fewer than ln_check requires) is not a pass:
`.passed` is False and `.not_judged` says why. mean and rstd are judged as the
binary32 values the ABI stores; a kernel that keeps them in bf16 loses bits.

The verdicts are those of ln_check (docs/DESIGN.md §4): pass, out_of_range,
oracle_undecided, beyond_typical, bound_exceeded, not_finite, nan_mismatch.
"""

import os
import hashlib

import numpy as np

from . import _lnverify

__all__ = [
    "judge_forward", "judge_backward", "judge", "exact_forward", "exact_backward",
    "assert_layer_norm_close", "assert_rms_norm_close", "families", "cases",
    "read_case", "Case", "Result", "default_seed",
]

Case = _lnverify.Case
Result = _lnverify.Result
default_seed = _lnverify.default_seed

_NUMPY_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16}
_DTYPE_OF_NUMPY = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
                   np.dtype(np.float16): "f16"}


def _is_torch(a):
    return type(a).__module__.startswith("torch") and hasattr(a, "detach")


def _torch_dtype_name(t):
    import torch
    return {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
            torch.bfloat16: "bf16"}.get(t.dtype)


def _to_numpy(a, name):
    """(numpy array, lnverify dtype name or None) for an array-like argument."""
    if _is_torch(a):
        import torch
        t = a.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        kind = _torch_dtype_name(t)
        if kind is None:
            raise TypeError(f"{name} is a torch tensor of {t.dtype}; lnverify takes "
                            "float32, bfloat16, float16 or float64")
        if not t.is_contiguous():
            raise ValueError(f"{name} is not C-contiguous (call .contiguous())")
        if kind == "bf16":
            return t.view(torch.int16).numpy().view(np.uint16), "bf16"
        return t.numpy(), kind
    if isinstance(a, np.ndarray):
        arr = a
    elif hasattr(a, "__dlpack__"):
        arr = np.from_dlpack(a)
    elif hasattr(a, "__array__"):
        arr = np.asarray(a)
    else:
        raise TypeError(f"{name} must be an array (numpy, torch, DLPack or __array__), "
                        f"got {type(a).__name__}")
    return arr, _DTYPE_OF_NUMPY.get(arr.dtype)


def _array(a, name, dtype, shape):
    """a as a C-contiguous numpy array of the storage dtype of `dtype` and `shape`."""
    if a is None:
        return None
    arr, kind = _to_numpy(a, name)
    want = np.dtype(_NUMPY_DTYPES[dtype])
    if arr.dtype != want:
        if kind is not None and kind != dtype:
            raise TypeError(f"{name} holds {kind} values, but its dtype is {dtype}")
        raise TypeError(f"{name} has numpy dtype {arr.dtype}; dtype {dtype} needs {want}"
                        + (" (the bits of bfloat16)" if dtype == "bf16" else ""))
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(arr.shape)}, expected {tuple(shape)}")
    if not arr.flags["C_CONTIGUOUS"]:
        raise ValueError(f"{name} is not C-contiguous (use numpy.ascontiguousarray)")
    return arr


def _stat(a, name, rows):
    """mean or rstd: one value per row, as float32 (exact from bf16/f16)."""
    if a is None:
        return None
    arr, kind = _to_numpy(a, name)
    if kind == "bf16":
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    elif kind == "f16":
        arr = arr.astype(np.float32)
    elif kind != "f32":
        raise TypeError(f"{name} has numpy dtype {arr.dtype}; mean and rstd are float32 "
                        "(or bfloat16/float16 tensors)")
    if arr.size != rows or arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 1):
        raise ValueError(f"{name} has shape {tuple(arr.shape)}, expected ({rows},) or ({rows}, 1)")
    return np.ascontiguousarray(arr).reshape(rows)


def _dtype_of(x, dtype):
    if dtype is not None:
        if dtype not in _NUMPY_DTYPES:
            raise ValueError(f"dtype {dtype!r} is not one of f32, bf16, f16, f64")
        return dtype
    _, kind = _to_numpy(x, "x")
    if kind is None:
        raise TypeError("cannot tell x's dtype: pass dtype= (a uint16 array is bf16 bits: "
                        "dtype='bf16')")
    return kind


def _eps(eps):
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"eps must be a number, got {type(eps).__name__}") from None
    if np.isnan(e):
        raise ValueError("eps is NaN")
    if e < 0 or np.isinf(e):
        raise ValueError(f"eps must be finite and >= 0, got {e}")
    return e


def _claim(norm, dtype, param_dtype, accumulation, algorithm, reduction, chunk,
           max_row_sumsq, max_backward_weight, name):
    a = _lnverify.ClaimArgs()
    a.name, a.norm, a.dtype = name, norm, dtype
    a.param_dtype = param_dtype or dtype
    a.accumulation, a.algorithm, a.reduction = accumulation, algorithm, reduction
    a.chunk = chunk
    a.max_row_sumsq = -1.0 if max_row_sumsq is None else float(max_row_sumsq)
    a.max_backward_weight = -1.0 if max_backward_weight is None else float(max_backward_weight)
    return _lnverify.make_claim(a)


def judge(x, gamma, beta, eps, *, norm="layer", dy=None, y=None, mean=None, rstd=None,
          dx=None, dgamma=None, dbeta=None, dtype=None, param_dtype=None,
          accumulation="f32", algorithm="unknown", reduction="serial", chunk=None,
          max_row_sumsq=None, max_backward_weight=None, typical="off", family=None,
          name="kernel"):
    """Judges any of a kernel's outputs (y, mean, rstd; dx, dgamma, dbeta with dy)
    on one batch of rows; returns a Result. The forward and backward wrappers
    below name the usual arguments."""
    claim, case, (rows, d), dtype, pdt = _make_case(
        norm, x, gamma, beta, eps, dy, dtype, param_dtype, family,
        (accumulation, algorithm, reduction, chunk, max_row_sumsq, max_backward_weight, name))
    outputs = {
        "y": _array(y, "y", dtype, (rows, d)), "mean": _stat(mean, "mean", rows),
        "rstd": _stat(rstd, "rstd", rows), "dx": _array(dx, "dx", dtype, (rows, d)),
        "dgamma": _array(dgamma, "dgamma", pdt, (d,)), "dbeta": _array(dbeta, "dbeta", pdt, (d,)),
    }
    if typical == "auto":
        typical = "fail" if family is not None and _lnverify.holds_typical_model(family) else "off"
    return _lnverify.judge(claim, case, outputs, typical)


def judge_forward(x, gamma, beta, eps, y, mean=None, rstd=None, **claim):
    """Judges a forward's y (and mean, rstd when given). beta is None for RMSNorm."""
    return judge(x, gamma, beta, eps, y=y, mean=mean, rstd=rstd, **claim)


def judge_backward(x, gamma, dy, eps, dx, dgamma=None, dbeta=None, mean=None, rstd=None,
                   **claim):
    """Judges a backward's dx (and dgamma, dbeta when given). mean and rstd, when
    given, are judged as forward outputs."""
    return judge(x, gamma, None, eps, dy=dy, dx=dx, dgamma=dgamma, dbeta=dbeta, mean=mean,
                 rstd=rstd, **claim)


def _make_case(norm, x, gamma, beta, eps, dy, dtype, param_dtype, family, claim_args):
    """(claim, case, (rows, d), dtype, param dtype) from the user's arrays: the
    dtypes inferred where not given (param_dtype from gamma), every array checked
    against them and the shape of x."""
    if x is None:
        raise ValueError("x is required")
    dtype = _dtype_of(x, dtype)
    if param_dtype is None and gamma is not None:
        _, kind = _to_numpy(gamma, "gamma")
        param_dtype = kind if kind is not None else dtype
    claim = _claim(norm, dtype, param_dtype, *claim_args)
    xa, _ = _to_numpy(x, "x")
    if xa.ndim != 2:
        raise ValueError(f"x has shape {tuple(xa.shape)}: a batch of rows (rows, d) is needed")
    rows, d = xa.shape
    pdt = param_dtype or dtype
    case = _lnverify.make_case(
        claim, _eps(eps), _array(x, "x", dtype, (rows, d)), rows, d,
        _array(gamma, "gamma", pdt, (d,)), _array(beta, "beta", pdt, (d,)),
        _array(dy, "dy", dtype, (rows, d)), family or "")
    return claim, case, (rows, d), dtype, pdt


def _exact(norm, x, gamma, beta, eps, dy, dtype, param_dtype):
    # The claim does not matter to the exact values: the generic one.
    _, case, _, _, _ = _make_case(norm, x, gamma, beta, eps, dy, dtype, param_dtype, None,
                                  ("f32", "unknown", "serial", None, None, None, "exact"))
    return _lnverify.exact(case)


def exact_forward(x, gamma, beta, eps, *, norm="layer", dtype=None, param_dtype=None):
    """The correctly rounded y, mean (LayerNorm) and rstd, as a dict of numpy arrays
    in the storage dtypes (bf16 as uint16 bits; mean and rstd float32)."""
    out = _exact(norm, x, gamma, beta, eps, None, dtype, param_dtype)
    return {k: out[k] for k in ("y", "mean", "rstd") if k in out}


def exact_backward(x, gamma, dy, eps, *, beta=None, norm="layer", dtype=None, param_dtype=None):
    """The correctly rounded dx, dgamma and dbeta (LayerNorm), as numpy arrays."""
    out = _exact(norm, x, gamma, beta, eps, dy, dtype, param_dtype)
    return {k: out[k] for k in ("dx", "dgamma", "dbeta") if k in out}


def _case_path(result, case_dir):
    text = result.case.text()
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    base = f"python_{result.case.norm}_{result.case.dtype}_{result.deciding_output}_{result.verdict}"
    return os.path.join(case_dir, f"{base}_{digest}.case")


def _format_value(v):
    return f"{v:.9g}" if np.isfinite(v) else str(v)


def _failure_message(result, path):
    lines = [f"lnverify: {result.verdict}: {result.summary}",
             f"  held to: {result.claim}"]
    if result.not_judged:
        lines.append(f"  not judged: {result.not_judged}")
    if result.rows_out_of_range:
        lines.append(f"  rows outside the claimed range: {result.rows_out_of_range}")
    for name, o in result.outputs.items():
        w = o["worst"]
        if w is None or o["verdict"] in ("pass", "out_of_range"):
            continue
        where = (f"row {w['row']}, col {w['col']}" if w["row"] >= 0 and w["col"] >= 0
                 else f"row {w['row']}" if w["row"] >= 0 else f"col {w['col']}")
        lines.append(
            f"  {name}: {o['verdict']} at {where}: kernel {_format_value(w['kernel'])}, "
            f"exact {_format_value(w['exact'])} (rounded {_format_value(w['rounded'])}), "
            f"error {w['ulps']:.3g} ulp, bound {_format_value(w['bound'])} "
            f"(used {w['bound_use']:.3g}x)")
    if path:
        lines.append(f"  case:   {path}")
        lines.append(f"  replay: c = lnverify.read_case({path!r}); rerun the kernel on "
                     "c.x, c.gamma, c.beta, c.dy, c.eps and judge again")
    return "\n".join(lines)


def _assert_close(norm, x, gamma, beta, eps, case_dir, claim):
    result = judge(x, gamma, beta, eps, norm=norm, **claim)
    if result.passed:
        return result
    path = None
    if case_dir is None:
        case_dir = os.environ.get("LNV_CASES_DIR", "lnv-cases")
    if case_dir:
        os.makedirs(case_dir, exist_ok=True)
        path = _case_path(result, case_dir)
        result.write_case(path, f"lnverify.read_case('{path}')")
    raise AssertionError(_failure_message(result, path))


def assert_layer_norm_close(x, gamma, beta, eps, y=None, mean=None, rstd=None, *, case_dir=None,
                            **claim):
    """Raises AssertionError, with the worst elements, their exact values and
    bounds, and a case file, unless every given output of a LayerNorm kernel
    (y, mean, rstd; dx, dgamma, dbeta with dy=) is within its claimed bound.
    Returns the Result otherwise. case_dir: where the case goes (default
    $LNV_CASES_DIR or ./lnv-cases; "" writes none)."""
    return _assert_close("layer", x, gamma, beta, eps, case_dir,
                         dict(claim, y=y, mean=mean, rstd=rstd))


def assert_rms_norm_close(x, gamma, eps, y=None, rstd=None, *, case_dir=None, **claim):
    """assert_layer_norm_close for an RMSNorm kernel (no beta, no mean)."""
    return _assert_close("rms", x, gamma, None, eps, case_dir, dict(claim, y=y, rstd=rstd))


def families():
    """[(name, why)] of every input family, in ln_check's order."""
    return _lnverify.families()


def cases(norm, dtype, param_dtype=None, budget="quick", seed=None, families="*"):
    """Exactly the cases ln_check judges for a kernel of this signature (same
    seeds and shapes, in ln_check's order); each has x, gamma, beta, dy (numpy,
    storage dtypes, None when absent), eps, d, rows and family. families: a
    glob (*, ?) over family names or a list of them; each must match one."""
    globs = [families] if isinstance(families, str) else list(families)
    return _lnverify.cases(norm, dtype, param_dtype or dtype, budget,
                           default_seed if seed is None else int(seed), globs)


def read_case(path):
    """The Case in a case file (ln_check's format), e.g. one an assertion wrote."""
    return _lnverify.read_case(os.fspath(path))
