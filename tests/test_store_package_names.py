"""`loopx_core.store`'s names load on first use (PEP 562), and are the home modules' own objects.

`from loopx_core.store import FileStore` (and `Store`, `open_store`, `find_root`) gives the very
object its module defines; a name the package does not offer is the usual AttributeError; and
importing the package loads none of those modules (so `loopx_core.store.lean` stays free of
pydantic) until a name is asked for, then only that name's module.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import loopx_core.store as store_package
from loopx_core.store import base, choice, files, roots

HOMES = {"Store": base, "open_store": choice, "FileStore": files, "find_root": roots}


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_name_is_its_modules_own_object(name: str) -> None:
    assert getattr(store_package, name) is getattr(HOMES[name], name)
    assert name in store_package.__all__


@pytest.mark.parametrize(
    "name", ["Nothing", "no_such_module", "_HOMES_", "open"]
)  # no submodule's name: another test may have imported it
def test_another_name_is_an_attribute_error(name: str) -> None:
    with pytest.raises(AttributeError, match=f"module 'loopx_core.store' has no attribute '{name}'"):
        getattr(store_package, name)


PROBE = """
import json, sys
import loopx_core.store as s
homes = ["loopx_core.store." + m for m in ("base", "choice", "files", "roots")]
before = [m for m in homes if m in sys.modules]
s.find_root
after = [m for m in homes if m in sys.modules]
print(json.dumps([before, after, "pydantic" in sys.modules]))
"""


def test_importing_the_package_loads_a_module_only_when_its_name_is_asked() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    before, after, pydantic = json.loads(done.stdout)
    assert before == []
    assert "loopx_core.store.roots" in after and "loopx_core.store.choice" not in after
    assert pydantic is False
