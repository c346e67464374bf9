"""The algorithm registry: every entry's references ("module:function" strings, imported when
used, as gymnasium's entry points are) resolve to what they name."""

from __future__ import annotations

import importlib
import inspect

import pytest

from agents.common.configuration.registry import ALGORITHMS

SHIPPED = sorted(ALGORITHMS)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_registered_reference_resolves_to_a_loader_of_model_run_config_and_device(name):
    algo = ALGORITHMS[name]
    assert callable(importlib.import_module(algo.alias).main)
    algo.implementation()
    for reference in (algo.loader, algo.snapshot_loader):
        module, function = reference.split(":")
        loader = getattr(importlib.import_module(module), function)
        assert list(inspect.signature(loader).parameters)[:3] in (
            ["path", "run_config", "device"],
            ["model_path", "run_config", "device"],
        ), reference


@pytest.mark.parametrize("name", [n for n in SHIPPED if ALGORITHMS[n].alias == "agents.custom_train"])
def test_our_registered_modules_are_custom_algorithms(name):
    from agents.session.contract import AlgorithmModule

    assert isinstance(ALGORITHMS[name].implementation(), AlgorithmModule)
