/**
 * DDL for the canonical agent DB (a public format, docs/internals/design.md "Data") and for the
 * workspace DB (ours). Migrations are keyed by PRAGMA user_version: each entry
 * of a MIGRATIONS list moves the file from version i to i+1.
 */

/** Canonical memory DB, version 1. Names are fixed by docs/internals/design.md. */
export const CANONICAL_MIGRATIONS: string[] = [
  `
  CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    agent_id TEXT,
    user_id TEXT,
    tenant_id TEXT,
    started_at INTEGER,
    ended_at INTEGER,
    summary TEXT,
    is_archived INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    agent_id TEXT,
    user_id TEXT,
    session_id TEXT,
    role TEXT,
    kind TEXT,
    tier TEXT,
    content TEXT NOT NULL,
    summary TEXT,
    salience REAL,
    created_at INTEGER,
    last_used_at INTEGER,
    use_count INTEGER,
    turn INTEGER,
    source TEXT,
    metadata TEXT
  );
  CREATE TABLE IF NOT EXISTS embeddings (
    owner_type TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (owner_type, owner_id, model)
  );
  CREATE TABLE IF NOT EXISTS recall_events (
    id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    agent_id TEXT,
    user_id TEXT,
    session_id TEXT,
    turn INTEGER,
    query TEXT,
    cue TEXT,
    preset TEXT,
    config TEXT,
    results TEXT
  );
  CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at);
  CREATE INDEX IF NOT EXISTS memories_agent_created ON memories (agent_id, created_at);
  CREATE INDEX IF NOT EXISTS memories_user_created ON memories (user_id, created_at);
  CREATE INDEX IF NOT EXISTS memories_session_turn ON memories (session_id, turn);
  CREATE INDEX IF NOT EXISTS memories_kind ON memories (kind, created_at);
  CREATE INDEX IF NOT EXISTS memories_tier ON memories (tier, created_at);
  CREATE INDEX IF NOT EXISTS sessions_agent_user ON sessions (agent_id, user_id, started_at);
  CREATE INDEX IF NOT EXISTS sessions_started ON sessions (started_at);
  CREATE INDEX IF NOT EXISTS recall_events_at ON recall_events (at);
  CREATE INDEX IF NOT EXISTS recall_events_session ON recall_events (session_id, at);
  `,
]

/**
 * FTS5 over content + summary, as an external-content table on `memories`.
 * Agents that ship this table get lexical recall without a workspace index.
 */
export const CANONICAL_FTS = `
  CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, summary, content='memories', content_rowid='rowid', tokenize='porter unicode61'
  );
`

/** Workspace DB (everything the workbench owns). */
export const WORKSPACE_MIGRATIONS: string[] = [
  `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
  CREATE TABLE IF NOT EXISTS eval_cases (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    query TEXT NOT NULL DEFAULT '',
    cue TEXT,
    scope TEXT,
    now INTEGER,
    relevant TEXT NOT NULL DEFAULT '[]',
    expect_empty INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '[]',
    split TEXT NOT NULL DEFAULT 'train'
  );
  CREATE TABLE IF NOT EXISTS eval_runs (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    name TEXT,
    config TEXT NOT NULL,
    embedder TEXT,
    k INTEGER NOT NULL,
    split TEXT NOT NULL,
    metrics TEXT NOT NULL,
    per_case TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS profiles (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS query_cache (
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (model, text)
  );
  CREATE TABLE IF NOT EXISTS notes (
    owner_type TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    text TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (owner_type, owner_id)
  );
  -- Lexical index when the agent DB has none. Contentless: rowid = the agent row's _rid;
  -- snippets are cut in JS from the agent's own text.
  CREATE VIRTUAL TABLE IF NOT EXISTS ws_fts USING fts5(
    content, summary, content='', contentless_delete=1, tokenize='porter unicode61'
  );
  CREATE TABLE IF NOT EXISTS ws_fts_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    source TEXT NOT NULL,
    max_rid INTEGER NOT NULL,
    row_count INTEGER NOT NULL
  );
  `,
  // v2 (eval): run metadata (preset, budget, counts, timings, source) and a history index.
  `
  ALTER TABLE eval_runs ADD COLUMN meta TEXT;
  CREATE INDEX IF NOT EXISTS eval_runs_created ON eval_runs (created_at);
  CREATE INDEX IF NOT EXISTS eval_cases_split ON eval_cases (split);
  `,
  // v3 (vectors): embeddings backfilled by recallscope for memories the agent left without a
  // vector of a model (the agent DB stays read-only). The canonical embeddings shape plus
  // provenance; VectorIndex merges them with the agent's, a valid agent vector winning.
  `
  CREATE TABLE IF NOT EXISTS ws_embeddings (
    owner_type TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    embedder TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner_type, owner_id, model)
  );
  `,
  // v4 (tune): saved tune reports, listed beside eval runs. The report is the JSON `tune --json` prints;
  // summary holds what the list shows.
  `
  CREATE TABLE IF NOT EXISTS tune_reports (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    name TEXT,
    source TEXT NOT NULL,
    metric TEXT NOT NULL,
    summary TEXT NOT NULL,
    report TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS tune_reports_created ON tune_reports (created_at);
  `,
  // v5 (live OTLP): recalls received on POST /v1/traces, kept so they survive a restart (the agent's
  // store is never written). recall = the LoggedRecall JSON; decided = 1 once a later LLM span of
  // the trace gave its decision.
  `
  CREATE TABLE IF NOT EXISTS live_recalls (
    key TEXT PRIMARY KEY,
    trace_id TEXT,
    at INTEGER NOT NULL,
    end_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    decided INTEGER NOT NULL DEFAULT 0,
    recall TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS live_recalls_trace ON live_recalls (trace_id, decided);
  CREATE INDEX IF NOT EXISTS live_recalls_at ON live_recalls (at);
  `,
  // v6 (named configs): recall configs saved under a name on the Recall screen (configs.* channels).
  // config = the whole RecallConfig JSON; preset = what it was built over.
  `
  CREATE TABLE IF NOT EXISTS recall_configs (
    name TEXT PRIMARY KEY,
    preset TEXT,
    config TEXT NOT NULL,
    note TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
]
