"""What the search filters (router/catalog/search_filters.py) read of every row of an index,
as arrays in that index's row order: whether the tool mutates, and its profile's and server's
numbers. The lexical and the semantic index each hold one (their rows are in different
orders) and filter by the same rule."""

from collections.abc import Sequence

import numpy as np

from router.catalog.search_filters import Filters


class FilterColumns:
    def __init__(self, mutating: Sequence[object], profiles: Sequence[object], servers: Sequence[object]):
        self._mutating = np.array(mutating, bool)
        self._profiles: dict[str, int] = {}
        self._servers: dict[str, int] = {}
        self._profile_codes = _codes(profiles, self._profiles)
        self._server_codes = _codes(servers, self._servers)

    def reordered(self, order: np.ndarray) -> "FilterColumns":
        """The same columns with the rows in `order`."""
        out = FilterColumns((), (), ())
        out._mutating, out._profile_codes, out._server_codes = (
            self._mutating[order],
            self._profile_codes[order],
            self._server_codes[order],
        )
        out._profiles, out._servers = self._profiles, self._servers
        return out

    def allowed(self, rows: np.ndarray, filters: Filters) -> np.ndarray:
        """Which of `rows` pass the filters (a bool per row)."""
        keep = np.ones(len(rows), bool)
        if filters.profile is not None:
            keep &= self._profile_codes[rows] == self._profiles.get(filters.profile, -1)
        if not filters.may_call_mutating:
            keep &= ~self._mutating[rows]
        hidden = [self._servers[s] for s in filters.hidden_servers if s in self._servers]
        if hidden:
            keep &= ~np.isin(self._server_codes[rows], hidden)
        return keep


def _codes(values: Sequence[object], codes: dict[str, int]) -> np.ndarray:
    """Each value's number in `codes` (filled as values first appear): filters compare ints."""
    return np.array([codes.setdefault(str(value), len(codes)) for value in values], np.int32)
