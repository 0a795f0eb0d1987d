"""How `make test` deals the suite out to its workers (tests/conftest.py, `pytest_collection_modifyitems`): a
module's tests stay together only where they share a module-scoped fixture of their own (a sweep run once for the
module) or name an `xdist_group`; every other test goes out alone, the slow ones first. The conftest's per-module
clean start, a module-scoped fixture every test has, must not put each module on one worker: the fault matrix's
cases would then run one after another on one worker."""

from tests import conftest

pytest_plugins = ("pytester",)

MODULE = '''
import pytest


@pytest.fixture(scope="module")
def sweep_run_once():
    return "a sweep"


def test_reads_the_modules_sweep(sweep_run_once):
    pass


def test_stands_alone():
    pass


@pytest.mark.slow
def test_slow_alone():
    pass


@pytest.mark.xdist_group("servers")
def test_in_a_named_group():
    pass
'''


def test_only_a_shared_module_fixture_or_a_named_group_keeps_tests_on_one_worker(pytester, monkeypatch):
    pytester.makeconftest("from tests.conftest import _each_modules_fixtures_start_clean, _each_test_starts_clean\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: starts Ray\n")
    items = pytester.getitems(MODULE)
    assert "_each_modules_fixtures_start_clean" in items[1].fixturenames  # every test has the per-module fixture
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    config = items[0].config
    config.option.loadgroup = True
    conftest.pytest_collection_modifyitems(config, items)
    module = items[0].module.__name__
    groups = {item.name: [mark.args[0] for mark in item.iter_markers("xdist_group")] for item in items}
    assert groups == {"test_reads_the_modules_sweep": [module], "test_stands_alone": [], "test_slow_alone": [],
                      "test_in_a_named_group": ["servers"]}
    # slow tests first, grouped ones before single ones; xdist's scheduler reads a test's group from its node id
    assert [item.name for item in items] == ["test_slow_alone", "test_reads_the_modules_sweep",
                                             "test_in_a_named_group", "test_stands_alone"]
    assert [item.nodeid.rpartition("@")[2] if "@" in item.nodeid else None for item in items] == [
        None, module, "servers", None]
