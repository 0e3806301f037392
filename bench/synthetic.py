"""Deterministic synthetic catalogs shaped like a large real registry (1,000 to 250,000
tools), with agent queries and planted labelled queries: what breaks search engines.

- Near-duplicate servers: a server is an owner (org, team, environment) × a service, and
  every server of a service has the same tools (its verbs × its objects), so a 100,000-tool
  catalog holds dozens of GitHub, filesystem and Android servers whose tools differ only by
  the owner's name.
- Shared phrases, as the seeds have them: every tool of a service carries the service's
  boost keyword (every github tool has boost `github`, as every adb tool has `android`), and
  every tool doing the same verb on the same object has the same trigger phrase ("list
  issues" on every GitHub, GitLab, Jira, Linear and Sentry server).
- Agent-style queries: conversational, full of stop words ("hey, can you help me list the
  issues on acme's github please"), and exact tool names.

Servers enter the sequence in a fixed shuffle and the catalog of N tools is the first N
tools, so smaller catalogs are subsets of larger ones and every run produces identical bytes.
Planted queries name tools from the first 1,000, so the same labelled set is asked at every
size while the distractors grow around it.
"""

import json
import random
from collections.abc import Iterator

from router.catalog.query_words import stop_words

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


# How agents open a request (stop words on purpose) and how they end it.
LEADS = ["", "can you", "could you please", "i need you to", "please", "hey, can you help me", "i want to"]
TAILS = ["", " please", " for me", " right now", " if you can", " thanks"]
# Planted targets: owners a query can name unambiguously (a word of its own, not a stop word).
PLANTED_QUERIES = 200
EXACT_NAME_SHARE = 0.25


def _snake(words: str) -> str:
    return words.replace(" ", "_")


def _plural(obj: str) -> str:
    return obj if obj.endswith("s") else obj + "s"


def _tool(owner: str, service: str, verb: str, obj: str, rng: random.Random) -> dict:
    what, _objects = SERVICES[service]
    verb_text, _asks = VERBS[verb]
    server = f"{owner}_{service}"
    name = f"{server}_{verb}_{_snake(obj)}"
    plural = _plural(obj) if verb in ("list", "search", "count", "export", "sync") else obj
    article = "the" if plural != obj else ("an" if obj[0] in "aeiou" else "a")
    sentences = [f"{verb_text} {article} {plural} in {what} for {owner.replace('_', ' ')}."]
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
        added = len(json.dumps({arg: prop}))
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
        # shared by every tool doing this on this object, on every server of every service
        "triggers": [f"{verb} {_plural(obj)}"],
        # shared by every tool of every server of this service
        "boost": [service.replace("_", " ")],
    }


def _servers() -> list[tuple[str, str]]:
    servers = [(owner, service) for owner in OWNERS for service in SERVICES]
    random.Random(SEED).shuffle(servers)
    return servers


def _combinations() -> list[tuple[str, str, str, str]]:
    return [
        (owner, service, verb, obj)
        for owner, service in _servers()
        for verb in VERBS
        for obj in SERVICES[service][1]
    ]


def catalog(n: int) -> list[dict]:
    """The first n tools of the fixed sequence."""
    combos = _combinations()
    if n > len(combos):
        raise ValueError(f"at most {len(combos)} synthetic tools, asked for {n}")
    rng = random.Random(SEED + 1)
    return [_tool(*combo, rng) for combo in combos[:n]]


def _ask(tool: dict, rng: random.Random, *, owner_named: bool) -> str:
    owner, service, verb, obj = _parts(tool["name"])
    what = SERVICES[service][0]
    lead = rng.choice(LEADS)
    ask = rng.choice(VERBS[verb][1])
    noun = _plural(obj) if verb in ("list", "count") else obj
    place = rng.choice([f" in {what}", f" on {service.replace('_', ' ')}", f" on the {service} server"])
    scope = ""
    if owner_named:
        spoken = owner.replace("_", " ")
        scope = rng.choice([f" for {spoken}", f" of {spoken}", f" at {spoken}", f" in the {spoken} account"])
    text = " ".join(part for part in (lead, f"{ask} {noun}{place}{scope}") if part)
    return text + rng.choice(TAILS)


def queries(tools: list[dict], count: int, seed: int = SEED) -> list[str]:
    """Agent-style requests for tools of this catalog (half name the owner)."""
    rng = random.Random(seed)
    return [
        _ask(tool, rng, owner_named=rng.random() < 0.5) for tool in rng.sample(tools, min(count, len(tools)))
    ]


def planted_queries(count: int = PLANTED_QUERIES, seed: int = SEED) -> list[dict]:
    """Labelled queries for tools among the first 1,000, each with one right answer: the
    request names the owner, the service, the verb and the object (conversationally, with
    stop words), or it is the tool's exact name."""
    rng = random.Random(seed + 2)
    stops = stop_words()
    candidates = [
        t
        for t in catalog(1_000)
        if len(_parts(t["name"])[0]) >= 4 and not stops.intersection(_parts(t["name"])[0].split("_"))
    ]
    out = []
    for number, tool in enumerate(rng.sample(candidates, count)):
        exact = rng.random() < EXACT_NAME_SHARE
        query = tool["name"] if exact else _ask(tool, rng, owner_named=True)
        out.append({"id": f"planted-{number}", "query": query, "relevant": [tool["name"]]})
    return out


def _parts(name: str) -> tuple[str, str, str, str]:
    for service in sorted(SERVICES, key=len, reverse=True):
        for verb in VERBS:
            marker = f"_{service}_{verb}_"
            at = name.find(marker)
            if at > 0:
                return name[:at], service, verb, name[at + len(marker) :].replace("_", " ")
    raise ValueError(name)


def write_jsonl(tools: list[dict]) -> Iterator[str]:
    for tool in tools:
        yield json.dumps(tool, sort_keys=True) + "\n"
