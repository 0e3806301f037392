-- context-router: the whole database, tables and views, in one file.
--
-- Applied by router/db.py inside one transaction whenever the file's PRAGMA user_version is
-- older than router.db.SCHEMA_VERSION. Every statement is idempotent (IF NOT EXISTS; views
-- are dropped and re-created), so re-applying it is harmless.
--
-- Keep everything here readable by the sqlite3 shell people already have (Debian 12 ships
-- 3.40): no JSONB functions, no syntax newer than 3.40.
--
-- Conventions: timestamps are ISO-8601 UTC text ('2026-11-29T20:21:16.123Z'); money is integer
-- micro-dollars (1 USD = 1,000,000); hashes carry their algorithm ('b3:<hex>', 'sha256:<hex>').

------------------------------------------------------------------------------------------
-- Catalog: profiles → servers → tools, with an external-content FTS5 index over tools.
------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS profiles (
    name        TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE IF NOT EXISTS servers (
    name        TEXT PRIMARY KEY,
    profile     TEXT NOT NULL REFERENCES profiles(name),
    -- where the tool list came from (package and version, or a harvest), for people
    source      TEXT NOT NULL DEFAULT '',
    -- the seed or catalog file that declared it
    origin_file TEXT NOT NULL DEFAULT '',
    -- router field of its seed: requests that look like its tools' job but that none of them
    -- does ("open a pull request" for a local git server), one per line, embedded like the
    -- tools' examples (example_embeddings): the page then offers none of its tools for them
    -- (router/catalog/fit_gate.py rule 8). Version 15.
    not_for     TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE IF NOT EXISTS tools (
    id              INTEGER PRIMARY KEY,
    -- the catalog name agents use; unique across every server
    name            TEXT NOT NULL UNIQUE,
    -- the name the backend itself knows the tool by (forwarded calls use this)
    backend_name    TEXT NOT NULL,
    server          TEXT NOT NULL REFERENCES servers(name) ON DELETE CASCADE,
    description     TEXT NOT NULL,
    -- one line for search results: never the schema
    summary         TEXT NOT NULL,
    input_schema    TEXT NOT NULL CHECK (json_valid(input_schema)),
    annotations     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(annotations)),
    -- searchable text derived from the definition: the name split into words, and the
    -- argument names with their descriptions
    name_words      TEXT NOT NULL DEFAULT '',
    arg_text        TEXT NOT NULL DEFAULT '',
    -- router fields: trigger phrases and boost keywords, one per line
    triggers        TEXT NOT NULL DEFAULT '',
    boost           TEXT NOT NULL DEFAULT '',
    -- 1 unless annotations.readOnlyHint is true: a tool that does not say it is read-only
    -- is treated as mutating (fail-closed)
    mutating        INTEGER NOT NULL CHECK (mutating IN (0, 1)),
    -- b3: hash of the RFC 8785 bytes of the tool as the backend lists it (name, title,
    -- description, inputSchema, outputSchema, annotations, and any other MCP field the seed
    -- keeps; not triggers or boost: router/catalog/models.py CatalogTool.mcp_definition), so a load
    -- sees a changed definition even in a field that has no column of its own
    definition_hash TEXT NOT NULL,
    -- the shape of the tool's structured result (MCP outputSchema) and its human title, when
    -- the backend gives them. Last, because version 3 added them to existing files with
    -- ALTER TABLE (router/db.py), which appends; rows from before it hold NULL until the next
    -- catalog load fills them in.
    output_schema   TEXT CHECK (output_schema IS NULL OR json_valid(output_schema)),
    title           TEXT,
    -- who decided `mutating`: the server's own annotations.readOnlyHint ('server'), the
    -- reviewed router block of the seed ('router-review'), or nobody ('default-mutating':
    -- fail-closed). Version 7 added it (router/db.py), like the two below.
    read_only_source TEXT NOT NULL DEFAULT 'default-mutating'
        CHECK (read_only_source IN ('server', 'router-review', 'default-mutating')),
    -- the JSON Schema draft a call's args are checked under (the one the inputSchema declares
    -- with $schema, else 2020-12, else draft-04 for schemas written in its style), or
    -- 'unchecked' for a spec-valid tool whose schema no validator accepts
    arg_validator   TEXT NOT NULL DEFAULT 'draft2020-12',
    -- router field: short requests in everyday words that the tool answers, one per line
    -- (indexed in tools_fts and embedded one by one, example_embeddings). Version 12, like the
    -- two below.
    examples        TEXT NOT NULL DEFAULT '',
    -- 1 when the tool's own description or title says it is deprecated
    -- (router/catalog/deprecation.py); replaced_by: the catalog name of the tool of the same
    -- server that it names as its replacement, when there is one. Search ranks it below that one.
    deprecated      INTEGER NOT NULL DEFAULT 0 CHECK (deprecated IN (0, 1)),
    replaced_by     TEXT,
    UNIQUE (server, backend_name)
) STRICT;

CREATE INDEX IF NOT EXISTS tools_by_server ON tools(server);

-- External-content FTS5 index over tools: the text lives once, in tools; the triggers
-- below keep the index in step with every insert, update and delete.
-- porter stemming so 'installing' finds 'install'; unicode61 folds case and diacritics.
-- The examples (how people ask for the tool) have a column of their own, so their words
-- carry a weight of their own (router/catalog/search.py COLUMN_WEIGHTS).
CREATE VIRTUAL TABLE IF NOT EXISTS tools_fts USING fts5(
    name_words, description, arg_text, triggers, boost, examples,
    content='tools', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS tools_ai AFTER INSERT ON tools BEGIN
    INSERT INTO tools_fts(rowid, name_words, description, arg_text, triggers, boost, examples)
    VALUES (new.id, new.name_words, new.description, new.arg_text, new.triggers, new.boost,
            new.examples);
END;

CREATE TRIGGER IF NOT EXISTS tools_ad AFTER DELETE ON tools BEGIN
    INSERT INTO tools_fts(tools_fts, rowid, name_words, description, arg_text, triggers, boost,
                          examples)
    VALUES ('delete', old.id, old.name_words, old.description, old.arg_text, old.triggers,
            old.boost, old.examples);
END;

CREATE TRIGGER IF NOT EXISTS tools_au AFTER UPDATE ON tools BEGIN
    INSERT INTO tools_fts(tools_fts, rowid, name_words, description, arg_text, triggers, boost,
                          examples)
    VALUES ('delete', old.id, old.name_words, old.description, old.arg_text, old.triggers,
            old.boost, old.examples);
    INSERT INTO tools_fts(rowid, name_words, description, arg_text, triggers, boost, examples)
    VALUES (new.id, new.name_words, new.description, new.arg_text, new.triggers, new.boost,
            new.examples);
END;

-- One row per catalog load that changed something; a load identical to the current
-- catalog writes nothing.
CREATE TABLE IF NOT EXISTS catalog_loads (
    id          INTEGER PRIMARY KEY,
    loaded_at   TEXT NOT NULL,
    input_hash  TEXT NOT NULL,
    tools       INTEGER NOT NULL,
    added       INTEGER NOT NULL,
    changed     INTEGER NOT NULL,
    removed     INTEGER NOT NULL
) STRICT;

------------------------------------------------------------------------------------------
-- Calls: audit of every meta-tool call and the circuit breakers, per backend tool and per
-- backend server.
------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS audit (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    session_id  TEXT NOT NULL,
    role        TEXT NOT NULL,
    -- 'mcp_call_tool' etc.; target is the catalog tool a call was for, if any
    meta_tool   TEXT NOT NULL,
    target      TEXT,
    -- b3: hash of the RFC 8785 bytes of the arguments; the arguments themselves are not
    -- stored (they may hold secrets)
    args_hash   TEXT NOT NULL,
    -- 'started' until the call finishes; v_recent_audit shows a 'started' row as 'in_flight'
    -- until its deadline_at, and as 'interrupted' after it (its process died mid-call)
    outcome     TEXT NOT NULL,
    latency_ms  REAL,
    error       TEXT,
    pid         INTEGER NOT NULL,
    -- a forwarded call's 'started' row: the latest the router would have finished it on its
    -- own (its backend timeouts plus a grace, router/facade/audit.py). NULL on rows that are written
    -- finished, and on rows from before schema version 2. Last, because version 2 added it
    -- to existing files with ALTER TABLE (router/db.py), which appends.
    deadline_at TEXT,
    -- a call's target: who decided whether it is read-only ('server', 'router-review',
    -- 'default-mutating'), as the role rule saw it. Version 7.
    read_only_source TEXT,
    -- what a search or inspect put in the model's context: its answer's tokens (cl100k, the
    -- compact JSON the facade sends); and for a search, the callable tools on its page (0: the
    -- page had nothing the caller could call). NULL on other rows and before version 13.
    result_tokens    INTEGER,
    page_tools       INTEGER
) STRICT;

CREATE INDEX IF NOT EXISTS audit_by_time ON audit(started_at);

CREATE TABLE IF NOT EXISTS breaker (
    tool                 TEXT PRIMARY KEY,
    state                TEXT NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    -- unix seconds (REAL) so the 60 s window is arithmetic, injectable in tests
    opened_at            REAL,
    updated_at           TEXT NOT NULL,
    last_error           TEXT
) STRICT;

-- The breaker of a backend server as a whole: consecutive failures of its process (it did
-- not start, crashed or hung) open it for all its tools (router/facade/breaker.py).
CREATE TABLE IF NOT EXISTS backend_breaker (
    server               TEXT PRIMARY KEY,
    state                TEXT NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    opened_at            REAL,
    updated_at           TEXT NOT NULL,
    last_error           TEXT
) STRICT;

-- Rug-pull defense (router/catalog/quarantine.py): a tool whose running backend lists a
-- definition other than the catalog's. It is not callable until the user accepts the new
-- definition (`harvest --accept-changed`, `import`), or the backend lists the old one again.
CREATE TABLE IF NOT EXISTS tool_quarantine (
    tool         TEXT PRIMARY KEY REFERENCES tools(name) ON DELETE CASCADE,
    server       TEXT NOT NULL,
    -- the catalog's definition_hash and what the backend listed ('' when it no longer lists it)
    catalog_hash TEXT NOT NULL,
    live_hash    TEXT NOT NULL,
    -- the top-level MCP fields that differ, comma-separated ('(gone)' for a vanished tool)
    changed      TEXT NOT NULL,
    detected_at  TEXT NOT NULL
) STRICT;

-- The stdio backends a router process started, for `context-router servers` in another
-- process: a row is current while its backend_pid is alive with the same start time.
CREATE TABLE IF NOT EXISTS backend_runs (
    server        TEXT NOT NULL,
    router_pid    INTEGER NOT NULL,
    backend_pid   INTEGER NOT NULL,
    -- the process's start time as the OS gives it (/proc/PID/stat field 22), so a recycled
    -- pid is not taken for the backend
    backend_start TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    PRIMARY KEY (server, router_pid)
) STRICT;

------------------------------------------------------------------------------------------
-- Skills: hashes of locked skills and every verification outcome.
------------------------------------------------------------------------------------------

-- What the two locks hold for each skill, as last read by `skills lock|verify|mount`.
CREATE TABLE IF NOT EXISTS skill_hashes (
    skill            TEXT PRIMARY KEY,
    folder           TEXT NOT NULL,
    -- .skill-lock.json skillFolderHash, and which algorithm made it:
    -- 'sha256-files' (local sources) or 'git-tree' (GitHub tree SHA); NULL if not locked there
    folder_hash      TEXT,
    folder_hash_kind TEXT CHECK (folder_hash_kind IN ('sha256-files', 'git-tree')),
    -- grimoire.lock: b3: of the RFC 8785 declaration, and the blake3 tree hash
    declaration_hash TEXT,
    tree_hash        TEXT,
    lock_file        TEXT NOT NULL,
    grimoire_file    TEXT NOT NULL,
    recorded_at      TEXT NOT NULL
) STRICT;

-- Every lock, verification and mount, with the hashes computed from the folder at that
-- moment; a refusal's detail names each difference, one per line.
CREATE TABLE IF NOT EXISTS skill_verifications (
    id               INTEGER PRIMARY KEY,
    at               TEXT NOT NULL,
    skill            TEXT NOT NULL,
    action           TEXT NOT NULL CHECK (action IN ('lock', 'verify', 'mount')),
    outcome          TEXT NOT NULL CHECK (outcome IN ('locked', 'verified', 'refused', 'mounted')),
    detail           TEXT NOT NULL DEFAULT '',
    folder           TEXT,
    files_sha256     TEXT,
    git_tree         TEXT,
    declaration_hash TEXT,
    tree_hash        TEXT,
    -- where a mount put the skill
    target           TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS skill_verifications_by_skill ON skill_verifications(skill, id);

------------------------------------------------------------------------------------------
-- Break-glass: model prices, every invocation (with FTS5 over past problems), one-time
-- confirmation tokens, and the cost ledger (router/breakglass/ledger.py writes it).
------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS model_prices (
    model                          TEXT PRIMARY KEY,
    name                           TEXT NOT NULL DEFAULT '',
    -- OpenRouter quotes USD per token as decimal strings; stored as integer
    -- pico-dollars per token (1 USD = 10^12, rounded up) so cheap models do not round to zero
    prompt_picodollars_per_tok     INTEGER NOT NULL CHECK (prompt_picodollars_per_tok >= 0),
    completion_picodollars_per_tok INTEGER NOT NULL CHECK (completion_picodollars_per_tok >= 0),
    -- a flat price per request, if the model has one
    request_picodollars            INTEGER NOT NULL DEFAULT 0 CHECK (request_picodollars >= 0),
    context_length                 INTEGER,
    loaded_at                      TEXT NOT NULL,
    -- when the prices were true: the fetch, or the date a saved /api/v1/models file was taken
    -- (NULL in a file from before version 5: the age is then loaded_at's)
    priced_at                      TEXT,
    -- what a reasoning token costs where the model bills them apart (pricing.internal_reasoning)
    reasoning_picodollars_per_tok  INTEGER NOT NULL DEFAULT 0
        CHECK (reasoning_picodollars_per_tok >= 0)
) STRICT;

-- One row per break_glass call, refused or not. The problem is stored only after secrets
-- were removed from it; it is what later calls search for "earlier similar problems".
-- A call in progress holds a lease (its process, host and lease_expires_at, renewed while
-- it runs, each renewal counted in lease_beats): a call whose process is gone (on the same
-- host: its pid and process_started tell) or whose renewals stopped (lease_beats unchanged
-- for lease_seconds, on the reader's own steady clock) is resolved by the next ledger write,
-- as 'interrupted' (router/breakglass/leases.py).
CREATE TABLE IF NOT EXISTS breakglass_invocations (
    id                   INTEGER PRIMARY KEY,
    session_id           TEXT NOT NULL,
    started_at           TEXT NOT NULL,
    finished_at          TEXT,
    problem              TEXT NOT NULL,
    problem_type         TEXT,
    -- why that type: 'given by the caller' or the classifier's matched signals
    classification       TEXT NOT NULL DEFAULT '',
    complexity           TEXT,
    status               TEXT NOT NULL CHECK (status IN
        ('started', 'refused', 'needs_confirmation', 'declined', 'ok', 'failed', 'cancelled',
         'interrupted')),
    -- the refusal or failure, in words
    reason               TEXT NOT NULL DEFAULT '',
    -- 'fusion' | 'fanout' once a panel ran
    mode                 TEXT,
    panel                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(panel)),
    judge                TEXT,
    context_tokens       INTEGER,
    estimate_micro_usd   INTEGER,
    worst_case_micro_usd INTEGER,
    actual_micro_usd     INTEGER,
    -- the judge's diagnosis, so later similar problems see what was concluded
    diagnosis            TEXT NOT NULL DEFAULT '',
    pid                  INTEGER NOT NULL,
    host                 TEXT NOT NULL DEFAULT '',
    lease_expires_at     TEXT,
    -- max_tokens sent with every model call (lowered below the config's cap to fit a limit)
    output_cap_tokens    INTEGER,
    -- the owner's process start time (/proc/PID/stat, clock ticks since boot): with pid, which
    -- process it is, however the pid is recycled; NULL where the host has no /proc
    process_started      TEXT,
    -- renewals of the lease so far, and how often it promised one (every lease_seconds / 3)
    lease_beats          INTEGER NOT NULL DEFAULT 0,
    lease_seconds        REAL
) STRICT;

CREATE INDEX IF NOT EXISTS breakglass_invocations_by_session
    ON breakglass_invocations(session_id);
CREATE INDEX IF NOT EXISTS breakglass_invocations_running
    ON breakglass_invocations(status) WHERE status = 'started';

CREATE VIRTUAL TABLE IF NOT EXISTS breakglass_problems_fts USING fts5(
    problem, diagnosis,
    content='breakglass_invocations', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS breakglass_invocations_ai AFTER INSERT ON breakglass_invocations BEGIN
    INSERT INTO breakglass_problems_fts(rowid, problem, diagnosis)
    VALUES (new.id, new.problem, new.diagnosis);
END;

CREATE TRIGGER IF NOT EXISTS breakglass_invocations_ad AFTER DELETE ON breakglass_invocations BEGIN
    INSERT INTO breakglass_problems_fts(breakglass_problems_fts, rowid, problem, diagnosis)
    VALUES ('delete', old.id, old.problem, old.diagnosis);
END;

CREATE TRIGGER IF NOT EXISTS breakglass_invocations_au AFTER UPDATE OF problem, diagnosis
ON breakglass_invocations BEGIN
    INSERT INTO breakglass_problems_fts(breakglass_problems_fts, rowid, problem, diagnosis)
    VALUES ('delete', old.id, old.problem, old.diagnosis);
    INSERT INTO breakglass_problems_fts(rowid, problem, diagnosis)
    VALUES (new.id, new.problem, new.diagnosis);
END;

-- One-time confirmation tokens for clients without elicitation. Only a hash of the token is
-- stored; it is bound to the exact request (fingerprint) and to the estimate and worst case
-- a person saw.
CREATE TABLE IF NOT EXISTS breakglass_tokens (
    token_hash           TEXT PRIMARY KEY,
    issued_for           INTEGER NOT NULL REFERENCES breakglass_invocations(id),
    fingerprint          TEXT NOT NULL,
    estimate_micro_usd   INTEGER NOT NULL,
    issued_at            TEXT NOT NULL,
    expires_at           TEXT NOT NULL,
    used_at              TEXT,
    used_by              INTEGER REFERENCES breakglass_invocations(id),
    -- NULL for a token issued before version 5 (it was bound to the estimate alone)
    worst_case_micro_usd INTEGER
) STRICT;

-- Every cent: the estimate, refusals, confirmations, the reservation of the worst case taken
-- under BEGIN IMMEDIATE before any call, the settlement (the provider's usage.cost, never
-- clipped), the release of what was reserved but not spent, an overrun (a settlement above
-- the reservation: it stops the session) and the outcome. A reservation is open until its
-- invocation has a settlement row.
CREATE TABLE IF NOT EXISTS cost_ledger (
    id            INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    invocation_id INTEGER NOT NULL REFERENCES breakglass_invocations(id),
    kind          TEXT NOT NULL CHECK (kind IN ('estimate', 'refusal', 'confirmation',
                                                'reservation', 'settlement', 'release', 'overrun',
                                                'outcome')),
    micro_usd     INTEGER NOT NULL DEFAULT 0,
    detail        TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX IF NOT EXISTS cost_ledger_by_session ON cost_ledger(session_id, kind);
CREATE INDEX IF NOT EXISTS cost_ledger_by_invocation ON cost_ledger(invocation_id, kind);
-- the day caps count reservations by the UTC day they were taken
CREATE INDEX IF NOT EXISTS cost_ledger_by_kind_time ON cost_ledger(kind, at);

-- Each request sent to OpenRouter, written before it is sent: what a call whose process died
-- had sent (nothing: its reservation is released), which of those answered with a generation
-- id (its real cost can be looked up) and at what worst case the rest are counted.
CREATE TABLE IF NOT EXISTS breakglass_requests (
    id                INTEGER PRIMARY KEY,
    invocation_id     INTEGER NOT NULL REFERENCES breakglass_invocations(id),
    what              TEXT NOT NULL,
    sent_at           TEXT NOT NULL,
    worst_micro_usd   INTEGER NOT NULL,
    -- OpenRouter's id for the generation ('gen-...'), once a response named it
    generation_id     TEXT,
    -- the cost the response (or a generation lookup) reported; NULL while unknown
    cost_micro_usd    INTEGER,
    finished_at       TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS breakglass_requests_by_invocation ON breakglass_requests(invocation_id);

------------------------------------------------------------------------------------------
-- Views: what the meta-tools read, and what people inspect with the sqlite3 shell.
------------------------------------------------------------------------------------------

DROP VIEW IF EXISTS v_tool_schema;
-- mcp_inspect_schema: one tool's full definition, served from the catalog even while its
-- backend is down. title and output_schema are NULL for a tool whose backend gives none.
CREATE VIEW v_tool_schema AS
SELECT t.name, t.title, s.profile, t.server, t.backend_name, t.description, t.input_schema,
       t.output_schema, t.annotations, t.mutating, t.read_only_source, t.arg_validator,
       q.changed AS quarantined_fields, q.detected_at AS quarantined_at
FROM tools t JOIN servers s ON s.name = t.server
LEFT JOIN tool_quarantine q ON q.tool = t.name;

DROP VIEW IF EXISTS v_catalog_per_profile;
CREATE VIEW v_catalog_per_profile AS
SELECT p.name AS profile,
       count(DISTINCT s.name) AS servers,
       count(t.id) AS tools,
       coalesce(sum(t.mutating), 0) AS mutating_tools
FROM profiles p
LEFT JOIN servers s ON s.profile = p.name
LEFT JOIN tools t ON t.server = s.name
GROUP BY p.name
ORDER BY p.name;

DROP VIEW IF EXISTS v_recent_audit;
-- An unfinished call reads 'in_flight' while the router may still finish it, 'interrupted'
-- once its deadline has passed (its process died) or when it has none (a pre-version-2 row):
-- a NULL deadline_at compares as not in the future. strftime writes started_at's format.
CREATE VIEW v_recent_audit AS
SELECT id, started_at, session_id, role, meta_tool, target,
       CASE WHEN outcome <> 'started' OR finished_at IS NOT NULL THEN outcome
            WHEN deadline_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'in_flight'
            ELSE 'interrupted' END AS outcome,
       round(latency_ms, 3) AS latency_ms, error, read_only_source
FROM audit
ORDER BY id DESC
LIMIT 100;

DROP VIEW IF EXISTS v_breaker_state;
CREATE VIEW v_breaker_state AS
SELECT tool, state, consecutive_failures,
       CASE WHEN opened_at IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%SZ', opened_at, 'unixepoch') END AS opened_at,
       updated_at, last_error
FROM breaker
ORDER BY tool;

DROP VIEW IF EXISTS v_backend_breaker_state;
CREATE VIEW v_backend_breaker_state AS
SELECT server, state, consecutive_failures,
       CASE WHEN opened_at IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%SZ', opened_at, 'unixepoch') END AS opened_at,
       updated_at, last_error
FROM backend_breaker
ORDER BY server;

DROP VIEW IF EXISTS v_cost_per_session;
-- calls: invocations that reached the panel (took a reservation); open_reserved: worst cases
-- reserved by calls still running (or whose process died and no ledger write has resolved
-- them yet); overruns: calls the provider charged above their reservation (the session stops).
CREATE VIEW v_cost_per_session AS
SELECT session_id,
       min(at) AS first_at,
       count(DISTINCT invocation_id) AS invocations,
       count(DISTINCT CASE WHEN kind = 'reservation' THEN invocation_id END) AS calls,
       count(DISTINCT CASE WHEN kind = 'refusal' THEN invocation_id END) AS refusals,
       coalesce(sum(CASE WHEN kind = 'estimate' THEN micro_usd END), 0) AS estimated_micro_usd,
       coalesce(sum(CASE WHEN kind = 'reservation' AND NOT EXISTS (
                   SELECT 1 FROM cost_ledger s
                   WHERE s.invocation_id = cost_ledger.invocation_id AND s.kind = 'settlement')
                THEN micro_usd END), 0) AS open_reserved_micro_usd,
       coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0) AS spent_micro_usd,
       printf('%.4f', coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0) / 1e6)
           AS spent_usd,
       count(DISTINCT CASE WHEN kind = 'overrun' THEN invocation_id END) AS overruns
FROM cost_ledger
GROUP BY session_id
ORDER BY first_at DESC;

DROP VIEW IF EXISTS v_cost_per_day;
CREATE VIEW v_cost_per_day AS
SELECT substr(at, 1, 10) AS day,
       count(DISTINCT invocation_id) AS invocations,
       count(DISTINCT CASE WHEN kind = 'reservation' THEN invocation_id END) AS calls,
       count(DISTINCT CASE WHEN kind = 'refusal' THEN invocation_id END) AS refusals,
       coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0) AS spent_micro_usd,
       printf('%.4f', coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0) / 1e6)
           AS spent_usd
FROM cost_ledger
GROUP BY day
ORDER BY day DESC;

DROP VIEW IF EXISTS v_breakglass_recent;
-- The last 100 break_glass calls, newest first. 'started' is a call still running (its lease
-- renewed); one whose lease ran out reads 'interrupted' even before the next ledger write
-- settles it. over_worst_case: the provider reported more than the reservation (1), which
-- stops the session.
CREATE VIEW v_breakglass_recent AS
SELECT id, started_at, session_id, problem_type,
       CASE WHEN status <> 'started' THEN status
            WHEN lease_expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'started'
            ELSE 'interrupted' END AS status,
       mode,
       printf('%.4f', coalesce(estimate_micro_usd, 0) / 1e6) AS estimate_usd,
       printf('%.4f', coalesce(worst_case_micro_usd, 0) / 1e6) AS worst_case_usd,
       CASE WHEN actual_micro_usd IS NULL THEN NULL
            ELSE printf('%.4f', actual_micro_usd / 1e6) END AS actual_usd,
       CASE WHEN actual_micro_usd > worst_case_micro_usd THEN 1 ELSE 0 END AS over_worst_case,
       output_cap_tokens,
       substr(reason, 1, 80) AS reason,
       substr(problem, 1, 60) AS problem
FROM breakglass_invocations
ORDER BY id DESC
LIMIT 100;

DROP VIEW IF EXISTS v_skills;
-- One row per skill either lock named: its locked hashes and its latest outcome.
CREATE VIEW v_skills AS
SELECT h.skill, h.folder, h.folder_hash_kind, h.folder_hash, h.declaration_hash, h.tree_hash,
       v.action AS last_action, v.outcome AS last_outcome, v.at AS last_checked_at,
       v.detail AS last_detail, v.target AS last_target
FROM skill_hashes h
LEFT JOIN skill_verifications v
       ON v.id = (SELECT max(id) FROM skill_verifications WHERE skill = h.skill)
ORDER BY h.skill;

------------------------------------------------------------------------------------------
-- Search (mcp_search_tools): term statistics, trigger/boost phrase index, v_search.
-- The ranked statement itself is router/catalog/search.py SEARCH_SQL, which reads only these.
------------------------------------------------------------------------------------------

-- Term statistics (documents per indexed term), read to keep the match set of a query
-- small on large catalogs (very common terms are pruned).
CREATE VIRTUAL TABLE IF NOT EXISTS tools_fts_terms USING fts5vocab(tools_fts, 'row');

-- Every hit of every indexed term (row, column, offset): search reads a word's hits from here
-- once per catalog version and scores BM25 over them in memory (router/catalog/lexical_index.py).
CREATE VIRTUAL TABLE IF NOT EXISTS tools_fts_instances USING fts5vocab(tools_fts, 'instance');

-- Each trigger phrase and boost keyword of a tool as its own row, lower-cased, with
-- punctuation trimmed from its ends: the search statement finds the phrases present in a
-- query by looking up the query's word n-grams here (an index seek per n-gram) instead of
-- scanning tools. The router fields are stored one per line in tools.triggers/boost;
-- a phrase that cannot be read as JSON text (a control character) is left out.
CREATE TABLE IF NOT EXISTS tool_phrases (
    phrase  TEXT NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('trigger', 'boost')),
    tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
    PRIMARY KEY (phrase, kind, tool_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS tool_phrases_by_tool ON tool_phrases(tool_id);

DROP VIEW IF EXISTS v_tool_phrase_source;
-- What tool_phrases must hold for each tool: the lines of tools.triggers and tools.boost.
CREATE VIEW v_tool_phrase_source AS
SELECT tool_id, kind, phrase
FROM (
    SELECT t.id AS tool_id, k.kind,
           trim(lower(j.value), ' !"#$%&''()*+,-./:;<=>?@[\]^_`{|}~') AS phrase
    FROM tools t
    JOIN (SELECT 'trigger' AS kind UNION ALL SELECT 'boost') k
    JOIN json_each(
        CASE WHEN json_valid(
                '["' || replace(replace(replace(
                    CASE k.kind WHEN 'trigger' THEN t.triggers ELSE t.boost END,
                    '\', '\\'), '"', '\"'), char(10), '","') || '"]')
             THEN '["' || replace(replace(replace(
                    CASE k.kind WHEN 'trigger' THEN t.triggers ELSE t.boost END,
                    '\', '\\'), '"', '\"'), char(10), '","') || '"]'
             ELSE '[]' END) j
)
WHERE phrase <> '';

CREATE TRIGGER IF NOT EXISTS tool_phrases_ai AFTER INSERT ON tools BEGIN
    INSERT OR IGNORE INTO tool_phrases(phrase, kind, tool_id)
    SELECT phrase, kind, tool_id FROM v_tool_phrase_source WHERE tool_id = new.id;
END;

CREATE TRIGGER IF NOT EXISTS tool_phrases_au AFTER UPDATE OF triggers, boost ON tools BEGIN
    DELETE FROM tool_phrases WHERE tool_id = old.id;
    INSERT OR IGNORE INTO tool_phrases(phrase, kind, tool_id)
    SELECT phrase, kind, tool_id FROM v_tool_phrase_source WHERE tool_id = new.id;
END;

CREATE TRIGGER IF NOT EXISTS tool_phrases_ad AFTER DELETE ON tools BEGIN
    DELETE FROM tool_phrases WHERE tool_id = old.id;
END;

------------------------------------------------------------------------------------------
-- Semantic ranking: each tool's text embedded by a local model, in this same file.
------------------------------------------------------------------------------------------

-- One vector per tool definition and model (router/catalog/embeddings.py): the text embedded
-- is "name words: description" (router/catalog/tool_text.py embedding_text), a function of the
-- definition, so tools with one definition share a row and a load that leaves a definition
-- unchanged recomputes nothing; `model` is the model's identity (a hash of its files), so a
-- new model re-embeds. The vector is `dim` int8 components times `scale` (L2 norm about 1;
-- a text with no token the model knows is all zeros, scale 0).
CREATE TABLE IF NOT EXISTS tool_embeddings (
    definition_hash TEXT NOT NULL,
    model           TEXT NOT NULL,
    dim             INTEGER NOT NULL CHECK (dim > 0),
    scale           REAL NOT NULL CHECK (scale >= 0),
    vector          BLOB NOT NULL CHECK (length(vector) = dim),
    created_at      TEXT NOT NULL,
    PRIMARY KEY (definition_hash, model)
) STRICT, WITHOUT ROWID;

-- One vector per example request (tools.examples, one per line; and servers.not_for) and
-- model: keyed by the b3: hash of the example's text (router/catalog/example_vectors.py), so an example is embedded
-- once, whatever tools share it, and again only when its text or the model changes. A tool's
-- semantic score is its best cosine over its own vector and its examples'.
CREATE TABLE IF NOT EXISTS example_embeddings (
    example_hash TEXT NOT NULL,
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    scale        REAL NOT NULL CHECK (scale >= 0),
    vector       BLOB NOT NULL CHECK (length(vector) = dim),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (example_hash, model)
) STRICT, WITHOUT ROWID;

-- The grouping of a large catalog's vectors for search (router/catalog/vector_groups.py):
-- computed by a load that changes the vectors of a catalog above the size search scores
-- whole, so a search process reads it instead of grouping 100,000 vectors itself (k-means,
-- seconds before its first answer). The centroids of the current model's groups (float32,
-- `groups` × `dim`), and each of its vectors' group.
CREATE TABLE IF NOT EXISTS vector_centroids (
    model     TEXT PRIMARY KEY,
    groups    INTEGER NOT NULL CHECK (groups > 0),
    dim       INTEGER NOT NULL CHECK (dim > 0),
    centroids BLOB NOT NULL CHECK (length(centroids) = 4 * groups * dim)
) STRICT;

CREATE TABLE IF NOT EXISTS vector_groups (
    definition_hash TEXT NOT NULL,
    model           TEXT NOT NULL,
    group_no        INTEGER NOT NULL CHECK (group_no >= 0),
    PRIMARY KEY (definition_hash, model)
) STRICT, WITHOUT ROWID;

DROP VIEW IF EXISTS v_tool_embeddings;
-- Which tools are embedded, by which model and when: one row per tool and model, model NULL
-- for a tool without a vector (search then ranks it by its words alone).
CREATE VIEW v_tool_embeddings AS
SELECT t.name AS tool, t.server, e.model, e.dim, e.created_at
FROM tools t
LEFT JOIN tool_embeddings e ON e.definition_hash = t.definition_hash;

DROP VIEW IF EXISTS v_search;
-- mcp_search_tools: what a hit shows (never the schema) and what filters it: the role's
-- right to call mutating tools; what demotes it: the breakers of the tool and of its backend
-- server, and a quarantine.
-- The profile is a correlated lookup, not a join: the search statement reaches this view by
-- tool id, and a join let the planner scan every server per hit.
-- breaker_state is 'open' when either breaker is; breaker_opened_at is then the later
-- opening of the open ones (both share one window, so the later one decides).
-- quarantined_fields: what its server now lists differently (router/catalog/quarantine.py).
CREATE VIEW v_search AS
SELECT t.id, t.name, (SELECT s.profile FROM servers s WHERE s.name = t.server) AS profile,
       t.server, t.summary, t.mutating,
       CASE WHEN b.state = 'open' OR bb.state = 'open' THEN 'open'
            ELSE coalesce(b.state, bb.state) END AS breaker_state,
       nullif(max(CASE WHEN b.state = 'open' THEN b.opened_at ELSE -1 END,
                  CASE WHEN bb.state = 'open' THEN bb.opened_at ELSE -1 END), -1) AS breaker_opened_at,
       q.changed AS quarantined_fields
FROM tools t
LEFT JOIN breaker b ON b.tool = t.name
LEFT JOIN backend_breaker bb ON bb.server = t.server
LEFT JOIN tool_quarantine q ON q.tool = t.name;

------------------------------------------------------------------------------------------
-- Facade (mcp_call_tool): where a call goes and what guards it.
------------------------------------------------------------------------------------------

DROP VIEW IF EXISTS v_callable;
-- mcp_call_tool: the backend server and name a catalog tool is forwarded to, the schema its
-- args are validated against (and under which draft), whether the role rules treat it as
-- mutating and who decided, whether it is quarantined, and its breaker.
-- A half_open breaker's opened_at is when its single trial call was let through.
CREATE VIEW v_callable AS
SELECT t.name, t.server, t.backend_name, t.input_schema, t.mutating,
       coalesce(b.state, 'closed') AS breaker_state, b.opened_at AS breaker_opened_at,
       t.read_only_source, t.arg_validator, q.changed AS quarantined_fields
FROM tools t
LEFT JOIN breaker b ON b.tool = t.name
LEFT JOIN tool_quarantine q ON q.tool = t.name;

-- A counter bumped by every change to the catalog's tools, from any process: search keys its
-- cached term statistics on it, so the audit and breaker rows every call writes do not throw
-- that cache away (PRAGMA data_version and total_changes move with any write).
CREATE TABLE IF NOT EXISTS catalog_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
) STRICT;

INSERT OR IGNORE INTO catalog_version(id, version) VALUES (1, 0);

CREATE TRIGGER IF NOT EXISTS catalog_version_ai AFTER INSERT ON tools BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_au AFTER UPDATE ON tools BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_ad AFTER DELETE ON tools BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

-- A quarantined tool is not callable: the call targets cached on catalog_version must see it.
CREATE TRIGGER IF NOT EXISTS catalog_version_quarantine_ai AFTER INSERT ON tool_quarantine BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_quarantine_ad AFTER DELETE ON tool_quarantine BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

-- Search caches the vectors per catalog version: vectors written or dropped without a tool
-- changing (a new model, a first load after an upgrade) must reach it too.
-- A server's not-for requests change what search tells the gate of its tools.
CREATE TRIGGER IF NOT EXISTS catalog_version_servers_au AFTER UPDATE OF not_for ON servers BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_embeddings_ai AFTER INSERT ON tool_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_embeddings_ad AFTER DELETE ON tool_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_example_embeddings_ai AFTER INSERT ON example_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_example_embeddings_ad AFTER DELETE ON example_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

------------------------------------------------------------------------------------------
-- Operation: what the dashboard (router/dashboard/) and /metrics (router/metrics/) read, and
-- what people ask of a router they run for a team. Version 13.
------------------------------------------------------------------------------------------

-- Every time a breaker opened (closed or half-open → open), written by the triggers below
-- from the breaker rows themselves, so no code path can open one unrecorded.
-- kind: 'tool' (a backend tool's breaker) or 'server' (its server's); server: the tool's
-- server in the catalog at that moment (NULL for a tool no longer there).
CREATE TABLE IF NOT EXISTS breaker_openings (
    id                   INTEGER PRIMARY KEY,
    opened_at            TEXT NOT NULL,
    kind                 TEXT NOT NULL CHECK (kind IN ('tool', 'server')),
    name                 TEXT NOT NULL,
    server               TEXT,
    consecutive_failures INTEGER NOT NULL,
    last_error           TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS breaker_openings_by_server ON breaker_openings(server, opened_at);

CREATE TRIGGER IF NOT EXISTS breaker_opened_ai AFTER INSERT ON breaker
WHEN new.state = 'open' BEGIN
    INSERT INTO breaker_openings(opened_at, kind, name, server, consecutive_failures, last_error)
    VALUES (new.updated_at, 'tool', new.tool, (SELECT server FROM tools WHERE name = new.tool),
            new.consecutive_failures, new.last_error);
END;

CREATE TRIGGER IF NOT EXISTS breaker_opened_au AFTER UPDATE OF state ON breaker
WHEN new.state = 'open' AND old.state <> 'open' BEGIN
    INSERT INTO breaker_openings(opened_at, kind, name, server, consecutive_failures, last_error)
    VALUES (new.updated_at, 'tool', new.tool, (SELECT server FROM tools WHERE name = new.tool),
            new.consecutive_failures, new.last_error);
END;

CREATE TRIGGER IF NOT EXISTS backend_breaker_opened_ai AFTER INSERT ON backend_breaker
WHEN new.state = 'open' BEGIN
    INSERT INTO breaker_openings(opened_at, kind, name, server, consecutive_failures, last_error)
    VALUES (new.updated_at, 'server', new.server, new.server, new.consecutive_failures, new.last_error);
END;

CREATE TRIGGER IF NOT EXISTS backend_breaker_opened_au AFTER UPDATE OF state ON backend_breaker
WHEN new.state = 'open' AND old.state <> 'open' BEGIN
    INSERT INTO breaker_openings(opened_at, kind, name, server, consecutive_failures, last_error)
    VALUES (new.updated_at, 'server', new.server, new.server, new.consecutive_failures, new.last_error);
END;

-- The break-glass caps a call was checked against, per UTC day (the last call of the day's;
-- router/breakglass/caps.py record): the caps live in a config file, and the spend views
-- need them beside the money to say how much of a day's cap is gone.
CREATE TABLE IF NOT EXISTS breakglass_caps (
    day                     TEXT PRIMARY KEY,
    day_max_micro_usd       INTEGER NOT NULL,
    day_max_invocations     INTEGER NOT NULL,
    session_max_micro_usd   INTEGER NOT NULL,
    session_max_invocations INTEGER NOT NULL,
    recorded_at             TEXT NOT NULL
) STRICT;

-- What each tool definition costs in a prompt: the cl100k tokens of the tool as its server's
-- tools/list gives it (compact JSON), counted by a catalog load (router/catalog/token_counts.py)
-- for each definition not counted yet. What attaching the whole catalog would cost is their sum.
CREATE TABLE IF NOT EXISTS tool_tokens (
    definition_hash TEXT PRIMARY KEY,
    tokens          INTEGER NOT NULL CHECK (tokens >= 0)
) STRICT, WITHOUT ROWID;

-- The same for what the router itself lists: 'meta_tools', its three meta-tools' tools/list.
CREATE TABLE IF NOT EXISTS surface_tokens (
    surface    TEXT PRIMARY KEY,
    tokens     INTEGER NOT NULL CHECK (tokens >= 0),
    counted_at TEXT NOT NULL
) STRICT;

DROP VIEW IF EXISTS v_audit_outcomes;
-- Every audit row with its outcome as v_recent_audit reads it (a 'started' row is 'in_flight'
-- until its deadline, 'interrupted' after) and the server of its target (NULL when the target
-- is not a catalog tool): the rows the views below count.
CREATE VIEW v_audit_outcomes AS
SELECT a.id, a.started_at, a.finished_at, a.session_id, a.role, a.meta_tool, a.target,
       t.server,
       CASE WHEN a.outcome <> 'started' OR a.finished_at IS NOT NULL THEN a.outcome
            WHEN a.deadline_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'in_flight'
            ELSE 'interrupted' END AS outcome,
       a.latency_ms, a.error, a.result_tokens, a.page_tools
FROM audit a
LEFT JOIN tools t ON t.name = a.target;

DROP VIEW IF EXISTS v_calls_per_hour;
-- Meta-tool calls per UTC hour of the last 7 days, by meta-tool and outcome. (The views over
-- recent hours and days read their window through audit_by_time: a year of audit costs them
-- nothing; bench/operation.py times them on a long history.)
CREATE VIEW v_calls_per_hour AS
SELECT substr(started_at, 1, 13) || ':00Z' AS hour, meta_tool, outcome, count(*) AS calls
FROM v_audit_outcomes
WHERE started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 days')
GROUP BY hour, meta_tool, outcome
ORDER BY hour DESC, meta_tool, outcome;

DROP VIEW IF EXISTS v_call_latency;
-- mcp_call_tool latency per backend server over the last 7 days, over the calls its backend
-- answered or failed (refusals before forwarding would only dilute it): nearest-rank
-- percentiles, how the backend does now rather than over its whole history.
CREATE VIEW v_call_latency AS
WITH ranked AS (
    SELECT t.server, a.latency_ms,
           row_number() OVER (PARTITION BY t.server ORDER BY a.latency_ms) AS n,
           count(*) OVER (PARTITION BY t.server) AS total
    FROM audit a
    JOIN tools t ON t.name = a.target
    WHERE a.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 days')
      AND a.meta_tool = 'mcp_call_tool' AND a.latency_ms IS NOT NULL
      AND a.outcome IN ('ok', 'tool_error', 'backend_failed', 'timeout', 'not_completed')
)
SELECT server, max(total) AS calls,
       round(min(CASE WHEN n >= 0.50 * total THEN latency_ms END), 1) AS p50_ms,
       round(min(CASE WHEN n >= 0.95 * total THEN latency_ms END), 1) AS p95_ms,
       round(min(CASE WHEN n >= 0.99 * total THEN latency_ms END), 1) AS p99_ms,
       round(max(latency_ms), 1) AS max_ms
FROM ranked
GROUP BY server
ORDER BY server;

DROP VIEW IF EXISTS v_slow_calls;
-- Finished mcp_call_tool calls, slowest first: which tool, on which server, how it ended.
CREATE VIEW v_slow_calls AS
SELECT id, started_at, session_id, role, target AS tool, server, outcome,
       round(latency_ms, 1) AS latency_ms, error
FROM v_audit_outcomes
WHERE meta_tool = 'mcp_call_tool' AND latency_ms IS NOT NULL
ORDER BY latency_ms DESC;

DROP VIEW IF EXISTS v_backend_failures;
-- Which backends fail and since when, per server that calls reached: calls and failures
-- (the backend failed, hung, crashed, answered isError, or its breaker refused the call),
-- the last success and failure, failing_since (the first failure after the last success:
-- NULL while it works), its last error, its breakers now and how often they opened.
CREATE VIEW v_backend_failures AS
WITH calls AS MATERIALIZED (
    SELECT server, started_at, error,
           outcome IN ('tool_error', 'backend_failed', 'timeout', 'not_completed', 'interrupted',
                       'missing_program', 'breaker_open') AS failed,
           outcome = 'ok' AS succeeded
    FROM v_audit_outcomes
    WHERE meta_tool = 'mcp_call_tool' AND server IS NOT NULL
),
per_server AS (
    SELECT server, count(*) AS calls, sum(failed) AS failures,
           max(CASE WHEN succeeded THEN started_at END) AS last_ok_at,
           max(CASE WHEN failed THEN started_at END) AS last_failure_at
    FROM calls
    GROUP BY server
),
failing AS (
    SELECT c.server, min(c.started_at) AS failing_since
    FROM calls c JOIN per_server p ON p.server = c.server
    WHERE c.failed AND c.started_at > coalesce(p.last_ok_at, '')
    GROUP BY c.server
)
SELECT p.server, p.calls, p.failures, p.last_ok_at, p.last_failure_at, f.failing_since,
       (SELECT c.error FROM calls c
        WHERE c.server = p.server AND c.failed AND c.started_at = p.last_failure_at
        LIMIT 1) AS last_error,
       coalesce(bb.state, 'closed') AS server_breaker,
       (SELECT count(*) FROM breaker b JOIN tools t ON t.name = b.tool
        WHERE t.server = p.server AND b.state <> 'closed') AS tool_breakers_not_closed,
       (SELECT count(*) FROM breaker_openings o WHERE o.server = p.server) AS breaker_openings
FROM per_server p
LEFT JOIN failing f ON f.server = p.server
LEFT JOIN backend_breaker bb ON bb.server = p.server
ORDER BY f.failing_since IS NULL, f.failing_since, p.failures DESC, p.server;

DROP VIEW IF EXISTS v_breaker_openings;
CREATE VIEW v_breaker_openings AS
SELECT id, opened_at, kind, name, server, consecutive_failures, last_error
FROM breaker_openings
ORDER BY id DESC;

DROP VIEW IF EXISTS v_spend_per_day;
-- Break-glass money per UTC day against that day's caps (the ones recorded that day, else the
-- last recorded before it; NULL before any call recorded them). committed is what the day cap
-- counts: each reservation's settlement, or its whole worst case while it is open.
CREATE VIEW v_spend_per_day AS
WITH days AS (
    SELECT substr(at, 1, 10) AS day,
           count(DISTINCT invocation_id) AS invocations,
           count(DISTINCT CASE WHEN kind = 'reservation' THEN invocation_id END) AS calls,
           count(DISTINCT CASE WHEN kind = 'refusal' THEN invocation_id END) AS refusals,
           coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0) AS spent_micro_usd,
           coalesce(sum(CASE WHEN kind = 'reservation' THEN coalesce(
               (SELECT s.micro_usd FROM cost_ledger s
                WHERE s.invocation_id = cost_ledger.invocation_id AND s.kind = 'settlement'),
               micro_usd) END), 0) AS committed_micro_usd
    FROM cost_ledger
    GROUP BY day
)
SELECT d.day, d.invocations, d.calls, d.refusals, d.spent_micro_usd, d.committed_micro_usd,
       c.day_max_micro_usd, c.day_max_invocations,
       c.day_max_micro_usd - d.committed_micro_usd AS left_micro_usd,
       printf('%.4f', d.spent_micro_usd / 1e6) AS spent_usd,
       CASE WHEN c.day_max_micro_usd IS NULL THEN NULL
            ELSE printf('%.2f', c.day_max_micro_usd / 1e6) END AS day_cap_usd
FROM days d
LEFT JOIN breakglass_caps c ON c.day = (SELECT max(day) FROM breakglass_caps WHERE day <= d.day)
ORDER BY d.day DESC;

DROP VIEW IF EXISTS v_spend_today;
-- Today (UTC) against the caps, one row even on a day without a call.
CREATE VIEW v_spend_today AS
WITH today AS (SELECT strftime('%Y-%m-%d', 'now') AS day)
SELECT t.day, coalesce(d.calls, 0) AS calls, coalesce(d.refusals, 0) AS refusals,
       coalesce(d.spent_micro_usd, 0) AS spent_micro_usd,
       coalesce(d.committed_micro_usd, 0) AS committed_micro_usd,
       c.day_max_micro_usd, c.day_max_invocations,
       c.day_max_micro_usd - coalesce(d.committed_micro_usd, 0) AS left_micro_usd,
       c.day_max_invocations - coalesce(d.calls, 0) AS calls_left,
       c.session_max_micro_usd, c.session_max_invocations,
       printf('%.4f', coalesce(d.spent_micro_usd, 0) / 1e6) AS spent_usd,
       CASE WHEN c.day_max_micro_usd IS NULL THEN NULL
            ELSE printf('%.2f', c.day_max_micro_usd / 1e6) END AS day_cap_usd
FROM today t
LEFT JOIN v_spend_per_day d ON d.day = t.day
LEFT JOIN breakglass_caps c ON c.day = (SELECT max(day) FROM breakglass_caps WHERE day <= t.day);

DROP VIEW IF EXISTS v_searches_nothing_callable;
-- Searches whose page held no tool the caller could call (nothing matched, or only tools that
-- cannot be called here). The query itself is never stored; equal queries share args_hash.
CREATE VIEW v_searches_nothing_callable AS
SELECT id, started_at, session_id, role, args_hash, result_tokens
FROM audit
WHERE meta_tool = 'mcp_search_tools' AND page_tools = 0
ORDER BY id DESC;

DROP VIEW IF EXISTS v_searches_per_hour;
-- Searches per UTC hour of the last 7 days.
CREATE VIEW v_searches_per_hour AS
SELECT substr(started_at, 1, 13) || ':00Z' AS hour,
       count(*) AS searches,
       coalesce(sum(page_tools = 0), 0) AS nothing_callable,
       coalesce(sum(outcome <> 'ok'), 0) AS refused,
       coalesce(sum(result_tokens), 0) AS page_tokens
FROM audit
WHERE started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 days') AND meta_tool = 'mcp_search_tools'
GROUP BY hour
ORDER BY hour DESC;

DROP VIEW IF EXISTS v_catalog_tokens;
-- What attaching every tool of the catalog directly would put in each prompt, against the
-- router's own tools/list. tools_counted < tools: a catalog not loaded since version 13.
CREATE VIEW v_catalog_tokens AS
SELECT (SELECT count(*) FROM tools) AS tools,
       (SELECT count(*) FROM tools t JOIN tool_tokens k ON k.definition_hash = t.definition_hash)
           AS tools_counted,
       (SELECT coalesce(sum(k.tokens), 0) FROM tools t
        JOIN tool_tokens k ON k.definition_hash = t.definition_hash) AS catalog_tokens,
       (SELECT tokens FROM surface_tokens WHERE surface = 'meta_tools') AS meta_tools_tokens;

DROP VIEW IF EXISTS v_tokens_per_session;
-- Per session: what the router put in the model's context (its tools/list, every search page
-- and inspected schema) against what attaching the whole current catalog would have (its
-- tools' definitions). Call results are left out of both: the same either way.
CREATE VIEW v_tokens_per_session AS
SELECT s.session_id, s.first_at, s.last_at, s.searches, s.inspects, s.calls,
       coalesce(c.meta_tools_tokens, 0) + s.answer_tokens AS tokens_served,
       c.catalog_tokens AS full_catalog_tokens,
       c.catalog_tokens - coalesce(c.meta_tools_tokens, 0) - s.answer_tokens AS tokens_saved
FROM (
    SELECT session_id, min(started_at) AS first_at, max(started_at) AS last_at,
           coalesce(sum(meta_tool = 'mcp_search_tools'), 0) AS searches,
           coalesce(sum(meta_tool = 'mcp_inspect_schema'), 0) AS inspects,
           coalesce(sum(meta_tool = 'mcp_call_tool'), 0) AS calls,
           coalesce(sum(result_tokens), 0) AS answer_tokens
    FROM audit
    WHERE meta_tool IN ('mcp_search_tools', 'mcp_inspect_schema', 'mcp_call_tool')
    GROUP BY session_id
) s
CROSS JOIN v_catalog_tokens c
ORDER BY s.first_at DESC;

DROP VIEW IF EXISTS v_tokens_saved;
-- All sessions together: the headline figure, from this router's own use.
CREATE VIEW v_tokens_saved AS
SELECT count(*) AS sessions,
       coalesce(sum(tokens_served), 0) AS tokens_served,
       coalesce(sum(full_catalog_tokens), 0) AS full_catalog_tokens,
       coalesce(sum(tokens_saved), 0) AS tokens_saved,
       CASE WHEN sum(full_catalog_tokens) > 0
            THEN round(100.0 * sum(tokens_saved) / sum(full_catalog_tokens), 1) END AS saved_percent
FROM v_tokens_per_session;
