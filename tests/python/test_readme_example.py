"""The README's pytest example, run as written: the block after the marker
<!-- python-example --> in README.md is executed and each test_* it defines
is called. A wrong kernel put in its place must fail (negative control)."""

import os
import re

import numpy as np
import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def example_namespace():
    with open(README) as f:
        text = f.read()
    m = re.search(r"<!-- python-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python example after <!-- python-example -->"
    ns = {}
    exec(compile(m.group(1), "README.md example", "exec"), ns)
    return ns


def test_the_readme_example_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("LNV_CASES_DIR", str(tmp_path))
    ns = example_namespace()
    tests = [v for k, v in ns.items() if k.startswith("test_")]
    assert tests
    for t in tests:
        t()
    assert not list(tmp_path.iterdir())  # nothing failed, no case written


def test_the_readme_example_catches_a_one_pass_variance(tmp_path, monkeypatch):
    monkeypatch.setenv("LNV_CASES_DIR", str(tmp_path))
    ns = example_namespace()

    def one_pass(x, gamma, beta, eps):
        mean = x.mean(axis=1, keepdims=True, dtype=np.float32)
        var = (x * x).mean(axis=1, keepdims=True, dtype=np.float32) - mean * mean
        rstd = np.float32(1) / np.sqrt(np.maximum(var, 0) + np.float32(eps))
        return (x - mean) * rstd * gamma + beta, mean[:, 0], rstd[:, 0]

    ns["my_layer_norm"] = one_pass
    with pytest.raises(AssertionError, match="large_mean|bound_exceeded"):
        ns["test_my_layer_norm_on_every_family"]()
    assert len(list(tmp_path.glob("*.case"))) == 1
