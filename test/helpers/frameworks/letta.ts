/**
 * Letta fixtures.
 *
 * Server (Python, no npm client for its SQLite file): the tables of letta-ai/letta
 * @ 56ba9c25552605eec89de8ed3dc6394b625c1993 letta/orm (base.py common columns, agent.py,
 * block.py, block_history.py, blocks_agents.py, message.py, archive.py, archives_agents.py,
 * passage.py, passage_tag.py) as SQLAlchemy creates them on SQLite, with naive-UTC DateTime
 * text and CommonVector = sqlite_vec.serialize_float32 (a little-endian f32 BLOB).
 *
 * Letta Code: a memory folder as letta-ai/letta-code @ 1f4d3e3e… src/agent/memory-filesystem.ts
 * lays it out (`~/.letta/agents/<id>/memory/`, `system/` pinned into the prompt, other folders
 * such as `reference/`), markdown files with the frontmatter memory-git-hooks.ts validates
 * (description, read_only, limit), committed with git.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'

/** SQLAlchemy's SQLite DateTime text of a UTC instant. */
export const sqlaUtc = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace('Z', '')
    .replace(/\.(\d{3})$/, '.$1000')

const COMMON = `created_at DATETIME DEFAULT (CURRENT_TIMESTAMP), updated_at DATETIME DEFAULT (CURRENT_TIMESTAMP), is_deleted BOOLEAN DEFAULT (FALSE),
  _created_by_id VARCHAR, _last_updated_by_id VARCHAR`

export interface LettaServerSpec {
  agents: { id: string; name: string }[]
  blocks: {
    id: string
    agent: string
    label: string
    value: string
    createdAt: number
    history?: { value: string; at: number; actor: string }[]
    isTemplate?: boolean
  }[]
  passages: { id: string; agent: string; text: string; createdAt: number; tags?: string[]; embedding?: number[] | null; model?: string; deleted?: boolean }[]
  messages: {
    id: string
    agent: string
    role: string
    text?: string | null
    parts?: string[]
    createdAt: number
    seq: number
    conversation?: string | null
    /** the tool_calls column as stored (JSON text); default '[]' */
    toolCalls?: string
    toolCallId?: string | null
    /** the tool_returns column as stored (JSON text) */
    toolReturns?: string | null
    name?: string | null
  }[]
}

export function buildLettaServer(dir: string, spec: LettaServerSpec): string {
  const file = path.join(dir, 'sqlite.db')
  const db = new Database(file)
  db.exec(`
    CREATE TABLE organizations (id VARCHAR NOT NULL PRIMARY KEY, name VARCHAR NOT NULL, privileged_tools BOOLEAN NOT NULL, ${COMMON});
    CREATE TABLE agents (id VARCHAR NOT NULL PRIMARY KEY, agent_type VARCHAR, name VARCHAR, description VARCHAR, system VARCHAR,
      message_ids JSON, response_format JSON, metadata_ JSON, llm_config JSON, embedding_config JSON, organization_id VARCHAR REFERENCES organizations (id),
      project_id VARCHAR, template_id VARCHAR, base_template_id VARCHAR, ${COMMON});
    CREATE TABLE block_history (id VARCHAR NOT NULL PRIMARY KEY, description TEXT, label VARCHAR NOT NULL, value TEXT NOT NULL, "limit" BIGINT NOT NULL,
      metadata_ JSON, actor_type VARCHAR, actor_id VARCHAR, block_id VARCHAR NOT NULL REFERENCES block (id) ON DELETE CASCADE,
      sequence_number INTEGER NOT NULL, organization_id VARCHAR REFERENCES organizations (id), ${COMMON});
    CREATE UNIQUE INDEX ix_block_history_block_id_sequence ON block_history (block_id, sequence_number);
    CREATE TABLE block (id VARCHAR NOT NULL PRIMARY KEY, template_name VARCHAR, description VARCHAR, label VARCHAR NOT NULL, is_template BOOLEAN NOT NULL,
      preserve_on_migration BOOLEAN, value VARCHAR NOT NULL, "limit" INTEGER NOT NULL, metadata_ JSON, read_only BOOLEAN NOT NULL, hidden BOOLEAN,
      current_history_entry_id VARCHAR REFERENCES block_history (id), version INTEGER DEFAULT '1' NOT NULL,
      organization_id VARCHAR REFERENCES organizations (id), project_id VARCHAR, entity_id VARCHAR, template_id VARCHAR, base_template_id VARCHAR,
      deployment_id VARCHAR, ${COMMON});
    CREATE INDEX created_at_label_idx ON block (created_at, label);
    CREATE TABLE blocks_agents (agent_id VARCHAR NOT NULL REFERENCES agents (id) ON DELETE CASCADE, block_id VARCHAR NOT NULL, block_label VARCHAR NOT NULL,
      PRIMARY KEY (agent_id, block_id, block_label), CONSTRAINT unique_label_per_agent UNIQUE (agent_id, block_label));
    CREATE TABLE messages (id VARCHAR NOT NULL PRIMARY KEY, version INTEGER DEFAULT '1' NOT NULL, role VARCHAR NOT NULL, text VARCHAR, content JSON,
      model VARCHAR, name VARCHAR, tool_calls JSON NOT NULL, tool_call_id VARCHAR, step_id VARCHAR, run_id VARCHAR, otid VARCHAR, tool_returns JSON,
      group_id VARCHAR, sender_id VARCHAR, batch_item_id VARCHAR, conversation_id VARCHAR, is_err BOOLEAN, approval_request_id VARCHAR, approve BOOLEAN,
      denial_reason VARCHAR, approvals JSON, sequence_id BIGINT NOT NULL UNIQUE, organization_id VARCHAR REFERENCES organizations (id),
      agent_id VARCHAR REFERENCES agents (id) ON DELETE CASCADE, ${COMMON});
    CREATE INDEX ix_messages_agent_created_at ON messages (agent_id, created_at);
    CREATE TABLE archives (id VARCHAR NOT NULL PRIMARY KEY, name VARCHAR NOT NULL, description VARCHAR, vector_db_provider VARCHAR NOT NULL,
      embedding_config JSON, metadata_ JSON, _vector_db_namespace VARCHAR, organization_id VARCHAR REFERENCES organizations (id), ${COMMON});
    CREATE TABLE archives_agents (agent_id VARCHAR NOT NULL REFERENCES agents (id) ON DELETE CASCADE, archive_id VARCHAR NOT NULL REFERENCES archives (id) ON DELETE CASCADE,
      created_at DATETIME DEFAULT (CURRENT_TIMESTAMP), is_owner BOOLEAN NOT NULL, PRIMARY KEY (agent_id, archive_id));
    CREATE TABLE archival_passages (id VARCHAR NOT NULL PRIMARY KEY, text VARCHAR NOT NULL, embedding_config JSON, metadata_ JSON NOT NULL, tags JSON,
      embedding BLOB, organization_id VARCHAR REFERENCES organizations (id), archive_id VARCHAR NOT NULL REFERENCES archives (id) ON DELETE CASCADE, ${COMMON});
    CREATE INDEX archival_passages_created_at_id_idx ON archival_passages (created_at, id);
    CREATE TABLE passage_tags (id VARCHAR NOT NULL PRIMARY KEY, tag VARCHAR NOT NULL, passage_id VARCHAR NOT NULL REFERENCES archival_passages (id) ON DELETE CASCADE,
      archive_id VARCHAR NOT NULL REFERENCES archives (id) ON DELETE CASCADE, organization_id VARCHAR REFERENCES organizations (id), ${COMMON},
      CONSTRAINT uq_passage_tag UNIQUE (passage_id, tag));
    INSERT INTO organizations (id, name, privileged_tools) VALUES ('org-1', 'default', 0);
  `)
  db.exec('BEGIN')
  const agentIns = db.prepare(`INSERT INTO agents (id, name, agent_type, message_ids, organization_id) VALUES (?, ?, 'memgpt_v2_agent', '[]', 'org-1')`)
  const archIns = db.prepare(`INSERT INTO archives (id, name, vector_db_provider, organization_id) VALUES (?, ?, 'native', 'org-1')`)
  const aaIns = db.prepare(`INSERT INTO archives_agents (agent_id, archive_id, is_owner) VALUES (?, ?, 1)`)
  for (const a of spec.agents) {
    agentIns.run(a.id, a.name)
    archIns.run(`archive-${a.id}`, `${a.name} archive`)
    aaIns.run(a.id, `archive-${a.id}`)
  }
  const blockIns = db.prepare(`INSERT INTO block (id, label, is_template, value, "limit", metadata_, read_only, organization_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, 20000, '{}', 0, 'org-1', ?, ?)`)
  const baIns = db.prepare(`INSERT INTO blocks_agents (agent_id, block_id, block_label) VALUES (?, ?, ?)`)
  const bhIns = db.prepare(`INSERT INTO block_history (id, label, value, "limit", actor_type, block_id, sequence_number, organization_id, created_at)
    VALUES (?, ?, ?, 20000, ?, ?, ?, 'org-1', ?)`)
  for (const b of spec.blocks) {
    blockIns.run(b.id, b.label, b.isTemplate ? 1 : 0, b.value, sqlaUtc(b.createdAt), sqlaUtc(b.createdAt))
    baIns.run(b.agent, b.id, b.label)
    b.history?.forEach((h, i) => bhIns.run(`block_hist-${b.id}-${i}`, b.label, h.value, h.actor, b.id, i + 1, sqlaUtc(h.at)))
  }
  const pIns =
    db.prepare(`INSERT INTO archival_passages (id, text, embedding_config, metadata_, tags, embedding, organization_id, archive_id, created_at, is_deleted)
    VALUES (?, ?, ?, '{}', ?, ?, 'org-1', ?, ?, ?)`)
  const tIns = db.prepare(`INSERT INTO passage_tags (id, tag, passage_id, archive_id, organization_id) VALUES (?, ?, ?, ?, 'org-1')`)
  for (const p of spec.passages) {
    const emb = p.embedding ? Buffer.from(new Float32Array(p.embedding).buffer) : null
    const cfg = p.model ? JSON.stringify({ embedding_model: p.model, embedding_endpoint_type: 'openai', embedding_dim: p.embedding?.length ?? 0 }) : null
    pIns.run(p.id, p.text, cfg, p.tags ? JSON.stringify(p.tags) : null, emb, `archive-${p.agent}`, sqlaUtc(p.createdAt), p.deleted ? 1 : 0)
    for (const t of p.tags ?? []) tIns.run(`pt-${p.id}-${t}`, t, p.id, `archive-${p.agent}`)
  }
  const mIns =
    db.prepare(`INSERT INTO messages (id, role, text, content, tool_calls, sequence_id, conversation_id, organization_id, agent_id, created_at, tool_call_id, tool_returns, name)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'org-1', ?, ?, ?, ?, ?)`)
  for (const m of spec.messages)
    mIns.run(
      m.id,
      m.role,
      m.text ?? null,
      JSON.stringify((m.parts ?? []).map((t) => ({ type: 'text', text: t }))),
      m.toolCalls ?? '[]',
      m.seq,
      m.conversation ?? null,
      m.agent,
      sqlaUtc(m.createdAt),
      m.toolCallId ?? null,
      m.toolReturns ?? null,
      m.name ?? null,
    )
  db.exec('COMMIT')
  db.close()
  return file
}

/** Python's repr of a str / number / None / bool / list / dict (what str(list_of_dicts) prints). */
export function pyRepr(v: unknown): string {
  if (v === null) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number') return String(v)
  if (typeof v === 'string') {
    const q = v.includes("'") && !v.includes('"') ? '"' : "'"
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(new RegExp(q, 'g'), `\\${q}`)
    return `${q}${body}${q}`
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
    .join(', ')}}`
}

/** Letta's package_function_response: the JSON envelope around str(result) (a tool message's text). */
export const lettaToolEnvelope = (result: unknown, status = 'OK') =>
  JSON.stringify({ status, message: typeof result === 'string' ? result : pyRepr(result), time: '2026-01-10 10:00:03 AM UTC+0000' }, null, 2)

/** An assistant message's tool_calls column: one OpenAI tool call (Letta adds request_heartbeat). */
export const lettaToolCall = (id: string, name: string, args: Record<string, unknown>) =>
  JSON.stringify([{ id, type: 'function', function: { name, arguments: JSON.stringify({ ...args, request_heartbeat: true }) } }])

/** Run git read/write commands for the fixture (the code under test only reads). */
export function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Letta Code',
      GIT_AUTHOR_EMAIL: 'agent@letta.test',
      GIT_COMMITTER_NAME: 'Letta Code',
      GIT_COMMITTER_EMAIL: 'agent@letta.test',
      ...env,
    },
  })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

export const hasGit = () => spawnSync('git', ['--version']).status === 0

export interface LettaCodeFile {
  /** path under memory/, e.g. system/persona.md */
  path: string
  description: string
  body: string
  readOnly?: boolean
}

/** `<home>/.letta/agents/<id>/memory/` with each commit's files, committed at the given times (epoch s). */
export function buildLettaCodeMemory(home: string, agentId: string, commits: { at: number; message: string; files: LettaCodeFile[] }[], useGit = true): string {
  const root = path.join(home, '.letta', 'agents', agentId, 'memory')
  fs.mkdirSync(root, { recursive: true })
  if (useGit) git(root, ['init', '-q', '-b', 'main'])
  for (const c of commits) {
    for (const f of c.files) {
      const p = path.join(root, f.path)
      fs.mkdirSync(path.dirname(p), { recursive: true })
      fs.writeFileSync(p, `---\ndescription: ${f.description}\n${f.readOnly ? 'read_only: true\n' : ''}---\n${f.body}`)
    }
    if (useGit) {
      const date = `${c.at} +0000`
      git(root, ['add', '-A'])
      git(root, ['commit', '-q', '-m', c.message], { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date })
    }
  }
  return root
}
