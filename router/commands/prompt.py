"""`context-router prompt ROLE`: the role's 4-layer system prompt, as text, JSON or a ready
Anthropic / OpenAI request body with the cache markers at the frozen prefix's breakpoints."""

import argparse
import json
from pathlib import Path

from router.agents.handoff import read_task_brief
from router.agents.prefix import assemble
from router.agents.provider_bodies import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    DEFAULT_USER_MESSAGE,
    anthropic_body,
    openai_body,
)
from router.agents.roles import ROLE_NAMES

FORMATS = ("text", "json", "anthropic", "openai")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="assemble a role's cache-stable system prompt",
        description=(
            "Layer 1 (base invariant + canonical meta-tools) and layer 2 (shared context) "
            "are the same bytes for every role; layer 3 is the role, its mutation scope and "
            "profile; layer 4 the task brief."
        ),
    )
    parser.add_argument("role", choices=ROLE_NAMES, metavar="ROLE", help=", ".join(ROLE_NAMES))
    parser.add_argument("--brief", type=Path, metavar="FILE", help="a TaskBrief envelope (JSON)")
    parser.add_argument(
        "--profile", metavar="P", help="active toolbox profile (default: the brief's, else core)"
    )
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--model", help="model for the anthropic/openai body")
    parser.add_argument("--message", default=DEFAULT_USER_MESSAGE, help="the user turn of the request body")
    parser.add_argument("--max-tokens", type=_positive_int, default=4096, help="anthropic max_tokens")
    parser.set_defaults(handler=run)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    brief = read_task_brief(args.brief) if args.brief is not None else None
    prompt = assemble(args.role, brief=brief, profile=args.profile)
    if args.format == "text":
        print(prompt.system_prompt, end="")
        return 0
    if args.format == "json":
        body = prompt.as_json()
    elif args.format == "anthropic":
        body = anthropic_body(
            prompt,
            model=args.model or DEFAULT_ANTHROPIC_MODEL,
            user_message=args.message,
            max_tokens=args.max_tokens,
        )
    else:
        body = openai_body(prompt, model=args.model or DEFAULT_OPENAI_MODEL, user_message=args.message)
    print(json.dumps(body, ensure_ascii=False, indent=2))
    return 0
