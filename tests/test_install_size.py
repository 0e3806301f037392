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


def test_the_node_bench_splits_the_wheel_into_parts_that_add_up(tmp_path):
    from bench import node_size

    parts = dict(node_size.node_parts())
    dist = install_size.installed()[node_size.NODE_DISTRIBUTION]
    assert sum(parts.values()) == sum(file.size or 0 for file in dist.files or [])
    assert parts["node (the executable)"] > 50 * install_size.MB  # the binary is most of it
    assert node_size.default_install_bytes() > sum(parts.values())
    # the pinned backends as the checkout's make install laid them out; none in an empty prefix
    assert node_size.npm_backends_bytes() > install_size.MB
    assert node_size.npm_backends_bytes(tmp_path) is None
