"""The README's example runs as shown, its quick start is what CI runs, and the self-check
(`python -m fastpool`) passes, and fails when an example is wrong."""

from __future__ import annotations

import doctest
import functools
import io
import pathlib
import re
import subprocess
import sys

import numpy as np

from fastpool import _examples, _selfcheck

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_example_runs_as_shown():
    blocks = re.findall(r"```python\n(>>> .*?)```", README.read_text(), re.S)
    assert blocks, "the README has no >>> example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(block, {}, f"README-{i}", str(README), 0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted >= 4


def test_documentation_links_lead_to_files_and_headings():
    """Every relative link of the README and docs/ names a file that exists and, with a
    #fragment, a heading of that file (GitHub's anchors: lower case, spaces to hyphens, other
    punctuation dropped)."""

    @functools.cache
    def anchors(path):
        headings = re.findall(r"^#+ (.*)$", path.read_text(), re.M)
        return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}

    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 3, "docs/ has lost its pages"
    checked = 0
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # an absolute URL
            name, _, fragment = target.partition("#")
            path = (page.parent / name).resolve() if name else page
            assert path.is_file(), f"{page.name} links to {target}, which does not exist"
            if fragment:
                assert fragment in anchors(path), f"{page.name} links to {target}: no such heading"
            checked += 1
    assert checked >= 5


def quick_start_commands():
    section = README.read_text().split("## Quick start", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_quick_start_has_two_commands_and_ci_runs_the_test_command():
    install_and_check, install_and_test = quick_start_commands()
    assert "python -m fastpool" in install_and_check
    install, *commands = [part.strip() for part in install_and_test.split("&&")]
    assert install.startswith("pip install") and commands[-1] == "python -m pytest"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    at = ci.index(commands[0])  # CI runs the same commands, one after the other
    assert ci[at : at + len(commands)] == commands


def test_selfcheck_passes():
    out = io.StringIO()
    assert _selfcheck.main(out) == 0
    text = out.getvalue()
    assert "all passed" in text and "FAIL" not in text
    for example in _examples.EXAMPLES:
        assert example.name in text


def test_selfcheck_reports_a_wrong_example(monkeypatch):
    good = _examples.EXAMPLES[0]
    wrong = good._replace(y=good.y + np.uint8(1))
    monkeypatch.setattr(_selfcheck, "EXAMPLES", [wrong, *_examples.EXAMPLES[1:]])
    out = io.StringIO()
    assert _selfcheck.main(out) == 1
    assert "FAIL" in out.getvalue()


def test_python_dash_m_fastpool():
    result = subprocess.run(
        [sys.executable, "-m", "fastpool"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all passed" in result.stdout
