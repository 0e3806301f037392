"""Deterministic synthetic catalogs of realistic MCP tools (100 to 100,000) and agent queries.

Real large catalogs are many servers of the same kinds (several GitHub orgs, a dozen
databases, every cloud), each with the usual verbs over its own objects. The generator
composes that: an owner (org/team/env) × a service × a verb × an object gives the tool; its
description, argument names and argument descriptions come from the same vocabulary, and
its inputSchema is padded with realistic optional arguments to 300-1,500 bytes. The order is
a fixed shuffle, so the catalog of N tools is the first N of the same sequence: smaller
catalogs are subsets of larger ones, and every run produces identical bytes.
"""

import json
import random
from collections.abc import Iterator

SEED = 20261129
SCHEMA_MIN_BYTES, SCHEMA_MAX_BYTES = 300, 1500

# service → (what it is, its objects)
SERVICES = {
    "github": (
        "GitHub",
        ["repository", "issue", "pull request", "branch", "commit", "release", "workflow run", "gist"],
    ),
    "gitlab": ("GitLab", ["project", "merge request", "pipeline", "issue", "runner", "tag"]),
    "jira": ("Jira", ["ticket", "sprint", "epic", "board", "comment", "worklog"]),
    "slack": ("Slack", ["message", "channel", "thread", "reaction", "user group", "reminder"]),
    "postgres": ("PostgreSQL", ["table", "query", "index", "schema", "role", "backup"]),
    "mysql": ("MySQL", ["table", "query", "replica", "user", "database"]),
    "redis": ("Redis", ["key", "stream", "hash", "cache entry", "pubsub channel"]),
    "s3": ("Amazon S3", ["bucket", "object", "lifecycle rule", "presigned url", "bucket policy"]),
    "kubernetes": (
        "Kubernetes",
        ["pod", "deployment", "service", "config map", "secret", "namespace", "cron job"],
    ),
    "docker": ("Docker", ["container", "image", "volume", "network", "compose stack"]),
    "stripe": ("Stripe", ["customer", "invoice", "subscription", "payment intent", "refund", "coupon"]),
    "shopify": ("Shopify", ["product", "order", "inventory level", "discount", "fulfillment"]),
    "gmail": ("Gmail", ["email", "draft", "label", "attachment", "filter"]),
    "calendar": ("Google Calendar", ["event", "calendar", "attendee", "free busy slot"]),
    "notion": ("Notion", ["page", "database", "block", "comment"]),
    "confluence": ("Confluence", ["page", "space", "attachment", "label"]),
    "figma": ("Figma", ["file", "frame", "component", "comment", "style"]),
    "sentry": ("Sentry", ["issue", "event", "release", "alert rule", "project"]),
    "datadog": ("Datadog", ["monitor", "dashboard", "metric", "log query", "incident"]),
    "grafana": ("Grafana", ["dashboard", "panel", "alert", "data source", "annotation"]),
    "twilio": ("Twilio", ["sms", "call", "phone number", "recording"]),
    "zoom": ("Zoom", ["meeting", "recording", "webinar", "participant"]),
    "salesforce": ("Salesforce", ["lead", "opportunity", "account", "contact", "case"]),
    "hubspot": ("HubSpot", ["contact", "deal", "company", "email campaign", "form"]),
    "spotify": ("Spotify", ["playlist", "track", "album", "artist", "queue"]),
    "youtube": ("YouTube", ["video", "playlist", "caption", "comment", "channel"]),
    "weather": ("the weather service", ["forecast", "current conditions", "alert", "air quality index"]),
    "maps": ("the maps service", ["route", "place", "geocode", "distance matrix", "timezone"]),
    "filesystem": ("the local filesystem", ["file", "directory", "symlink", "file permission"]),
    "git": ("a local git repository", ["commit", "branch", "stash", "diff", "tag", "remote"]),
    "terraform": ("Terraform", ["plan", "state", "workspace", "module", "provider"]),
    "aws_ec2": ("Amazon EC2", ["instance", "security group", "key pair", "snapshot", "elastic ip"]),
    "gcp_compute": ("Google Compute Engine", ["vm instance", "disk", "firewall rule", "instance template"]),
    "azure_storage": ("Azure Storage", ["blob", "container", "queue message", "file share"]),
    "elasticsearch": ("Elasticsearch", ["index", "document", "mapping", "alias", "snapshot"]),
    "mongodb": ("MongoDB", ["collection", "document", "aggregation", "index"]),
    "airtable": ("Airtable", ["base", "table", "record", "view"]),
    "linear": ("Linear", ["issue", "project", "cycle", "team"]),
    "pagerduty": ("PagerDuty", ["incident", "schedule", "escalation policy", "on call shift"]),
    "openai": ("the OpenAI API", ["completion", "embedding", "fine tune job", "file", "assistant"]),
    "huggingface": ("Hugging Face Hub", ["model", "dataset", "space", "inference endpoint"]),
    "vercel": ("Vercel", ["deployment", "domain", "environment variable", "project"]),
    "cloudflare": ("Cloudflare", ["dns record", "worker", "zone", "firewall rule", "cache purge"]),
    "android": ("an Android device", ["app", "screenshot", "logcat", "apk", "emulator"]),
    "browser": ("a headless browser", ["page", "screenshot", "cookie", "pdf", "element"]),
    "blender": ("Blender", ["object", "material", "scene", "render", "modifier"]),
    "godot": ("Godot", ["scene", "node", "script", "signal", "project setting"]),
    "ghidra": ("Ghidra", ["function", "symbol", "cross reference", "decompilation", "data type"]),
    "jupyter": ("Jupyter", ["notebook", "cell", "kernel", "output"]),
    "sqlite": ("SQLite", ["table", "query", "view", "trigger"]),
}
# verb → (how a description says it, how an agent asks for it)
VERBS = {
    "list": ("Lists", ["list all", "show me the", "what are the"]),
    "get": ("Gets the details of", ["get the", "show the details of the", "fetch the"]),
    "create": ("Creates", ["create a new", "make a", "add a"]),
    "update": ("Updates", ["update the", "change the", "edit the"]),
    "delete": ("Deletes", ["delete the", "remove the", "get rid of the"]),
    "search": ("Searches for", ["search for", "find the", "look up the"]),
    "archive": ("Archives", ["archive the", "move to the archive the"]),
    "restore": ("Restores", ["restore the", "bring back the"]),
    "export": ("Exports", ["export the", "download a copy of the"]),
    "import": ("Imports", ["import a", "load a"]),
    "sync": ("Synchronizes", ["sync the", "refresh the"]),
    "watch": ("Subscribes to changes of", ["watch the", "notify me about changes to the"]),
    "count": ("Counts", ["how many", "count the"]),
    "copy": ("Copies", ["copy the", "duplicate the"]),
    "validate": ("Validates", ["validate the", "check the"]),
}
OWNERS = [
    "",
    "acme",
    "globex",
    "initech",
    "umbrella",
    "hooli",
    "stark",
    "wayne",
    "wonka",
    "tyrell",
    "soylent",
    "cyberdyne",
    "aperture",
    "blackmesa",
    "oscorp",
    "prod",
    "staging",
    "eu",
    "us",
    "apac",
    "team_alpha",
    "team_beta",
    "legacy",
    "sandbox",
    "internal",
    "partner",
    "research",
    "finance",
    "marketing",
    "support",
    "platform",
    "data",
    "mobile",
    "web",
    "infra",
    "security",
    "qa",
    "growth",
    "ops",
    "edge",
    "archive",
    "analytics",
    "billing",
    "identity",
    "search",
    "payments",
    "devtools",
    "ml",
    "gaming",
    "media",
    "retail",
    "health",
    "travel",
    "logistics",
    "energy",
    "telecom",
    "insurance",
    "banking",
    "education",
    "nonprofit",
    "gov",
    "legal",
    "hr",
    "sales",
    "design",
    "content",
    "iot",
    "robotics",
    "auto",
    "aero",
    "biotech",
    "pharma",
    "food",
    "fashion",
    "sports",
    "music",
    "film",
    "news",
    "realestate",
    "crypto",
    "hosting",
    "cdn",
    "dns",
    "email",
    "chat",
    "voice",
    "video",
    "maps",
    "weather",
    "calendar",
    "docs",
    "wiki",
    "forms",
    "surveys",
    "crm",
    "erp",
    "pos",
    "kiosk",
    "fleet",
    "warehouse",
    "factory",
    "lab",
    "campus",
    "clinic",
    "studio",
    "store",
    "bank",
    "school",
    "city",
    "county",
    "state",
    "federal",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "north",
    "south",
    "east",
    "west",
    "central",
    "blue",
    "green",
    "red",
    "amber",
    "violet",
    "silver",
    "gold",
    "copper",
    "iron",
    "cobalt",
    "nickel",
    "zinc",
    "argon",
    "neon",
    "xenon",
    "helium",
    "lithium",
    "carbon",
    "oxygen",
    "sodium",
]
QUALIFIERS = [
    "Supports pagination with a cursor.",
    "Results are sorted by last update, newest first.",
    "Requires write access.",
    "Read-only; safe to call at any time.",
    "Rate limited to 60 calls per minute.",
    "Returns at most 100 items per call.",
    "Fails if the {object} does not exist.",
    "Use the id returned by the list call.",
    "Times are ISO 8601 in UTC.",
    "Large results are truncated; narrow them with filters.",
    "Works on archived {object}s too.",
    "Changes are applied immediately and cannot be undone.",
]
COMMON_ARGS = [
    ("limit", "integer", "Maximum number of results to return (1-100)."),
    ("cursor", "string", "Opaque pagination cursor from a previous call."),
    ("fields", "array", "Only these fields in the result, to keep it small."),
    ("sort", "string", "Sort order: created, updated or name."),
    ("since", "string", "Only items changed after this ISO 8601 time."),
    ("until", "string", "Only items changed before this ISO 8601 time."),
    ("dry_run", "boolean", "Show what would change without changing anything."),
    ("include_archived", "boolean", "Also return archived items."),
    ("labels", "array", "Only items carrying all of these labels."),
    ("owner", "string", "User or team that owns the item."),
    ("region", "string", "Region or data center to act in, e.g. eu-west-1."),
    ("timeout_seconds", "integer", "Give up after this many seconds."),
    ("format", "string", "Output format: json, csv or markdown."),
    ("verbose", "boolean", "Include every attribute instead of a summary."),
    ("tags", "object", "Key/value tags to match or set."),
]


def _snake(words: str) -> str:
    return words.replace(" ", "_")


def _tool(owner: str, service: str, verb: str, obj: str, rng: random.Random) -> dict:
    what, _objects = SERVICES[service]
    verb_text, _asks = VERBS[verb]
    server = f"{owner}_{service}" if owner else service
    name = f"{server}_{verb}_{_snake(obj)}"
    plural = obj + ("s" if verb in ("list", "search", "count", "export", "sync") else "")
    where = f" for {owner.replace('_', ' ')}" if owner else ""
    article = "the" if plural != obj else ("an" if obj[0] in "aeiou" else "a")
    sentences = [f"{verb_text} {article} {plural} in {what}{where}."]
    sentences += [q.format(object=obj) for q in rng.sample(QUALIFIERS, rng.randint(1, 3))]
    properties: dict[str, dict] = {
        f"{_snake(obj)}_id": {"type": "string", "description": f"Id of the {obj} in {what}."},
    }
    if verb in ("search", "list", "count"):
        properties["query"] = {"type": "string", "description": f"Text to match in the {obj} name or body."}
    if verb in ("create", "update"):
        properties["name"] = {"type": "string", "description": f"Name of the {obj}."}
        properties["body"] = {"type": "string", "description": f"Content of the {obj} (markdown)."}
    target = rng.randint(SCHEMA_MIN_BYTES, SCHEMA_MAX_BYTES)
    schema = {"type": "object", "properties": properties, "required": [f"{_snake(obj)}_id"]}
    size = len(json.dumps(schema))
    for arg, arg_type, description in rng.sample(COMMON_ARGS, len(COMMON_ARGS)):
        prop = {"type": arg_type, "description": description}
        if arg_type == "array":
            prop["items"] = {"type": "string"}
        added = len(json.dumps({arg: prop}))  # '"arg": {...}' plus ', '
        if size + added > target:
            break
        properties[arg] = prop
        size += added
    id_arg = properties[f"{_snake(obj)}_id"]
    while size < SCHEMA_MIN_BYTES:  # a few schemas need a longer id description
        extra = f" Copy it from the {what} web UI."
        id_arg["description"] += extra
        size += len(extra)
    return {
        "name": name,
        "description": " ".join(sentences),
        "inputSchema": schema,
        "annotations": {
            "readOnlyHint": verb in ("list", "get", "search", "export", "count", "validate", "watch")
        },
        "server": server,
        "profile": "bench",
    }


def _combinations() -> list[tuple[str, str, str, str]]:
    combos = [
        (owner, service, verb, obj)
        for owner in OWNERS
        for service, (_, objects) in SERVICES.items()
        for verb in VERBS
        for obj in objects
    ]
    rng = random.Random(SEED)
    # the 100-tool catalog should look like one person's setup (many services, few owners):
    # owners enter the sequence in order, each owner's tools shuffled
    by_owner: dict[str, list] = {}
    for combo in combos:
        by_owner.setdefault(combo[0], []).append(combo)
    ordered = []
    for owner in OWNERS:
        group = by_owner[owner]
        rng.shuffle(group)
        ordered.extend(group)
    return ordered


def catalog(n: int) -> list[dict]:
    """The first n tools of the fixed sequence."""
    combos = _combinations()
    if n > len(combos):
        raise ValueError(f"at most {len(combos)} synthetic tools, asked for {n}")
    rng = random.Random(SEED + 1)
    return [_tool(*combo, rng) for combo in combos[:n]]


def queries(tools: list[dict], count: int, seed: int = SEED) -> list[str]:
    """Agent-style requests for tools of this catalog (so each query has a right answer)."""
    rng = random.Random(seed)
    out = []
    for tool in rng.sample(tools, min(count, len(tools))):
        server, verb, obj = _parts(tool["name"])
        owner, service = server
        _, asks = VERBS[verb]
        what = SERVICES[service][0]
        ask = rng.choice(asks)
        place = rng.choice([f" in {what}", f" on {service.replace('_', ' ')}", ""])
        scope = f" for {owner.replace('_', ' ')}" if owner and rng.random() < 0.5 else ""
        tail = rng.choice(["", " please", " from last week", " that changed today", " for the release"])
        out.append(f"{ask} {obj}{'s' if verb == 'list' else ''}{place}{scope}{tail}")
    return out


def _parts(name: str) -> tuple[tuple[str, str], str, str]:
    for service in sorted(SERVICES, key=len, reverse=True):
        for verb in VERBS:
            marker = f"{service}_{verb}_"
            at = name.find(marker)
            if at != -1 and (at == 0 or name[at - 1] == "_"):
                owner = name[: max(at - 1, 0)]
                obj = name[at + len(marker) :].replace("_", " ")
                return (owner, service), verb, obj
    raise ValueError(name)


def write_jsonl(tools: list[dict]) -> Iterator[str]:
    for tool in tools:
        yield json.dumps(tool, sort_keys=True) + "\n"
