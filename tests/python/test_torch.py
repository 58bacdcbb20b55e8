"""A real client: Debian's PyTorch on the CPU, judged through the module over
every family of ln_check's quick budget, forward and backward (autograd), in
fp32 and bf16. Its findings must be those ln_check records for the same
kernel through the C++ ATen adapter (impls/thirdparty/baselines): the same
library, the same cases, the same judge, reached from Python."""

import os
import re

import numpy as np
import pytest
import torch

import lnverify

BASELINES = os.path.join(os.path.dirname(__file__), "..", "..", "impls", "thirdparty",
                         "baselines")
# The baselines were recorded with one thread: the column sums depend on it.
torch.set_num_threads(1)


def tensor(a, dtype, requires_grad=False):
    if a is None:
        return None
    if dtype == "bf16":  # uint16 bits, which torch takes as int16
        t = torch.from_numpy(np.array(a).view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(np.array(a))
    return t.requires_grad_(requires_grad)


def run_torch(c):
    """y, mean, rstd from native_layer_norm; dx, dgamma, dbeta by autograd."""
    x = tensor(c.x, c.dtype, True)
    w = tensor(c.gamma, c.param_dtype, True)
    b = tensor(c.beta, c.param_dtype, True)
    y, mean, rstd = torch.ops.aten.native_layer_norm(x, [c.d], w, b, c.eps)
    out = dict(y=y.detach(), mean=mean, rstd=rstd)
    if c.dy is not None:
        y.backward(tensor(c.dy, c.dtype))
        out.update(dx=x.grad, dgamma=w.grad, dbeta=b.grad)
    return out


def recorded_findings(dtype):
    path = os.path.join(BASELINES, f"{dtype}_native_layer_norm_aten.baseline")
    with open(path) as f:
        return {tuple(line.split()[1:4]) for line in f if line.startswith("finding ")}


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_torch_layer_norm_findings_are_the_aten_baselines(dtype):
    found = set()
    judged = 0
    for c in lnverify.cases("layer", dtype):
        r = lnverify.judge(c.x, c.gamma, c.beta, c.eps, dy=c.dy, dtype=dtype, family=c.family,
                           algorithm="unknown", accumulation="f32", typical="report",
                           name="torch.native_layer_norm", **run_torch(c))
        judged += 1
        assert set(r.outputs) >= {"y", "mean", "rstd"}
        found |= {(c.family, o, v) for o, v in r.findings}
    assert judged > 20
    recorded = recorded_findings(dtype)
    assert found == recorded, (
        f"found, not recorded: {sorted(found - recorded)}\n"
        f"recorded, not found: {sorted(recorded - found)}")


def test_torch_f32_passes_where_aten_has_no_finding_and_fails_where_it_has():
    (c,) = [c for c in lnverify.cases("layer", "f32", families="standard_normal") if c.d == 64]
    out = run_torch(c)
    r = lnverify.assert_layer_norm_close(c.x, c.gamma, c.beta, c.eps, dy=c.dy, **out)
    assert r.passed
    (c,) = lnverify.cases("layer", "f32", families="huge_magnitude")
    with pytest.raises(AssertionError, match="nan_mismatch"):
        lnverify.assert_layer_norm_close(c.x, c.gamma, c.beta, c.eps, case_dir="",
                                         **{k: v for k, v in run_torch(c).items() if k == "y"})


def test_torch_tensors_are_taken_directly_and_bad_ones_rejected():
    x = torch.randn(4, 32)
    w, b = torch.ones(32), torch.zeros(32)
    y = torch.nn.functional.layer_norm(x, [32], w, b, 1e-5)
    assert lnverify.judge_forward(x, w, b, 1e-5, y).passed
    xb, wb, bb = x.bfloat16(), w.bfloat16(), b.bfloat16()
    yb = torch.nn.functional.layer_norm(xb, [32], wb, bb, 1e-5)
    r = lnverify.judge_forward(xb, wb, bb, 1e-5, yb)
    assert r.case.dtype == "bf16" and set(r.outputs) == {"y"}
    with pytest.raises(ValueError, match="x is not C-contiguous"):
        lnverify.judge_forward(torch.randn(32, 4).t(), w, b, 1e-5, y)
    with pytest.raises(TypeError, match="torch.int32"):
        lnverify.judge_forward(x.int(), w, b, 1e-5, y)
