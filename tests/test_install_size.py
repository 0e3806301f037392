"""bench/install_size.py counts what semantic search alone brings into the default install:
numpy and static-embed-runner (nothing else: no hub client), and the model's bytes."""

from bench import install_size
from router.semantic.static_model import MODEL_DIR, MODEL_FILES


def test_only_the_semantic_requirements_and_what_only_they_pull_are_counted():
    dists = install_size.installed()
    assert install_size.semantic_only(dists) == ["numpy", "static-embed-runner"]
    # a distribution the other core requirements also pull is theirs, not semantic search's
    assert "pydantic" in install_size.reachable(install_size.requirements_of(dists["context-router"]), dists)


def test_sizes_are_each_distributions_record_and_the_model_directory():
    rows = dict(install_size.sizes())
    numpy_row = next(label for label in rows if label.startswith("numpy "))
    assert rows[numpy_row] > 10 * install_size.MB  # its compiled libraries, not only its Python
    model_bytes = rows["the model (model/)"]
    assert model_bytes >= sum((MODEL_DIR / name).stat().st_size for name in MODEL_FILES)
