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
    origin_file TEXT NOT NULL DEFAULT ''
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
    UNIQUE (server, backend_name)
) STRICT;

CREATE INDEX IF NOT EXISTS tools_by_server ON tools(server);

-- External-content FTS5 index over tools: the text lives once, in tools; the triggers
-- below keep the index in step with every insert, update and delete.
-- porter stemming so 'installing' finds 'install'; unicode61 folds case and diacritics.
CREATE VIRTUAL TABLE IF NOT EXISTS tools_fts USING fts5(
    name_words, description, arg_text, triggers, boost,
    content='tools', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS tools_ai AFTER INSERT ON tools BEGIN
    INSERT INTO tools_fts(rowid, name_words, description, arg_text, triggers, boost)
    VALUES (new.id, new.name_words, new.description, new.arg_text, new.triggers, new.boost);
END;

CREATE TRIGGER IF NOT EXISTS tools_ad AFTER DELETE ON tools BEGIN
    INSERT INTO tools_fts(tools_fts, rowid, name_words, description, arg_text, triggers, boost)
    VALUES ('delete', old.id, old.name_words, old.description, old.arg_text, old.triggers, old.boost);
END;

CREATE TRIGGER IF NOT EXISTS tools_au AFTER UPDATE ON tools BEGIN
    INSERT INTO tools_fts(tools_fts, rowid, name_words, description, arg_text, triggers, boost)
    VALUES ('delete', old.id, old.name_words, old.description, old.arg_text, old.triggers, old.boost);
    INSERT INTO tools_fts(rowid, name_words, description, arg_text, triggers, boost)
    VALUES (new.id, new.name_words, new.description, new.arg_text, new.triggers, new.boost);
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
    read_only_source TEXT
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
-- it runs): a call whose process is gone or whose lease expired is resolved by the next
-- ledger write, as 'interrupted'.
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
    output_cap_tokens    INTEGER
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
CREATE TRIGGER IF NOT EXISTS catalog_version_embeddings_ai AFTER INSERT ON tool_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER IF NOT EXISTS catalog_version_embeddings_ad AFTER DELETE ON tool_embeddings BEGIN
    UPDATE catalog_version SET version = version + 1 WHERE id = 1;
END;
