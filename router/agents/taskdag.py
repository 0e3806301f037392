"""A director's plan: TaskBriefs that form a DAG through `dependsOn`.

Each brief is validated as an envelope; then the plan as a whole: task ids are unique, every
dependency is a task of the plan, and there is no cycle (a cycle would leave its tasks
waiting for each other forever).
"""

from graphlib import CycleError, TopologicalSorter
from typing import Any

from router.agents.handoff import HandoffError, TaskBrief, parse_envelope


def validate_plan(raw: list[Any], *, source: str = "plan") -> list[TaskBrief]:
    """The plan's briefs in an order where each comes after everything it depends on."""
    if not raw:
        raise HandoffError(f"{source}: a plan needs at least one TaskBrief")
    briefs: list[TaskBrief] = []
    for index, item in enumerate(raw):
        envelope = parse_envelope(item, source=f"{source}: [{index}]")
        if not isinstance(envelope, TaskBrief):
            raise HandoffError(
                f"{source}: [{index}]: field kind: a plan holds only TaskBriefs, got {envelope.kind}"
            )
        briefs.append(envelope)

    position: dict[str, int] = {}
    for index, brief in enumerate(briefs):
        if brief.taskId in position:
            raise HandoffError(
                f"{source}: [{index}]: field taskId: {brief.taskId!r} is already used by "
                f"[{position[brief.taskId]}]"
            )
        position[brief.taskId] = index
    for index, brief in enumerate(briefs):
        for dep_index, dependency in enumerate(brief.dependsOn):
            if dependency not in position:
                raise HandoffError(
                    f"{source}: [{index}]: field dependsOn[{dep_index}]: no task {dependency!r} in the plan"
                )

    sorter = TopologicalSorter({brief.taskId: brief.dependsOn for brief in briefs})
    try:
        order = list(sorter.static_order())
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise HandoffError(f"{source}: field dependsOn: tasks form a cycle: {cycle}") from None
    return [briefs[position[task_id]] for task_id in order]
