"""The package's shape stays what its readers rely on: one subpackage per product, no module
named like the standard library's (a reader of `import secrets` or `inspect` must know which
one is meant), no module of thousands of lines."""

import sys

from tests.project import PROJECT_ROOT

ROUTER = PROJECT_ROOT / "router"
PRODUCTS = {"catalog", "facade", "agents", "skills", "configs", "breakglass", "commands", "clients"}
# a module longer than this is several jobs in one file
MAX_MODULE_LINES = 600


def test_no_module_or_package_is_named_like_the_standard_library():
    shadowing = sorted(
        str(path.relative_to(PROJECT_ROOT))
        for path in [*ROUTER.rglob("*.py"), *(p for p in ROUTER.rglob("*") if p.is_dir())]
        if path.stem in sys.stdlib_module_names and path.name != "__pycache__"
    )
    assert shadowing == []


def test_each_product_is_a_subpackage_of_router():
    packages = {p.parent.name for p in ROUTER.glob("*/__init__.py")}
    assert PRODUCTS <= packages


def test_no_module_is_thousands_of_lines():
    long = {
        str(path.relative_to(PROJECT_ROOT)): count
        for path in ROUTER.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
