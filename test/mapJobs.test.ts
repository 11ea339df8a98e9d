/**
 * The map's jobs are not piled up (docs/guide/jobs.md): the same map request on the same store gets the
 * same map, the same refinement asked again is the job already running (visiting the Map four times
 * starts one UMAP job), and a refinement of another map cancels the one still running.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import type { Dispatch } from '../src/main/api/register'
import type { JobProgress } from '../src/shared/jobs'
import type { MapData } from '../src/shared/map'
import { tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'
import { openTestApp } from './helpers/testApp'

let t: ReturnType<typeof tmpDir>
let app: App
let dispatch: Dispatch

beforeAll(() => {
  t = tmpDir()
  const db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 300 })
  ;({ app, call: dispatch } = openTestApp(db, path.join(t.dir, 'home')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await dispatch(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}

describe('map jobs', () => {
  it('gives the same map and the same refinement job to the same request, four visits = one job', async () => {
    // the moment of the demo's last write, as the screen maps it (every memory exists by then)
    const now = (await ok<{ timeRange: { max: number } }>('memories.facets', {})).timeRange.max
    const req = { query: 'deploy the tier migration', preset: 'fieldguide', now, cap: 200 }
    const before = (await ok<JobProgress[]>('jobs.list', {})).filter((j) => j.kind === 'map').length
    const ids = new Set<string>()
    const jobs = new Set<string>()
    for (let visit = 0; visit < 4; visit++) {
      const m = await ok<MapData>('map.build', req)
      ids.add(m.mapId)
      // many epochs, so it is still running on the later visits
      jobs.add((await ok<JobProgress>('map.refine', { mapId: m.mapId, nEpochs: 2000 })).jobId)
    }
    expect(ids.size).toBe(1)
    expect(jobs.size).toBe(1)
    const list = (await ok<JobProgress[]>('jobs.list', {})).filter((j) => j.kind === 'map')
    expect(list.length - before).toBe(1)
    // named by what it computes
    expect(list[0].label).toMatch(/UMAP layout of \d+ memories for “deploy the tier migration” \(fieldguide\)/)

    // another map (another query): its refinement supersedes the running one, which is cancelled
    const other = await ok<MapData>('map.build', { ...req, query: 'the user prefers dark mode' })
    expect(other.mapId).not.toBe([...ids][0])
    const second = await ok<JobProgress>('map.refine', { mapId: other.mapId, nEpochs: 50 })
    await expect.poll(async () => (await ok<JobProgress>('jobs.get', { jobId: [...jobs][0] })).state, { timeout: 20_000 }).toBe('cancelled')
    await expect.poll(async () => (await ok<JobProgress>('jobs.get', { jobId: second.jobId })).state, { timeout: 60_000 }).toBe('done')
  }, 120_000)

  it('never reuses a map that follows the clock (no `now` given)', async () => {
    const a = await ok<MapData>('map.build', { query: 'deploy', cap: 100 })
    const b = await ok<MapData>('map.build', { query: 'deploy', cap: 100 })
    expect(a.mapId).not.toBe(b.mapId)
  })
})
