/**
 * The API surface: the channel list (a change shows up in review), every
 * channel fuzzed with bad input (a typed error, never a throw or a crash), and
 * the loopback HTTP bridge's guards (token, Host, Origin, body size, static files).
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contract } from '../src/shared/contract'
import { ERROR_CODES } from '../src/shared/result'
import { App } from '../src/main/api/app'
import { CHANNELS, type Dispatch } from '../src/main/api/register'
import { startServer, type RunningServer } from '../src/main/server/http'
import { CONTENT_SECURITY_POLICY } from '../src/main/csp'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'
import { openTestApp } from './helpers/testApp'

/** The error code of a failed Result in an HTTP body. */
const errorCode = (body: string): string => (JSON.parse(body) as { error: { code: string } }).error.code

let t: ReturnType<typeof tmpDir>
let db: string
let app: App
let dispatch: Dispatch

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 300 })
  ;({ app, call: dispatch } = openTestApp(db, path.join(t.dir, 'home')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('the channel list', () => {
  it('is exactly this (review any change to the public surface)', () => {
    expect(Object.keys(contract).sort()).toEqual(
      [
        'app.info',
        'cases.delete',
        'cases.export',
        'cases.get',
        'cases.import',
        'cases.list',
        'cases.save',
        'configs.delete',
        'configs.diff',
        'configs.get',
        'configs.list',
        'configs.save',
        'embed.backfill',
        'embed.models',
        'embed.status',
        'eval.run',
        'eval.tune',
        'events.page',
        'events.sources',
        'import.start',
        'map.build',
        'map.refine',
        'jobs.cancel',
        'jobs.get',
        'jobs.list',
        'memories.facets',
        'memories.get',
        'memories.page',
        'memories.similar',
        'pg.connect',
        'pg.forget',
        'pg.saved',
        'pg.test',
        'recall.ages',
        'recall.compare',
        'recall.presets',
        'recall.refresh',
        'recall.run',
        'recall.scopeCount',
        'runs.compare',
        'runs.delete',
        'runs.get',
        'runs.list',
        'runs.rename',
        'sessions.get',
        'sessions.page',
        'settings.get',
        'settings.set',
        'store.close',
        'store.facts',
        'store.open',
        'store.openDemo',
        'store.openMapped',
        'store.pick',
        'store.previewMapping',
        'store.recent',
        'store.suggestMapping',
        'store.tables',
        'trace.counterfactual',
        'trace.addLog',
        'trace.drivers',
        'trace.event',
        'trace.ingestOtlp',
        'trace.logs',
        'trace.removeLog',
        'trace.replay',
        'trace.timeline',
        'trace.why',
        'tune.delete',
        'eval.scope',
        'tune.get',
        'tune.list',
      ].sort(),
    )
    // Every name is domain.verb.
    for (const c of CHANNELS) expect(c).toMatch(/^[a-z]+\.[a-zA-Z]+$/)
  })
})

/** Tiny seeded PRNG so the fuzz inputs are the same on every run. */
function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), a | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

function junk(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * 12)
  switch (k) {
    case 0:
      return null
    case 1:
      return -1e308 * r()
    case 2:
      return Number.MAX_SAFE_INTEGER * 4
    case 3:
      return ''
    case 4:
      return 'x'.repeat(Math.floor(r() * 5000))
    case 5:
      return '../../etc/passwd'
    case 6:
      return r() < 0.5
    case 7:
      return depth > 2 ? [] : Array.from({ length: Math.floor(r() * 4) }, () => junk(r, depth + 1))
    case 8:
      return depth > 2
        ? {}
        : { [['id', 'path', 'query', 'limit', 'offset', 'config', 'scope', '__proto__', 'constructor'][Math.floor(r() * 9)]]: junk(r, depth + 1) }
    case 9:
      return -1
    case 10:
      return 'NaN'
    default:
      return { nested: { deep: [1, 'two', null] } }
  }
}

describe('every channel rejects bad input with a typed error', () => {
  const BAD_SHAPES: unknown[] = [null, 42, 'text', [], [1, 2], true, { surelyNotAField: 1 }]
  for (const channel of CHANNELS) {
    it(channel, async () => {
      for (const bad of BAD_SHAPES) {
        const r = await dispatch(channel, bad)
        expect(r.ok, `${channel} accepted ${JSON.stringify(bad)}`).toBe(false)
        if (!r.ok) expect(r.error.code).toBe('BAD_INPUT')
      }
      // Random junk objects: whatever happens, a Result with a known code comes back.
      const r2 = rng(channel.length * 7919)
      for (let i = 0; i < 25; i++) {
        const input = junk(r2)
        let res
        try {
          res = await dispatch(channel, typeof input === 'object' && input !== null && !Array.isArray(input) ? input : { value: input })
        } catch (e) {
          throw new Error(`${channel} threw on ${JSON.stringify(input)?.slice(0, 200)}: ${String(e)}`, { cause: e })
        }
        expect(typeof res.ok).toBe('boolean')
        if (!res.ok) expect(ERROR_CODES).toContain(res.error.code)
      }
    })
  }

  it('an unknown channel is NOT_FOUND, and nothing was written to the agent DB', async () => {
    const before = sha256File(db)
    const r = await dispatch('nope.nothing', {})
    expect(r).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
    expect(sha256File(db)).toBe(before)
  })

  it('names the field that failed', async () => {
    const r = await dispatch('memories.page', { limit: 'ten' })
    expect(r.ok).toBe(false)
    if (!r.ok) {
      expect(r.error.code).toBe('BAD_INPUT')
      expect(r.error.message).toMatch(/limit/)
    }
  })
})

describe('the loopback HTTP bridge', () => {
  let srv: RunningServer
  let rendererDir: string
  beforeAll(async () => {
    rendererDir = path.join(t.dir, 'renderer')
    fs.mkdirSync(path.join(rendererDir, 'assets'), { recursive: true })
    fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>recallscope</title>')
    fs.writeFileSync(path.join(rendererDir, 'assets', 'app.js'), 'console.log(1)')
    fs.writeFileSync(path.join(t.dir, 'secret.txt'), 'do not serve me')
    srv = await startServer({ dispatch, jobs: app.jobs, rendererDir, token: 'test-token-123', maxBodyBytes: 64 * 1024 })
  })
  afterAll(async () => srv?.close())

  function request(opts: {
    method?: string
    path: string
    headers?: Record<string, string>
    body?: string
  }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: srv.port, method: opts.method ?? 'GET', path: opts.path, headers: { host: `127.0.0.1:${srv.port}`, ...opts.headers } },
        (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
        },
      )
      req.on('error', reject)
      if (opts.body !== undefined) req.write(opts.body)
      req.end()
    })
  }
  const auth = { authorization: 'Bearer test-token-123', 'content-type': 'application/json' }

  it('listens on 127.0.0.1 and prints a URL with the token in the fragment', () => {
    expect(srv.url).toBe(`http://127.0.0.1:${srv.port}/#token=test-token-123`)
  })

  it('answers an authorised call with the Result', async () => {
    const r = await request({ method: 'POST', path: '/api/memories.page', headers: auth, body: JSON.stringify({ limit: 2 }) })
    expect(r.status).toBe(200)
    const j = JSON.parse(r.body) as { ok: boolean; data: { rows: unknown[] } }
    expect(j.ok).toBe(true)
    expect(j.data.rows).toHaveLength(2)
  })

  it('refuses a missing or wrong token', async () => {
    const none = await request({ method: 'POST', path: '/api/app.info', body: '{}' })
    expect(none.status).toBe(401)
    expect(errorCode(none.body)).toBe('FORBIDDEN')
    const wrong = await request({ method: 'POST', path: '/api/app.info', headers: { authorization: 'Bearer test-token-124' }, body: '{}' })
    expect(wrong.status).toBe(401)
    const sse = await request({ path: '/api/progress' })
    expect(sse.status).toBe(401)
  })

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin', async () => {
    const host = await request({ method: 'POST', path: '/api/app.info', headers: { ...auth, host: `evil.example:${srv.port}` }, body: '{}' })
    expect(host.status).toBe(403)
    const origin = await request({ method: 'POST', path: '/api/app.info', headers: { ...auth, origin: 'https://evil.example' }, body: '{}' })
    expect(origin.status).toBe(403)
    const same = await request({ method: 'POST', path: '/api/app.info', headers: { ...auth, origin: `http://127.0.0.1:${srv.port}` }, body: '{}' })
    expect(same.status).toBe(200)
  })

  it('rejects bad JSON, wrong methods and oversized bodies with clear errors', async () => {
    const bad = await request({ method: 'POST', path: '/api/app.info', headers: auth, body: '{not json' })
    expect(bad.status).toBe(400)
    expect(errorCode(bad.body)).toBe('BAD_INPUT')
    const get = await request({ path: '/api/app.info', headers: auth })
    expect(get.status).toBe(405)
    const big = await request({ method: 'POST', path: '/api/memories.page', headers: auth, body: JSON.stringify({ search: 'x'.repeat(100 * 1024) }) }).catch(
      (e) => ({ status: 413, body: String(e), headers: {} }),
    )
    expect(big.status).toBe(413)
  })

  it('serves the renderer with the CSP, and nothing outside its folder', async () => {
    const index = await request({ path: '/' })
    expect(index.status).toBe(200)
    expect(index.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY)
    expect(index.headers['x-frame-options']).toBe('DENY')
    const js = await request({ path: '/assets/app.js' })
    expect(js.headers['content-type']).toMatch(/javascript/)
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/../../secret.txt']) {
      const r = await request({ path: p })
      expect(r.body).not.toContain('do not serve me')
    }
  })
})
