"""Which tools a search may return: the caller's profile and role, and the servers the user's
[search] settings hide. The lexical candidates, the semantic neighbours and the tools a query
names all pass the same filters."""

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Filters:
    profile: str | None = None
    # False: the caller's role may not call tools that mutate state, so none is offered
    may_call_mutating: bool = True
    hidden_servers: Collection[str] = ()

    @property
    def restricts(self) -> bool:
        """Whether any tool may be left out."""
        return self.profile is not None or not self.may_call_mutating or bool(self.hidden_servers)

    def allow(self, profile: str, mutating: bool, server: str) -> bool:
        return (
            (self.profile is None or profile == self.profile)
            and (self.may_call_mutating or not mutating)
            and server not in self.hidden_servers
        )
