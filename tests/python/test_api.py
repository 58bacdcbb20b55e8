"""The lnverify module's API on numpy arrays: correct kernels pass, wrong
ones fail (negative controls), every bad input raises the stated exception."""

import numpy as np
import pytest

import lnverify
from conftest import (bf16_bits, bf16_values, layer_norm_backward_f64, layer_norm_f64,
                      rms_norm_f64)

EPS = 1e-5


def inputs(rows=8, d=64, scale=1.0, seed=1):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, d)) * scale + 0.5 * scale).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(d)).astype(np.float32)
    dy = rng.standard_normal((rows, d)).astype(np.float32)
    return x, gamma, beta, dy


def f32(a):
    return np.asarray(a, dtype=np.float32)


# ---- correct kernels pass ----

@pytest.mark.parametrize("claim", [dict(algorithm="two_pass", accumulation="f64"),
                                   dict(algorithm="two_pass", accumulation="f32"),
                                   dict()])
def test_a_float64_two_pass_rounded_to_f32_passes(claim):
    x, gamma, beta, _ = inputs()
    y, mean, rstd = layer_norm_f64(x, gamma, beta, EPS)
    r = lnverify.judge_forward(x, gamma, beta, EPS, f32(y), f32(mean), f32(rstd), **claim)
    assert r.passed, r.summary
    assert r.verdict == "pass"
    assert set(r.outputs) == {"y", "mean", "rstd"}
    assert r.outputs["y"]["count"] == x.size
    assert r.outputs["y"]["max_ulp"] <= 1.0  # one rounding of a float64 value


def test_a_float64_backward_rounded_to_f32_passes():
    x, gamma, beta, dy = inputs()
    dx, dgamma, dbeta = layer_norm_backward_f64(x, gamma, dy, EPS)
    r = lnverify.judge_backward(x, gamma, dy, EPS, f32(dx), f32(dgamma), f32(dbeta),
                                algorithm="two_pass")
    assert r.passed, r.summary
    assert set(r.outputs) == {"dx", "dgamma", "dbeta"}


def test_a_float64_rms_norm_passes_and_the_assertion_returns_its_result():
    x, gamma, _, _ = inputs()
    y, rstd = rms_norm_f64(x, gamma, EPS)
    r = lnverify.assert_rms_norm_close(x, gamma, EPS, y=f32(y), rstd=f32(rstd),
                                       algorithm="sum_of_squares")
    assert r.passed and r.outputs["y"]["verdict"] == "pass"


def test_a_float64_kernel_passes_with_a_float32_eps():
    x, gamma, beta, dy = (a.astype(np.float64) for a in inputs())
    eps = float(np.float32(EPS))  # the ABI's eps is a float
    y, mean, rstd = layer_norm_f64(x, gamma, beta, eps)
    r = lnverify.judge_forward(x, gamma, beta, eps, y, f32(mean), f32(rstd),
                               algorithm="two_pass", accumulation="f64")
    assert r.passed, r.summary
    dx, dgamma, dbeta = layer_norm_backward_f64(x, gamma, dy, eps)
    r = lnverify.judge_backward(x, gamma, dy, eps, dx, dgamma, dbeta, algorithm="two_pass",
                                accumulation="f64")
    assert r.passed, r.summary


def test_bf16_as_uint16_bits_passes():
    x, gamma, beta, _ = inputs()
    xb, gb, bb = bf16_bits(x), bf16_bits(gamma), bf16_bits(beta)
    y, _, _ = layer_norm_f64(bf16_values(xb), bf16_values(gb), bf16_values(bb), EPS)
    r = lnverify.judge_forward(xb, gb, bb, EPS, bf16_bits(f32(y)), dtype="bf16",
                               algorithm="two_pass")
    assert r.passed, r.summary


# ---- wrong kernels fail (negative controls) ----

def test_eps_outside_the_square_root_fails_the_assertion(tmp_path):
    # sigma^2 ~ 1e-6 < eps: 1/(sigma + eps) is far from 1/sqrt(sigma^2 + eps).
    x, gamma, beta, _ = inputs(scale=1e-3)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=1, keepdims=True)
    sigma = np.sqrt(((xd - mean) ** 2).mean(axis=1, keepdims=True))
    y = f32((xd - mean) / (sigma + EPS) * gamma + beta)
    with pytest.raises(AssertionError) as e:
        lnverify.assert_layer_norm_close(x, gamma, beta, EPS, y=y, algorithm="two_pass",
                                         case_dir=str(tmp_path))
    text = str(e.value)
    assert "bound_exceeded" in text and "y:" in text and "exact" in text and "bound" in text
    written = list(tmp_path.glob("*.case"))
    assert len(written) == 1 and str(written[0]) in text
    c = lnverify.read_case(written[0])
    np.testing.assert_array_equal(c.x, x)
    assert c.eps == float(np.float32(EPS))


def test_a_backward_without_the_xhat_term_fails():
    x, gamma, beta, dy = inputs()
    xd, g = x.astype(np.float64), dy.astype(np.float64) * gamma
    rstd = 1.0 / np.sqrt(xd.var(axis=1, keepdims=True) + EPS)
    dx = f32(rstd * (g - g.mean(axis=1, keepdims=True)))
    r = lnverify.judge_backward(x, gamma, dy, EPS, dx)
    assert not r.passed and r.outputs["dx"]["verdict"] == "bound_exceeded"


def test_an_rms_norm_without_eps_fails_on_small_rows():
    x, gamma, _, _ = inputs(scale=1e-3)
    xd = x.astype(np.float64)
    y = f32(xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True)) * gamma)
    with pytest.raises(AssertionError, match="bound_exceeded"):
        lnverify.assert_rms_norm_close(x, gamma, EPS, y=y, case_dir="")


def test_an_infinity_for_a_finite_value_is_not_finite():
    x, gamma, beta, _ = inputs()
    y, _, _ = layer_norm_f64(x, gamma, beta, EPS)
    y = f32(y)
    y[3, 5] = np.inf
    r = lnverify.judge_forward(x, gamma, beta, EPS, y)
    assert r.verdict == "not_finite"
    assert r.outputs["y"]["worst"]["row"] == 3 and r.outputs["y"]["worst"]["col"] == 5


def test_a_kernel_outside_its_stated_range_is_judged_only_by_the_nan_contract():
    x, gamma, beta, _ = inputs()
    y, _, _ = layer_norm_f64(x, gamma, beta, EPS)
    y = f32(y) * 2  # wrong everywhere
    r = lnverify.judge_forward(x, gamma, beta, EPS, y, max_row_sumsq=1.0)
    assert r.verdict == "out_of_range" and r.rows_out_of_range == x.shape[0]
    # Nothing was held to a bound: not a pass, and the assertion says so.
    assert not r.passed and "no element was held to a bound" in r.not_judged
    with pytest.raises(AssertionError, match="not judged: no element was held to a bound"):
        lnverify.assert_layer_norm_close(x, gamma, beta, EPS, y=y, max_row_sumsq=1.0,
                                         case_dir="")
    r = lnverify.judge_forward(x, gamma, beta, EPS, y)
    assert r.verdict == "bound_exceeded"


# ---- exact values ----

def test_exact_forward_is_within_one_ulp_of_float64_and_passes_itself():
    x, gamma, beta, dy = inputs()
    ex = lnverify.exact_forward(x, gamma, beta, EPS)
    y, mean, rstd = layer_norm_f64(x, gamma, beta, EPS)
    ulp = np.spacing(np.abs(ex["y"]).astype(np.float32))
    assert np.all(np.abs(ex["y"].astype(np.float64) - y) <= ulp)
    assert ex["y"].dtype == np.float32 and ex["y"].shape == x.shape
    assert ex["mean"].shape == (x.shape[0],)
    eb = lnverify.exact_backward(x, gamma, dy, EPS, beta=beta)
    dx, _, _ = layer_norm_backward_f64(x, gamma, dy, EPS)
    assert np.all(np.abs(eb["dx"].astype(np.float64) - dx) <= np.spacing(np.abs(eb["dx"])))
    r = lnverify.judge(x, gamma, beta, EPS, dy=dy, **ex, **eb)
    assert r.passed and r.outputs["y"]["max_ulp"] <= 0.5


# ---- families and cases ----

def test_families_and_cases_are_ln_checks():
    names = [n for n, _ in lnverify.families()]
    assert "standard_normal" in names and "huge_magnitude" in names
    cs = lnverify.cases("layer", "f32", families="standard_normal")
    assert [c.family for c in cs] == ["standard_normal"] * len(cs) and len(cs) == 6
    assert [(c.rows, c.d) for c in cs] == [(8, 64), (8, 7), (8, 768), (8, 1), (2, 4096),
                                           (1, 65536)]
    again = lnverify.cases("layer", "f32", families="standard_normal")
    assert [c.text() for c in cs] == [c.text() for c in again]
    other = lnverify.cases("layer", "f32", families="standard_normal", seed=1)
    assert cs[0].text() != other[0].text()
    c = cs[0]
    assert c.x.dtype == np.float32 and c.x.shape == (8, 64) and c.dy.shape == (8, 64)
    b = lnverify.cases("rms", "bf16", families="standard_normal")[0]
    assert b.x.dtype == np.uint16 and b.beta is None


# ---- bad input ----

def test_every_bad_input_raises_with_the_argument_named():
    x, gamma, beta, dy = inputs()
    y = f32(layer_norm_f64(x, gamma, beta, EPS)[0])
    bad = [
        (ValueError, "y has shape", dict(y=y[:, :10])),
        (ValueError, "eps is NaN", dict(y=y, eps=float("nan"))),
        (ValueError, "eps must be", dict(y=y, eps=-1.0)),
        (TypeError, "eps must be a number", dict(y=y, eps="small")),
        (TypeError, "y holds f64", dict(y=y.astype(np.float64))),
        (TypeError, "gamma holds f16", dict(y=y, gamma=gamma.astype(np.float16),
                                            param_dtype="f32")),
        (ValueError, "x is not C-contiguous", dict(x=np.asfortranarray(x), y=y)),
        (ValueError, "x has shape", dict(x=x[0], y=y)),
        (ValueError, "gamma has shape", dict(y=y, gamma=gamma[:3])),
        (TypeError, "x must be an array", dict(x="rows", y=y)),
        (ValueError, "algorithm 'one_pass'", dict(y=y, algorithm="one_pass")),
        (ValueError, "needs chunk", dict(y=y, reduction="tree")),
        (ValueError, "reduction 'lanes'", dict(y=y, reduction="lanes")),
        (ValueError, "dtype 'f8'", dict(y=y, dtype="f8")),
        (ValueError, "accumulation 'f128'", dict(y=y, accumulation="f128")),
        (ValueError, "no output to judge", dict()),
        (ValueError, "without dy", dict(dx=y)),
        (ValueError, "mean has shape", dict(y=y, mean=np.zeros(3, np.float32))),
        (TypeError, "mean has numpy dtype", dict(y=y, mean=np.zeros(8, np.float64))),
        (ValueError, "max_row_sumsq must be > 0", dict(y=y, max_row_sumsq=float("nan"))),
        (ValueError, "max_row_sumsq must be > 0", dict(y=y, max_row_sumsq=0)),
        (ValueError, "max_backward_weight must be > 0", dict(y=y, max_backward_weight=-2)),
        (ValueError, "1 to 2\\^40", dict(y=y, reduction="tree", chunk=2**41)),
        (ValueError, "eps is beyond the float range", dict(y=y, eps=1e39)),
        (ValueError, "eps must be a float32 value for an f64 kernel",
         dict(x=x.astype(np.float64), gamma=gamma.astype(np.float64),
              beta=beta.astype(np.float64), y=y.astype(np.float64))),
        (ValueError, "norm 'batch'", dict(y=y, norm="batch")),
        (ValueError, "typical 'maybe'", dict(y=y, typical="maybe")),
    ]
    for exc, text, kw in bad:
        args = dict(x=x, gamma=gamma, beta=beta, eps=EPS)
        args.update(kw)
        with pytest.raises(exc, match=text):
            lnverify.judge(args.pop("x"), args.pop("gamma"), args.pop("beta"), args.pop("eps"),
                           **args)
    with pytest.raises(ValueError, match="beta is given, but RMSNorm"):
        lnverify.judge(x, gamma, beta, EPS, y=y, norm="rms")
    with pytest.raises(ValueError, match="mean is given, but RMSNorm"):
        lnverify.judge(x, gamma, None, EPS, y=y, mean=np.zeros(8, np.float32), norm="rms")
    with pytest.raises(TypeError, match="cannot tell x's dtype"):
        lnverify.judge_forward(bf16_bits(x), None, None, EPS, bf16_bits(y))
    with pytest.raises(ValueError, match="no input family matches 'nothing_like_this'"):
        lnverify.cases("layer", "f32", families=["ramp", "nothing_like_this"])
    with pytest.raises(ValueError, match="budget 'huge'"):
        lnverify.cases("layer", "f32", budget="huge")
    with pytest.raises(ValueError, match="lnv-case"):
        lnverify.read_case(__file__)


# ---- other array forms ----

class DLPackOnly:
    """An array reachable only through the DLPack protocol."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class ArrayOnly:
    """An array reachable only through __array__."""

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None):
        return self._a


def test_dlpack_and_array_protocol_inputs_are_taken():
    x, gamma, beta, _ = inputs()
    y = f32(layer_norm_f64(x, gamma, beta, EPS)[0])
    r = lnverify.judge_forward(DLPackOnly(x), ArrayOnly(gamma), DLPackOnly(beta), EPS,
                               ArrayOnly(y), algorithm="two_pass")
    assert r.passed and r.outputs["y"]["count"] == x.size
    wrong = y.copy()
    wrong[0, 0] += 1
    assert lnverify.judge_forward(DLPackOnly(x), gamma, beta, EPS,
                                  DLPackOnly(wrong)).verdict == "bound_exceeded"
