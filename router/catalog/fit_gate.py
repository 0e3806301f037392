"""The fit gate: which of a search's hits fit the request well enough to be on the agent's page.

Search ranks every candidate, however loosely it matches; an agent that takes the page's first
tool then calls whatever ranked best, even when nothing callable does the job (issue 36: a
media reader for "decompile this function", a directory maker for "run my godot game"). The
gate keeps a hit only when all of these hold:

1. It is not far below the best hit of the request (ADAPTIVE_CUT of its score), callable or
   not: when the tool that does the job cannot be called here, the callable ones it outranks
   by far are filler, and the page then names that server instead.
2. It fits on its own evidence, which does not depend on the other hits (the score's BM25 part
   is a share of the best, so it cannot say that): a trigger phrase or its exact name, or a
   cosine (its own or its best example's) of at least MIN_COSINE, or of MIN_COSINE_WITH_WORDS
   with MIN_COVERAGE of the query's words in its text. Without a semantic model (or vectors
   for it) the words alone decide: MIN_COVERAGE_WITHOUT_MODEL of them.
3. A tool that changes things (its server or a review says so) needs more: MIN_COSINE_TO_CHANGE
   (MIN_COSINE_TO_CHANGE_AS_ASKED when it is asked for with the request's verb,
   router/catalog/request_actions.py), or a trigger, its exact name, or an example request as
   close as STRONG_EXAMPLE_COSINE; and for a request that only asks to read or look
   (router/catalog/request_intent.py) nothing but those strong signs will do. Picking a wrong
   action is worse than finding nothing.
4. A request that leads with a verb of change no tool's text holds ("push my commits" where no
   tool pushes) asks for something no tool does: a tool whose behaviour is known (it changes
   things, or only reads) fits it only on a strong sign. Tools nobody has said either of are
   judged as before: a catalog without annotations describes its actions in its own words.
5. A callable hit must come within UNCALLABLE_COSINE_MARGIN of the match of every uncallable
   hit that fits (their examples' cosines when both have examples, else their cosines): a tool
   that cannot be called here then does the asked job and the callable one is a near miss,
   however the uncallable penalty ranks them ("a full-page screenshot of this URL" is not
   fetching it, "what's the news today" not the time). For a request that names a file by its
   path, an uncallable tool that takes no path outdoes none that takes one; and one that is not
   asked for with the request's verb outdoes none that is ("stage src/a.ts and src/b.ts" is
   git's add, however close radare2's file lister is to two paths); nor one that does the same
   job (their descriptions nearly alike, search.SAME_JOB_COSINE: radare2's file lister and the
   directory listing for "whats in ./scripts").
6. A tool whose name holds the reverse of the request's leading verb and not the verb itself
   (router/catalog/opposite_actions.py: `create_directory` for "remove the build folder")
   fits only on a strong sign.
7. A request that leads with a verb any object takes ("delete", "rename") and names a file or
   folder (by its path, or as one) keeps a tool that changes things and takes no path only on
   a strong sign (router/catalog/request_objects.py): "delete tmp/debug.log" is not a memory's
   delete; nor, where the verb does away with the file, a tool that only reads.
8. A request closer, by more than NOT_FOR_MARGIN, to one of its server's not-for requests
   (servers.not_for: "open a pull request" for a local git server) than to anything its tools
   are described or asked by keeps none of that server's tools but on a trigger or its exact
   name: the request asks for the job next to theirs that none of them does.
9. Beside a hit asked for by a trigger phrase or its exact name ("google what the current node
   LTS is" and a web search's trigger "google"), or of a server the request names ("it's loaded
   in r2", router/catalog/server_names.py), another server's hit with no strong sign is a
   near miss, callable or not: the words someone wrote for one tool outweigh a loose cosine
   elsewhere. Its own server's other tools stay (the clock's conversion beside its time). A hit
   that goes so outdoes nothing under rule 5.

The thresholds were chosen on development requests only (bench/page_quality.py reports the
wrong empties they cause on each development set beside the page's figures).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from router.catalog.request_intent import asks_only_to_read
from router.catalog.search import Evidence, SearchHit

# Each threshold was chosen on the development page sets and the development sets together
# (bench/page_quality.py reports the figures): the page's right-first rate and its filler
# against the pages the gate wrongly empties on each development set.

# 1. Below this share of the request's best hit, hits are mostly filler beneath the tool that
# does the job; a higher cut starts to drop the right tool where two servers' tools compete.
ADAPTIVE_CUT = 0.7
# 2. A request's cosine with a tool that does the job mostly lies above MIN_COSINE, with
# unrelated tools mostly below; a higher floor empties pages the development sets say are
# right (conversational and multi-step requests have low cosines). Between the two floors the
# request's words must be in the tool's text too.
MIN_COSINE = 0.3
MIN_COSINE_WITH_WORDS = 0.25
MIN_COVERAGE = 0.5
# With no cosine to weigh, a tool must hold most of what the request says.
MIN_COVERAGE_WITHOUT_MODEL = 0.5
# 3. A tool that changes things is offered on a clearer match; a strong sign is an example
# request closer than the ones that merely share the request's objects.
MIN_COSINE_TO_CHANGE = 0.35
STRONG_EXAMPLE_COSINE = 0.8
# ... unless it is asked for with the request's action (one of its examples or triggers leads
# with the request's verb, router/catalog/request_actions.py): "remember that the user prefers
# tabs" shares its verb with the memory tool's examples and nothing else, the payload pulling
# its cosine down to a read-only tool's looser floor.
MIN_COSINE_TO_CHANGE_AS_ASKED = 0.25
# 5. A callable tool within this of an uncallable one's match may still do the job (two
# readers of one page); one further below is the near miss the page must not offer.
UNCALLABLE_COSINE_MARGIN = 0.05
# 8. A request this much closer to a not-for request than to its server's tools asks for that
# job; within it, the two are alike (the request may name the job's objects) and the tools keep
# their chance.
NOT_FOR_MARGIN = 0.05


@dataclass(frozen=True)
class Thresholds:
    """The gate's thresholds (the module's constants unless a benchmark tries others)."""

    adaptive_cut: float = ADAPTIVE_CUT
    min_cosine: float = MIN_COSINE
    min_cosine_with_words: float = MIN_COSINE_WITH_WORDS
    min_coverage: float = MIN_COVERAGE
    min_coverage_without_model: float = MIN_COVERAGE_WITHOUT_MODEL
    min_cosine_to_change: float = MIN_COSINE_TO_CHANGE
    strong_example_cosine: float = STRONG_EXAMPLE_COSINE
    min_cosine_to_change_as_asked: float = MIN_COSINE_TO_CHANGE_AS_ASKED
    uncallable_cosine_margin: float = UNCALLABLE_COSINE_MARGIN
    not_for_margin: float = NOT_FOR_MARGIN


DEFAULT = Thresholds()


def strong(evidence: Evidence, thresholds: Thresholds = DEFAULT) -> bool:
    """A sign someone wrote for exactly this kind of request: a trigger phrase, the tool's
    exact name, or an example request very close to it."""
    return (
        evidence.trigger or evidence.exact_name or evidence.example_cosine >= thresholds.strong_example_cosine
    )


def fits_alone(evidence: Evidence, reads_only: bool, thresholds: Thresholds = DEFAULT) -> bool:
    """Rules 2 and 3 of the module's doc: whether this hit fits on its own evidence."""
    if strong(evidence, thresholds):
        return True
    if not evidence.semantic:
        return (not reads_only or not evidence.changes_things) and (
            evidence.coverage >= thresholds.min_coverage_without_model
        )
    if evidence.changes_things:
        needed = (
            thresholds.min_cosine_to_change_as_asked
            if evidence.asked_with_action
            else thresholds.min_cosine_to_change
        )
        return not reads_only and evidence.cosine >= needed
    return evidence.cosine >= thresholds.min_cosine or (
        evidence.cosine >= thresholds.min_cosine_with_words and evidence.coverage >= thresholds.min_coverage
    )


def fitting(query: str, hits: Sequence[SearchHit], thresholds: Thresholds = DEFAULT) -> list[SearchHit]:
    """The hits that fit the request, in search's order (see the module's doc)."""
    if not hits:
        return []
    best = max(hit.score for hit in hits)
    reads_only = asks_only_to_read(query)
    # the same for every hit: the request asks for a change no tool of the catalog names
    unnamed_change = any(hit.evidence is not None and hit.evidence.unnamed_change for hit in hits)
    fit = [
        (hit, hit.evidence)
        for hit in hits
        if hit.evidence is not None
        and hit.score >= thresholds.adaptive_cut * best
        and fits_alone(hit.evidence, reads_only, thresholds)
        and (not unnamed_change or strong(hit.evidence, thresholds) or not known_behaviour(hit.evidence))
        # rules 6 and 7: the reverse action, a tool that cannot act on the named file
        and (
            not (hit.evidence.opposite_action or hit.evidence.misses_the_path)
            or strong(hit.evidence, thresholds)
        )
        and not (not_its_servers_job(hit.evidence, thresholds) and not named(hit.evidence))
    ]
    # rule 9: a hit asked for by name leaves no room for other servers' loose matches
    named_servers = {hit.server for hit, evidence in fit if named(evidence) or evidence.server_named}
    fit = [
        (hit, evidence)
        for hit, evidence in fit
        if not (named_servers - {hit.server} and not strong(evidence, thresholds))
    ]
    # rule 5: what the uncallable hits that fit (and were not dropped so) say of the callable ones
    outdoing = [(hit.name, evidence) for hit, evidence in fit if not hit.available and evidence.semantic]
    return [
        hit
        for hit, evidence in fit
        if not (
            hit.available
            and any(
                outdone(evidence, other, thresholds)
                for name, other in outdoing
                if name not in evidence.same_job
            )
        )
    ]


def outdone(mine: Evidence, theirs: Evidence, thresholds: Thresholds = DEFAULT) -> bool:
    """Rule 5: whether a callable hit's match falls UNCALLABLE_COSINE_MARGIN below an uncallable
    hit's that fits: their examples' cosines when both have examples (how people ask for each),
    else their cosines. An uncallable tool that takes no path outdoes none that takes one for a
    request that names a file by its path: it cannot be doing what is asked of that file. Nor
    does one that is not asked for with the request's verb outdo one that is."""
    if theirs.ignores_the_path and not mine.ignores_the_path:
        return False
    if mine.asked_with_action and not theirs.asked_with_action:
        return False
    if mine.example_cosine > 0 and theirs.example_cosine > 0:
        return mine.example_cosine <= theirs.example_cosine - thresholds.uncallable_cosine_margin
    return mine.cosine <= theirs.cosine - thresholds.uncallable_cosine_margin


def not_its_servers_job(evidence: Evidence, thresholds: Thresholds = DEFAULT) -> bool:
    """Rule 8: whether the request is closer to one of its server's not-for requests than to
    anything of its tools, by more than NOT_FOR_MARGIN."""
    return evidence.not_for_cosine > evidence.server_cosine + thresholds.not_for_margin


def named(evidence: Evidence) -> bool:
    """Asked for by a trigger phrase or its exact name: a sign no cosine outweighs."""
    return evidence.trigger or evidence.exact_name


def known_behaviour(evidence: Evidence) -> bool:
    """Whether its server or a review says what it does to state: changes things, or only reads."""
    return evidence.changes_things or evidence.only_reads
