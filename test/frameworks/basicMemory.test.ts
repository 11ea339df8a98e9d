/**
 * basic-memory: its `memory.db` opened read-only in place, from the data folder or the file;
 * observations as memories of their notes, relations on the memory, notes as sessions.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildBasicMemory } from '../helpers/frameworks/basicMemory'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const HOUR = 3600_000
let t: ReturnType<typeof tmpDir>
let folder: string

beforeAll(() => {
  t = tmpDir()
  folder = buildBasicMemory(path.join(t.dir, '.basic-memory'), 'main', [
    {
      title: 'Deploy process',
      permalink: 'deploy-process',
      createdAt: NOW - 48 * HOUR,
      updatedAt: NOW - 2 * HOUR,
      observations: [
        { content: 'Staging deploys need the VPN', category: 'requirement', tags: ['deploy', 'vpn'] },
        { content: 'Rollbacks take about ten minutes', category: 'fact' },
      ],
      relations: [
        { type: 'owned_by', to: 'dana' },
        { type: 'relates_to', to: 'not-written-yet' },
      ],
    },
    {
      title: 'Dana',
      permalink: 'dana',
      noteType: 'person',
      createdAt: NOW - 24 * HOUR,
      updatedAt: NOW - 24 * HOUR,
      observations: [{ content: 'Dana owns billing', category: 'role' }],
    },
  ])
})
afterAll(() => t.cleanup())

describe('basic-memory', () => {
  it('opens the data folder read-only: detection, counts, browse, recall; no file in the folder changes', async () => {
    const before = hashTree(folder)
    const store = openSource({ path: folder })
    try {
      expect(store.workspacePath).toBe(`${folder}.recallscope`) // beside the folder, never inside
      const f = store.facts()
      expect(f.layout).toBe('basic-memory')
      expect(f.detectedBecause).toMatch(/entity, observation, relation, search_index, project/)
      expect(f.counts).toMatchObject({ memories: 3, sessions: 2 })
      expect(f.byAgent).toEqual([{ key: 'main', count: 3 }])

      const rows = store.memoriesPage({ sessionId: 'entity-1', sort: 'created_at' }).rows
      expect(rows.map((r) => r.content).sort()).toEqual(['Rollbacks take about ten minutes', 'Staging deploys need the VPN'])
      const vpn = rows.find((r) => r.content.includes('VPN'))!
      expect(vpn.createdAt).toBe(NOW - 48 * HOUR) // local naive time read back as the same instant
      expect(vpn.lastUsedAt).toBe(NOW - 2 * HOUR)
      expect(vpn.metadata).toEqual({
        category: 'requirement',
        tags: ['deploy', 'vpn'],
        context: null,
        entity: { title: 'Deploy process', permalink: 'deploy-process', file_path: 'deploy-process.md', note_type: 'note' },
        relations: [
          { type: 'owned_by', to: 'dana', context: null },
          { type: 'relates_to', to: 'not-written-yet', context: null },
        ],
      })
      const s = store.sessionsPage({}).rows.find((x) => x.id === 'entity-2')!
      expect(s.summary).toBe('Dana')
      expect(s.memoryCount).toBe(1)

      const trace = await runRecall(store, 'who owns billing', { ...getPreset('fieldguide').config, mode: 'lexical', floor: null }, NOW)
      expect(trace.results[0]?.id).toBe('obs-3')
    } finally {
      store.close()
    }
    // Every file that was there is byte-identical. A read-only reader of a WAL database makes
    // SQLite create its shared-memory side files when they are missing (as any reader would):
    // only those may appear, and the WAL stays empty.
    const after = hashTree(folder)
    for (const [f, h] of Object.entries(before)) expect(after[f]).toBe(h)
    expect(
      Object.keys(after)
        .filter((f) => !(f in before))
        .every((f) => f === 'memory.db-wal' || f === 'memory.db-shm'),
    ).toBe(true)
    if (after['memory.db-wal']) expect(fs.statSync(path.join(folder, 'memory.db-wal')).size).toBe(0)
  })

  it('opens the memory.db file itself too', () => {
    const store = openSource({ path: path.join(folder, 'memory.db'), workspacePath: path.join(t.dir, 'bm.ws') })
    try {
      expect(store.facts().layout).toBe('basic-memory')
    } finally {
      store.close()
    }
  })
})
