"""Every public name of `sentsweep` shows how it is called: its docstring has an Examples section (as the API
reference reads it: griffe's Google-style sections, statically), and its doctests run and print what they say.
A line that starts a sweep or needs a tracking store carries `# doctest: +SKIP` (its call shape is the one
tests/test_library_api.py runs); everything else runs here."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import sentsweep

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def examples_sections() -> dict[str, int]:
    """{public name: the number of Examples sections of its docstring}, as the API reference parses them."""
    import griffe

    package = griffe.load("sentsweep", search_paths=[str(ROOT)], resolve_aliases=True, docstring_parser="google",
                          try_relative_path=False)
    counts = {}
    for name in package.exports or ():
        docstring = package[str(name)].docstring
        sections = docstring.parse("google") if docstring else []
        counts[str(name)] = sum(section.kind.value == "examples" for section in sections)
    return counts


def test_every_public_name_has_an_examples_section():
    counts = examples_sections()
    assert sorted(counts) == sorted(sentsweep.__all__)
    assert [name for name, count in counts.items() if count == 0] == []


def test_the_check_finds_a_docstring_without_examples(tmp_path):
    import griffe

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        '"""A package."""\n__all__ = ["shown", "bare"]\n\n\n'
        'def shown():\n    """Says.\n\n    Examples:\n        >>> shown()\n    """\n\n\n'
        'def bare():\n    """Says.\n\n    Example::\n\n        bare()\n    """\n')
    package = griffe.load("pkg", search_paths=[str(tmp_path)])
    kinds = {name: [section.kind.value for section in package[name].docstring.parse("google")]
             for name in ("shown", "bare")}
    assert kinds == {"shown": ["text", "examples"], "bare": ["text"]}


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    """The SentenceTransformer the losses' examples call `model`: the tests' tiny BERT, mean pooling."""
    from sentsweep.models import load_sentence_model

    return load_sentence_model(str(tiny_model_dir), "mean", 32)


def doctest_of(name: str, globs: dict) -> doctest.DocTest:
    value = getattr(sentsweep, name)
    return doctest.DocTestParser().get_doctest(value.__doc__ or "", globs, f"sentsweep.{name}", None, 0)


@pytest.mark.parametrize("name", sentsweep.__all__)
def test_the_examples_run_as_written(name, request, tmp_path, monkeypatch):
    """Each name's doctests, in a fresh folder (an example that writes a file writes it there), with `sentsweep`
    imported and, for a loss's example, `model` a tiny SentenceTransformer."""
    monkeypatch.chdir(tmp_path)
    globs = {"sentsweep": sentsweep}
    if any("model" in example.source for example in doctest_of(name, {}).examples):
        globs["model"] = request.getfixturevalue("model")
    test = doctest_of(name, globs)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    output: list[str] = []
    runner.run(test, out=output.append, clear_globs=False)
    assert runner.failures == 0, "".join(output)


def test_a_wrong_example_fails():
    test = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n>>> 1 + 1  # doctest: +SKIP\n3\n", {}, "x", None, 0)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test, out=lambda text: None)
    assert (runner.tries, runner.failures) == (1, 1)  # the skipped example is not run
