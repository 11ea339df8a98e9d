/**
 * LangGraph fixtures.
 *  - Checkpointer, JS: written by the real `@langchain/langgraph-checkpoint-sqlite` SqliteSaver
 *    (JSON serde, `@langchain/core` messages), checkpoints put one step at a time as a graph would.
 *  - Checkpointer, Python: the same DDL (libs/checkpoint-sqlite/langgraph/checkpoint/sqlite/__init__.py)
 *    with checkpoints packed the way Python's JsonPlusSerializer packs them: type "msgpack", messages
 *    as ext 5 (EXT_PYDANTIC_V2) holding msgpack((module, class, model_dump(), "model_validate_json")),
 *    metadata as JSON text (libs/checkpoint/langgraph/checkpoint/serde/jsonplus.py). No npm client
 *    writes that, so it is encoded here with @msgpack/msgpack.
 *  - Store: Python-only (langgraph.store.sqlite), from its MIGRATIONS / VECTOR_MIGRATIONS DDL, rows
 *    written as _prepare_batch_PUT_queries writes them (orjson value, CURRENT_TIMESTAMP, f32 vectors).
 */
import Database from 'better-sqlite3'
import { encode, ExtensionCodec } from '@msgpack/msgpack'

export interface Turn {
  role: 'user' | 'assistant' | 'system' | 'tool'
  content: string
  id: string
}

export interface ThreadSpec {
  threadId: string
  /** messages after each step (each step appends) */
  steps: Turn[][]
  /** the checkpoint ts of each step */
  ts: string[]
}

export const THREADS: ThreadSpec[] = [
  {
    threadId: 'thread-a',
    steps: [
      [{ role: 'user', content: 'Book a table for two in Lisbon', id: 'msg-a1' }],
      [{ role: 'assistant', content: 'Which evening suits you?', id: 'msg-a2' }],
      [
        { role: 'user', content: 'Friday at eight', id: 'msg-a3' },
        { role: 'assistant', content: 'Booked: Friday 20:00, table for two', id: 'msg-a4' },
      ],
    ],
    ts: ['2025-05-01T10:00:00.000Z', '2025-05-01T10:00:05.000Z', '2025-05-01T10:01:00.000Z'],
  },
  {
    threadId: 'thread-b',
    steps: [
      [
        { role: 'system', content: 'You are a travel assistant', id: 'msg-b0' },
        { role: 'user', content: 'Is it rainy in Porto in May?', id: 'msg-b1' },
      ],
      [{ role: 'assistant', content: 'May in Porto is mostly dry and mild', id: 'msg-b2' }],
    ],
    ts: ['2025-05-02T09:00:00.000Z', '2025-05-02T09:00:03.000Z'],
  },
]

/** Write the threads with the real JS SqliteSaver (JSON serde). */
export async function createLangGraphJsCheckpoints(file: string, threads: ThreadSpec[] = THREADS): Promise<void> {
  const { HumanMessage, AIMessage, SystemMessage, ToolMessage } = await import('@langchain/core/messages')
  const make = (t: Turn) =>
    t.role === 'user'
      ? new HumanMessage({ content: t.content, id: t.id })
      : t.role === 'assistant'
        ? new AIMessage({ content: t.content, id: t.id })
        : t.role === 'system'
          ? new SystemMessage({ content: t.content, id: t.id })
          : new ToolMessage({ content: t.content, id: t.id, tool_call_id: 'call-1' })
  for (const th of threads)
    await putLangGraphThread(
      file,
      th.threadId,
      th.steps.map((step) => step.map(make)),
      th.ts,
    )
}

/**
 * Put one thread with the real JS SqliteSaver, a checkpoint per step as a graph would: after step
 * i the `messages` channel holds every message so far (`@langchain/core` message objects), at ts[i].
 */
export async function putLangGraphThread(file: string, threadId: string, steps: unknown[][], ts: string[]): Promise<void> {
  const { SqliteSaver } = await import('@langchain/langgraph-checkpoint-sqlite')
  const { emptyCheckpoint, uuid6 } = await import('@langchain/langgraph-checkpoint')
  const saver = SqliteSaver.fromConnString(file)
  try {
    let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } } as { configurable: Record<string, string> }
    const msgs: unknown[] = []
    for (let i = 0; i < steps.length; i++) {
      msgs.push(...steps[i])
      const cp = emptyCheckpoint()
      cp.id = uuid6(i)
      cp.ts = ts[i]
      cp.channel_values = { messages: [...msgs] }
      cp.channel_versions = { messages: i + 1 }
      config = (await saver.put(config as never, cp, { source: 'loop', step: i, parents: {} } as never)) as typeof config
    }
  } finally {
    saver.db.close()
  }
}

const EXT_METHOD_SINGLE_ARG = 3
const EXT_PYDANTIC_V2 = 5

/** A Python LangChain message as ormsgpack + JsonPlusSerializer pack it. */
class PyModel {
  constructor(
    readonly module: string,
    readonly cls: string,
    readonly dump: Record<string, unknown>,
  ) {}
}
class PyDatetime {
  constructor(readonly iso: string) {}
}

const PY_CLASSES: Record<Turn['role'], [string, string, string]> = {
  user: ['langchain_core.messages.human', 'HumanMessage', 'human'],
  assistant: ['langchain_core.messages.ai', 'AIMessage', 'ai'],
  system: ['langchain_core.messages.system', 'SystemMessage', 'system'],
  tool: ['langchain_core.messages.tool', 'ToolMessage', 'tool'],
}

function pyCodec(): ExtensionCodec {
  const codec = new ExtensionCodec()
  codec.register({
    type: EXT_PYDANTIC_V2,
    encode: (o: unknown) => (o instanceof PyModel ? encode([o.module, o.cls, o.dump, 'model_validate_json'], { extensionCodec: codec }) : null),
    decode: () => null,
  })
  codec.register({
    type: EXT_METHOD_SINGLE_ARG,
    encode: (o: unknown) => (o instanceof PyDatetime ? encode(['datetime', 'datetime', o.iso, 'fromisoformat'], { extensionCodec: codec }) : null),
    decode: () => null,
  })
  return codec
}

/** Python SqliteSaver layout, msgpack checkpoints (what langgraph-checkpoint-sqlite for Python writes). */
export function createLangGraphPyCheckpoints(file: string, threads: ThreadSpec[] = THREADS): void {
  const db = new Database(file)
  db.exec(`
    PRAGMA journal_mode=WAL;
    CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        type TEXT,
        checkpoint BLOB,
        metadata BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    );
    CREATE TABLE IF NOT EXISTS writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_path TEXT NOT NULL DEFAULT '',
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    );`)
  const codec = pyCodec()
  const ins = db.prepare(
    `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, '', ?, ?, 'msgpack', ?, ?)`,
  )
  for (const th of threads) {
    const msgs: Turn[] = []
    let parent: string | null = null
    for (let i = 0; i < th.steps.length; i++) {
      msgs.push(...th.steps[i])
      // uuid6-shaped, time-ordered ids as Python's checkpoint ids sort
      const id = `1f0${String(i).padStart(5, '0')}-0000-6000-8000-${th.threadId
        .padEnd(12, '0')
        .slice(0, 12)
        .replace(/[^0-9a-f]/g, '0')}`
      const checkpoint = {
        v: 4,
        // Python writes ts as a plain isoformat() string with +00:00
        ts: th.ts[i].replace('Z', '+00:00'),
        id,
        channel_values: {
          messages: msgs.map((m) => {
            const [mod, cls, type] = PY_CLASSES[m.role]
            return new PyModel(mod, cls, { content: m.content, additional_kwargs: {}, response_metadata: {}, type, name: null, id: m.id })
          }),
          // another channel a graph may carry, with a datetime in it
          last_seen: new PyDatetime(th.ts[i].replace('Z', '+00:00')),
        },
        channel_versions: { messages: `0000000000000000000000000000000${i + 1}.0.5` },
        versions_seen: {},
        updated_channels: ['messages'],
      }
      ins.run(th.threadId, id, parent, Buffer.from(encode(checkpoint, { extensionCodec: codec })), JSON.stringify({ source: 'loop', step: i, parents: {} }))
      parent = id
    }
  }
  db.close()
}

export interface StoreItem {
  namespace: string[]
  key: string
  value: Record<string, unknown>
  /** one vector per indexed field; null = put with index=False */
  vectors: Record<string, number[]> | null
  createdAt: string
  expiresAt?: string | null
  ttlMinutes?: number | null
}

/** Python SqliteStore layout from MIGRATIONS + VECTOR_MIGRATIONS (langgraph/store/sqlite/base.py). */
export function createLangGraphStore(file: string, items: StoreItem[]): void {
  const db = new Database(file)
  db.exec(`
    CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS store (
        -- 'prefix' represents the doc's 'namespace'
        prefix text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (prefix, key)
    );
    CREATE INDEX IF NOT EXISTS store_prefix_idx ON store (prefix);
    ALTER TABLE store ADD COLUMN expires_at TIMESTAMP;
    ALTER TABLE store ADD COLUMN ttl_minutes REAL;
    CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL;
    INSERT INTO store_migrations (v) VALUES (0), (1), (2), (3), (4);
    CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS store_vectors (
        prefix text NOT NULL,
        key text NOT NULL,
        field_name text NOT NULL,
        embedding BLOB,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (prefix, key, field_name),
        FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
    );
    INSERT INTO vector_migrations (v) VALUES (0);`)
  const put = db.prepare(`INSERT OR REPLACE INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const vec = db.prepare(`INSERT OR REPLACE INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
  for (const it of items) {
    // _namespace_to_text: ".".join(namespace); orjson.dumps: compact JSON
    const prefix = it.namespace.join('.')
    put.run(prefix, it.key, JSON.stringify(it.value), it.createdAt, it.createdAt, it.expiresAt ?? null, it.ttlMinutes ?? null)
    for (const [field, v] of Object.entries(it.vectors ?? {}))
      vec.run(prefix, it.key, field, Buffer.from(new Float32Array(v).buffer), it.createdAt, it.createdAt)
  }
  db.close()
}
