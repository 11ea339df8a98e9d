/**
 * `import framework`: any framework store → a canonical DB holding what the open-in-place
 * view shows (same ids, contents, vectors), the input untouched and nothing written beside it.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main/cli/index'
import { openSource } from '../../src/main/store/registry'
import { buildCrewaiLance, pyIsoUtc } from '../helpers/frameworks/crewai'
import { buildLettaServer } from '../helpers/frameworks/letta'
import { buildLlamaIndexStorage } from '../helpers/frameworks/llamaindex'
import { buildAgno } from '../helpers/frameworks/agno'
import { buildChroma } from '../helpers/frameworks/chroma'
import { buildMastra } from '../helpers/frameworks/mastra'
import { buildOpenMemory } from '../helpers/frameworks/openmemory'
import { buildQdrantLocal, hasPython } from '../helpers/frameworks/qdrantLocal'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

async function run(...args: string[]) {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

/** id → [content, created_at, kind, tier, agent] as a store shows it. */
function view(p: string, ws: string) {
  const s = openSource({ path: p, workspacePath: ws })
  try {
    const rows = s.memoriesPage({ limit: 1000 }).rows
    return {
      layout: s.layout,
      memories: Object.fromEntries(rows.map((r) => [r.id, [r.content, r.createdAt, r.kind, r.tier, r.agentId, r.metadata]])),
      models: s.facts().models.map((m) => [m.model, m.dim, m.count]),
    }
  } finally {
    s.close()
  }
}

describe('import framework', () => {
  it('copies a Letta server file: same memories and vectors as opened in place; input unchanged', async () => {
    const dir = path.join(t.dir, 'letta')
    fs.mkdirSync(dir)
    const file = buildLettaServer(dir, {
      agents: [{ id: 'agent-1', name: 'Sam' }],
      blocks: [{ id: 'block-1', agent: 'agent-1', label: 'human', value: 'The user likes tea', createdAt: NOW - 3600_000 }],
      passages: [{ id: 'passage-1', agent: 'agent-1', text: 'Allergic to peanuts', createdAt: NOW - 60_000, embedding: [1, 0, 0, 0], model: 'emb-4' }],
      messages: [{ id: 'message-1', agent: 'agent-1', role: 'user', text: 'hello', createdAt: NOW, seq: 1 }],
    })
    const before = hashTree(dir)
    const out = path.join(t.dir, 'letta-canonical.db')
    const r = await run('import', 'framework', '--in', file, '--out', out, '--json')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.out)
    expect(report).toMatchObject({ importer: 'framework', layout: 'letta', written: { memories: 3, sessions: 1, embeddings: 1 } })
    expect(report.notes.join(' ')).toMatch(/detected: tables agents, block, messages, archival_passages/)
    expect(hashTree(dir)).toEqual(before) // nothing beside the input either (temp workspace)
    const a = view(file, path.join(t.dir, 'a.ws'))
    const b = view(out, path.join(t.dir, 'b.ws'))
    expect(b.layout).toBe('canonical')
    expect(b.memories).toEqual(a.memories)
    expect(b.models).toEqual(a.models)
  })

  it('copies a CrewAI LanceDB folder, keeping its crewai:<dim> vector label', async () => {
    const lance = await buildCrewaiLance(path.join(t.dir, 'memory'), 4, [
      { id: 'x', content: 'deploy needs the VPN', createdAt: pyIsoUtc(NOW), embedding: [1, 0, 0, 0] },
      { id: 'y', content: 'no vector here', createdAt: pyIsoUtc(NOW), embedding: null },
    ])
    const before = hashTree(lance)
    const out = path.join(t.dir, 'crewai-canonical.db')
    const r = await run('import', 'framework', '--in', lance, '--out', out, '--json')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)).toMatchObject({
      layout: 'crewai-lancedb',
      written: { memories: 2, embeddings: 1 },
      models: [{ model: 'crewai:4', dim: 4, count: 1 }],
    })
    expect(hashTree(lance)).toEqual(before)
    expect(fs.existsSync(`${lance}.recallscope`)).toBe(false)
    expect(view(out, path.join(t.dir, 'c.ws')).memories).toEqual(view(lance, path.join(t.dir, 'd.ws')).memories)
  }, 60_000)

  it('copies the stores opened since (LlamaIndex storage, Mastra): same memories and vectors as opened in place', async () => {
    const li = buildLlamaIndexStorage(path.join(t.dir, 'storage'), [
      { id: 'n1', text: 'Deploys on Tuesdays', doc: 'doc-a', fileName: 'ops.md', creationDate: '2025-03-04', embedding: [0.6, 0.8, 0] },
      { id: 'n2', text: 'Lunch at noon', doc: 'doc-b', fileName: 'office.md', creationDate: '2025-03-05', embedding: null },
    ])
    const mdir = path.join(t.dir, 'mastra')
    fs.mkdirSync(mdir)
    const mastra = await buildMastra(
      mdir,
      [{ id: 't1', resource: 'u1', title: 'Trip', at: '2025-06-01T10:00:00.000Z' }],
      [{ id: 'm1', thread: 't1', role: 'user', text: 'we go kayaking', at: '2025-06-01T10:00:00.000Z', embedding: [1, 0, 0] }],
      { u1: 'Name: Ana' },
    )
    for (const [input, layout, memories] of [
      [li, 'llamaindex', 2],
      [mastra, 'mastra', 2],
    ] as const) {
      // reading a WAL-mode file writes read marks to its -shm (kept: its presence is compared, not its bytes)
      const before = hashTree(path.dirname(input === li ? path.join(li, 'x') : input), { shm: 'presence' })
      const out = path.join(t.dir, `${layout}-canonical.db`)
      const r = await run('import', 'framework', '--in', input, '--out', out, '--json')
      expect(r.code, r.err).toBe(0)
      expect(JSON.parse(r.out)).toMatchObject({ layout, written: { memories, embeddings: 1 } })
      expect(hashTree(path.dirname(input === li ? path.join(li, 'x') : input), { shm: 'presence' })).toEqual(before)
      const a = view(input, path.join(t.dir, `${layout}-a.ws`))
      const b = view(out, path.join(t.dir, `${layout}-b.ws`))
      expect(b.memories).toEqual(a.memories)
      expect(b.models).toEqual(a.models)
    }
  }, 60_000)

  it('copies Qdrant local, Chroma, Agno, OpenMemory and any LanceDB table: same memories and vectors as opened in place; inputs unchanged', async () => {
    const at = (i: number) => Date.UTC(2025, 5, 1, 10, i)
    const vec = (i: number) => [1, i / 10, 0, 0]
    const inputs: [layout: string, input: string, memories: number, embeddings: number][] = []
    if (hasPython()) {
      const q = path.join(t.dir, 'qdrant')
      const points = [0, 1, 2].map((i) => ({
        id: `00000000-0000-0000-0000-00000000000${i}`,
        vector: vec(i),
        payload: { data: `qdrant memory ${i}`, user_id: 'u1', created_at: new Date(at(i)).toISOString() },
      }))
      buildQdrantLocal(q, { mem0: { vectors: { size: 4, distance: 'Cosine' }, points } }, path.join(t.dir, 'never'))
      inputs.push(['qdrant-local', q, 3, 3])
      const c = path.join(t.dir, 'chroma')
      const records = [0, 1].map((i) => ({
        id: `doc-${i}`,
        document: `chroma doc ${i}`,
        metadata: { source: 'notes' },
        embedding: vec(i),
        createdAt: '2025-06-01 10:00:00',
      }))
      buildChroma(c, { notes: { dim: 4, records } })
      inputs.push(['chroma', c, 2, 2])
    } else console.warn('SKIPPED (Qdrant local, Chroma): python3 is missing, so their pickled fixtures cannot be written')
    const agnoDir = path.join(t.dir, 'agno')
    fs.mkdirSync(agnoDir)
    const agno = buildAgno(
      agnoDir,
      [0, 1].map((i) => ({ id: `a-${i}`, memory: `agno memory ${i}`, userId: 'u1', topics: ['t'], createdAtS: at(i) / 1000 })),
      [],
    )
    inputs.push(['agno', agno, 2, 0])
    const omDir = path.join(t.dir, 'openmemory')
    fs.mkdirSync(omDir)
    const om = buildOpenMemory(
      omDir,
      'u1',
      ['cursor'],
      [0, 1, 2].map((i) => ({ key: `k${i}`, content: `openmemory fact ${i}`, app: 'cursor', createdAt: at(i) })),
      [],
    )
    inputs.push(['openmemory', om, 3, 0])
    const lance = path.join(t.dir, 'app.lancedb')
    await (
      await lancedb.connect(lance)
    ).createTable(
      'notes',
      [0, 1].map((i) => ({ id: `n-${i}`, text: `lance note ${i}`, vector: vec(i) })),
    )
    inputs.push(['lancedb', lance, 2, 2])

    for (const [layout, input, memories, embeddings] of inputs) {
      const root = fs.statSync(input).isDirectory() ? input : path.dirname(input)
      const before = hashTree(root)
      const out = path.join(t.dir, `${layout}-canonical.db`)
      const r = await run('import', 'framework', '--in', input, '--out', out, '--json')
      expect(r.code, `${layout}: ${r.err}`).toBe(0)
      expect(JSON.parse(r.out), layout).toMatchObject({ layout, written: { memories, embeddings } })
      expect(hashTree(root), layout).toEqual(before)
      const a = view(input, path.join(t.dir, `${layout}-a.ws`))
      const b = view(out, path.join(t.dir, `${layout}-b.ws`))
      expect(b.memories, layout).toEqual(a.memories)
      expect(b.models, layout).toEqual(a.models)
      expect(Object.keys(b.memories), layout).toHaveLength(memories)
    }
  }, 120_000)

  it('refuses an output inside the input folder', async () => {
    const lance = path.join(t.dir, 'memory')
    const r = await run('import', 'framework', '--in', lance, '--out', path.join(lance, 'x.db'))
    expect(r.code).not.toBe(0)
    expect(r.err).toMatch(/must not be the input or inside it/)
  })
})
