/**
 * Letta: the V1 server's SQLite file read in place (archival passages as memories with their
 * vectors, core blocks as pinned memories with their history, messages as turns), and a Letta
 * Code memory folder (each markdown file a memory, its git history its timeline).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildLettaCodeMemory, buildLettaServer, git, hasGit } from '../helpers/frameworks/letta'
import { hashTree } from '../helpers/frameworks/hashTree'
import { sha256File, tmpDir } from '../helpers/tmp'

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const MIN = 60_000
const Q = [1, 0, 0, 0]
const at = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

describe('Letta server (SQLite)', () => {
  it('opens in place: passages, pinned core blocks, turns; recall by stored vectors; file unchanged', async () => {
    const file = buildLettaServer(t.dir, {
      agents: [{ id: 'agent-1', name: 'Sam' }],
      blocks: [
        {
          id: 'block-persona',
          agent: 'agent-1',
          label: 'persona',
          value: 'I am Sam, a concise assistant.',
          createdAt: NOW - 60 * MIN,
          history: [
            { value: 'I am Sam.', at: NOW - 60 * MIN, actor: 'user' },
            { value: 'I am Sam, a concise assistant.', at: NOW - 30 * MIN, actor: 'letta_agent' },
          ],
        },
        { id: 'block-tpl', agent: 'agent-1', label: 'template', value: 'a template', createdAt: NOW - 60 * MIN, isTemplate: true },
      ],
      passages: [
        {
          id: 'passage-1',
          agent: 'agent-1',
          text: 'The user is allergic to peanuts',
          createdAt: NOW - 20 * MIN,
          tags: ['health'],
          embedding: at(0.9),
          model: 'text-embedding-3-small',
        },
        { id: 'passage-2', agent: 'agent-1', text: 'The user lives in Lisbon', createdAt: NOW - 10 * MIN, embedding: at(0.4), model: 'text-embedding-3-small' },
        {
          id: 'passage-3',
          agent: 'agent-1',
          text: 'deleted passage',
          createdAt: NOW - 5 * MIN,
          embedding: at(0.99),
          model: 'text-embedding-3-small',
          deleted: true,
        },
      ],
      messages: [
        { id: 'message-1', agent: 'agent-1', role: 'user', parts: ['hi, any snack ideas?'], createdAt: NOW - 4 * MIN, seq: 1 },
        { id: 'message-2', agent: 'agent-1', role: 'assistant', text: 'Avoid peanuts; try apples.', createdAt: NOW - 3 * MIN, seq: 2 },
      ],
    })
    const before = sha256File(file)
    const store = openSource({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('letta')
      expect(f.detectedBecause).toMatch(/agents, block, messages, archival_passages, block_history, blocks_agents, archives_agents, passage_tags/)
      expect(f.counts).toMatchObject({ memories: 5, sessions: 1 }) // 2 passages + 1 block + 2 messages
      expect(f.models).toEqual([expect.objectContaining({ model: 'text-embedding-3-small', dim: 4, count: 2 })])
      expect(Object.fromEntries(f.byTier.map((x) => [x.key, x.count]))).toEqual({ working: 1, long_term: 4 })

      const persona = store.getMemory('block-persona')!
      expect(persona).toMatchObject({
        tier: 'working',
        summary: 'persona',
        content: 'I am Sam, a concise assistant.',
        agentId: 'agent-1',
        createdAt: NOW - 60 * MIN,
      })
      expect(persona.metadata).toMatchObject({
        pinned: true,
        label: 'persona',
        limit: 20000,
        agents: ['agent-1'],
        history: [
          { sequence: 1, value: 'I am Sam.', actor_type: 'user', at: NOW - 60 * MIN },
          { sequence: 2, value: 'I am Sam, a concise assistant.', actor_type: 'letta_agent', at: NOW - 30 * MIN },
        ],
      })
      expect(store.getMemory('passage-1')).toMatchObject({ kind: 'semantic', agentId: 'agent-1', metadata: { archival: true, tags: ['health'] } })
      expect(store.getMemory('passage-3')).toBeNull()
      expect(store.getMemory('block-tpl')).toBeNull()
      const turns = store.memoriesPage({ sessionId: 'agent-1', sort: 'created_at', dir: 'asc' }).rows
      expect(turns.map((m) => [m.role, m.content, m.turn])).toEqual([
        ['user', 'hi, any snack ideas?', 1],
        ['assistant', 'Avoid peanuts; try apples.', 2],
      ])
      expect(store.sessionsPage({}).rows[0]).toMatchObject({ id: 'agent-1', summary: 'Sam', memoryCount: 2 })

      const trace = await runRecall(
        store,
        'food allergies',
        { ...getPreset('fieldguide').config, floor: null, weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 } },
        NOW,
        { queryVector: Q },
      )
      expect(trace.results.map((r) => r.id)).toEqual(['passage-1', 'passage-2'])
      expect(trace.results[0].features.similarity).toBeCloseTo(0.9, 5)
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })
})

describe.skipIf(!hasGit())('Letta Code memory folder', () => {
  it('each markdown file is a memory, its git history its timeline; nothing in the folder (or .git) changes', async () => {
    const T1 = Math.floor((NOW - 3 * 86_400_000) / 1000)
    const T2 = Math.floor((NOW - 86_400_000) / 1000)
    const root = buildLettaCodeMemory(path.join(t.dir, 'home'), 'agent-abc', [
      {
        at: T1,
        message: 'init memory',
        files: [
          { path: 'system/persona.md', description: 'Who I am', body: 'I am a careful coding agent.', readOnly: true },
          { path: 'system/human.md', description: 'The user', body: 'The user prefers TypeScript.' },
        ],
      },
      {
        at: T2,
        message: 'learn about deploys',
        files: [
          { path: 'system/human.md', description: 'The user', body: 'The user prefers TypeScript and short answers.' },
          { path: 'reference/deploy.md', description: 'Deploy notes', body: 'Staging deploys need the VPN.' },
        ],
      },
    ])
    const agentDir = path.dirname(root)
    const before = hashTree(agentDir)
    const headBefore = git(root, ['rev-parse', 'HEAD']).trim()
    // the agent folder is accepted as well as the memory folder
    for (const p of [root, agentDir]) {
      const store = openSource({ path: p, workspacePath: path.join(t.dir, `lc-${path.basename(p)}.ws`) })
      try {
        const f = store.facts()
        expect(f.layout).toBe('letta-code')
        expect(f.detectedBecause).toMatch(/3 markdown memory file\(s\).*agent-abc.*git history/)
        expect(f.counts.memories).toBe(3)
        const human = store.getMemory('system/human.md')!
        expect(human).toMatchObject({
          content: 'The user prefers TypeScript and short answers.',
          summary: 'The user',
          tier: 'working',
          agentId: 'agent-abc',
          createdAt: T1 * 1000,
        })
        expect(human.metadata).toMatchObject({
          pinned: true,
          updated_at: T2 * 1000,
          timeline: [
            { at: T2 * 1000, subject: 'learn about deploys', author: 'Letta Code' },
            { at: T1 * 1000, subject: 'init memory', author: 'Letta Code' },
          ],
        })
        expect(store.getMemory('system/persona.md')!.metadata).toMatchObject({ read_only: true, timeline: [{ subject: 'init memory' }] })
        expect(store.getMemory('reference/deploy.md')).toMatchObject({ tier: 'long_term', createdAt: T2 * 1000 })
        const trace = await runRecall(store, 'deploy VPN', { ...getPreset('fieldguide').config, mode: 'lexical', floor: null }, NOW)
        expect(trace.results[0]?.id).toBe('reference/deploy.md')
      } finally {
        store.close()
      }
    }
    expect(hashTree(agentDir)).toEqual(before)
    expect(git(root, ['rev-parse', 'HEAD']).trim()).toBe(headBefore)
    expect(fs.existsSync(`${agentDir}.recallscope`)).toBe(false) // explicit workspaces were used
  })

  it('without git history (not a repository) falls back to file times, no timeline', () => {
    const root = buildLettaCodeMemory(
      path.join(t.dir, 'home2'),
      'agent-nogit',
      [{ at: 0, message: '', files: [{ path: 'system/persona.md', description: 'Who', body: 'plain' }] }],
      false,
    )
    const mtime = Date.UTC(2026, 0, 2, 3, 4, 5)
    fs.utimesSync(path.join(root, 'system/persona.md'), mtime / 1000, mtime / 1000)
    const store = openSource({ path: root, workspacePath: path.join(t.dir, 'lc-nogit.ws') })
    try {
      expect(store.facts().detectedBecause).toMatch(/no timeline/)
      expect(store.getMemory('system/persona.md')).toMatchObject({ createdAt: mtime, metadata: { timeline: null } })
    } finally {
      store.close()
    }
  })
})
