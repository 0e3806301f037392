"""The benchmark (`make bench` = `python -m bench`): retrieval quality and latency."""
