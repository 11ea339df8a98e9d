/**
 * Issue 21's Postgres findings, each built here against a real Postgres (PGlite + pgvector on a
 * loopback port): a row whose vector has another dimension (or, stored as real[], a NaN) no
 * longer fails every dense recall; text with U+0000 (SQLSTATE 22021) and other class-22 data
 * exceptions are BAD_INPUT; a password given in any form never shows in errors, app.info, the
 * recent list or settings.json, and the desktop app keeps a recent URL's password only as the
 * keychain's ciphertext.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import type { SecretBox } from '../src/main/api/pgConnections'
import { runRecall } from '../src/main/recall/engine'
import { openStore } from '../src/main/store/registry'
import { getPreset } from '../src/shared/presets'
import { RecallscopeError } from '../src/shared/result'
import type { RecallConfig, RecallTrace } from '../src/shared/types'
import { canonicalDdl, canonicalInserts, cosineRanking, makeMemories, PG_DIM, PG_MODEL, PG_T0, randomQuery, type FixtureMemory } from './helpers/pgFixture'
import { pgVector, startPgServer, type PgTestServer } from './helpers/pgServer'
import { tmpDir } from './helpers/tmp'

const N = 60
const NOW = PG_T0 + 30 * 86_400_000
let srv: PgTestServer
let t: ReturnType<typeof tmpDir>
let mems: FixtureMemory[]

const ws = (name: string) => path.join(t.dir, `${name}.recallscope`)
const url = (params: string) => `${srv.url}&${params}`

function denseConfig(extra: Partial<RecallConfig> = {}): RecallConfig {
  return { ...getPreset('fieldguide').config, mode: 'dense', topK: 20, candidatePool: 40, minSimilarity: null, ...extra }
}

function denseIds(tr: RecallTrace): string[] {
  return tr.candidates
    .filter((c) => c.denseRank !== null)
    .sort((a, b) => a.denseRank! - b.denseRank!)
    .map((c) => c.id)
}

function codeOf(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    return (e as RecallscopeError).code
  }
  return 'none'
}

beforeAll(async () => {
  t = tmpDir()
  mems = makeMemories(N)
  srv = await startPgServer()
  // `vector` without a length (a column a real agent may have): any dimension can be stored in it.
  const free = canonicalDdl('dims').replace(`vector(${PG_DIM})`, 'vector')
  await srv.seed(`${free} ${canonicalInserts('dims', mems)}`)
  await srv.seed(
    `INSERT INTO dims.memories (id, content, created_at, kind, tier) VALUES ('odd-dim', 'coffee paris odd', ${PG_T0}, 'semantic', 'working');
     INSERT INTO dims.embeddings VALUES ('memory', 'odd-dim', '${PG_MODEL}', 3, ${pgVector([1, 0, 0])});`,
  )
  await srv.seed(`${canonicalDdl('arrbad', 'real[]')} ${canonicalInserts('arrbad', mems, 'real[]')}`)
  const nan = Array.from({ length: PG_DIM }, (_, i) => (i === 0 ? "'NaN'::real" : '0.5')).join(',')
  await srv.seed(
    `INSERT INTO arrbad.memories (id, content, created_at, kind, tier) VALUES ('nan-vec', 'coffee nan', ${PG_T0}, 'semantic', 'working'),
       ('short-vec', 'coffee short', ${PG_T0}, 'semantic', 'working');
     INSERT INTO arrbad.embeddings VALUES ('memory', 'nan-vec', '${PG_MODEL}', ${PG_DIM}, ARRAY[${nan}]::real[]),
       ('memory', 'short-vec', '${PG_MODEL}', 2, ARRAY[1, 2]::real[]);`,
  )
}, 180_000)

afterAll(async () => {
  await srv?.stop()
  t?.cleanup()
})

describe('malformed vectors in Postgres are skipped and counted, like SQLite', () => {
  it('a vector of another dimension: dense (pushed down) and hybrid recalls answer, equal to an independent cosine, and the row is counted', async () => {
    const s = openStore({ path: url('schema=dims'), workspacePath: ws('dims') })
    try {
      expect(s.capabilities().pushdown).not.toBeNull()
      const qv = randomQuery(3)
      const tr = await runRecall(s, 'coffee', denseConfig(), NOW, { queryVector: qv })
      const want = cosineRanking(mems, qv, () => true).map((x) => x.id)
      // every row with a usable vector, in the independent order (the fetch depth is past the 54 there are)
      expect(denseIds(tr)).toEqual(want)
      expect(denseIds(tr)).not.toContain('odd-dim')
      // hybrid: 'odd-dim' is a lexical hit whose cosine is asked for separately (similarities): none, not a failure
      const hy = await runRecall(s, 'coffee paris odd', denseConfig({ mode: 'hybrid' }), NOW, { queryVector: qv })
      const odd = hy.candidates.find((c) => c.id === 'odd-dim')
      expect(odd?.lexicalRank).not.toBeNull()
      expect(odd?.similarity).toBeNull()
      expect(s.facts().malformed.wrongDimension).toBe(1)
    } finally {
      s.close()
    }
  })

  it('real[] storage with a NaN and a short vector: pushed down, both skipped, both counted', async () => {
    const s = openStore({ path: url('schema=arrbad'), workspacePath: ws('arrbad') })
    try {
      expect(s.capabilities().pushdown).not.toBeNull()
      const qv = randomQuery(4)
      const tr = await runRecall(s, 'q', denseConfig(), NOW, { queryVector: qv })
      expect(denseIds(tr)).toEqual(cosineRanking(mems, qv, () => true).map((x) => x.id))
      const m = s.facts().malformed
      expect(m.wrongDimension + m.badVectorShape).toBe(2)
      // missingVector = zero: the two bad rows rank as rows without a vector (similarity null), never as a failure
      const zero = await runRecall(s, 'q', denseConfig({ missingVector: 'zero', candidatePool: 100 }), NOW, { queryVector: qv })
      for (const id of ['nan-vec', 'short-vec']) expect(zero.candidates.find((c) => c.id === id)?.similarity ?? null).toBeNull()
    } finally {
      s.close()
    }
  })
})

describe('class-22 data exceptions are BAD_INPUT', () => {
  it('U+0000 in a search or a recall query (SQLSTATE 22021) → BAD_INPUT, and the source answers after', async () => {
    const s = openStore({ path: url('schema=dims'), workspacePath: ws('nul') })
    try {
      expect(codeOf(() => s.memoriesPage({ search: 'cof\u0000fee' }))).toBe('BAD_INPUT')
      let code = 'none'
      try {
        await runRecall(s, 'coffee\u0000', denseConfig({ mode: 'lexical' }), NOW)
      } catch (e) {
        code = (e as RecallscopeError).code
      }
      expect(code).toBe('BAD_INPUT')
      expect(s.memoriesPage({ search: 'coffee' }).total).toBeGreaterThan(0)
    } finally {
      s.close()
    }
  })
})

/** A stand-in for Electron's safeStorage: reversible, and never the plain text. */
function fakeKeychain(): SecretBox & { decrypted: number } {
  const box = {
    decrypted: 0,
    encrypt: (plain: string) => Buffer.from(`enc:${Buffer.from(plain).toString('hex').split('').reverse().join('')}`),
    decrypt: (cipher: Buffer) => {
      box.decrypted++
      return Buffer.from(cipher.toString().slice(4).split('').reverse().join(''), 'hex').toString()
    },
  }
  return box
}

describe('a password in any form never shows and is never kept in plain text', () => {
  it('?password= (browser mode): not in the path, app.info, the recent list, settings.json or an error', () => {
    const home = path.join(t.dir, 'browser-home')
    const app = new App({ mode: 'browser', dataDir: home })
    try {
      const withParam = srv.url.replace(':secret-pw@', '@') + '&password=qp-secret-77&schema=dims'
      const info = app.open(withParam)
      expect(info.path).not.toContain('qp-secret-77')
      expect(JSON.stringify(app.openInfo())).not.toContain('qp-secret-77')
      expect(JSON.stringify(app.recent())).not.toContain('qp-secret-77')
      const settings = fs.readFileSync(path.join(home, 'settings.json'), 'utf8')
      expect(settings).not.toContain('qp-secret-77')
      expect(settings).not.toContain('"secret"') // browser mode: no keychain, nothing kept
      // an error: the fake server refuses the credentials; neither form of the password is echoed
      const e = (() => {
        try {
          openStore({ path: `postgres://u@127.0.0.1:${srv.fakeAuthPort}/db?sslmode=disable&password=qp-secret-77`, workspacePath: ws('auth') })
        } catch (err) {
          return err as RecallscopeError
        }
        return null
      })()
      expect(e?.code).toBe('AUTH_FAILED')
      expect(e?.message).not.toContain('qp-secret-77')
    } finally {
      app.close()
    }
  })

  it('desktop app: the recent entry keeps only the ciphertext; reopening the shown URL decrypts it', () => {
    const home = path.join(t.dir, 'desktop-home')
    const box = fakeKeychain()
    const app = new App({ mode: 'electron', dataDir: home, secrets: box })
    try {
      const info = app.open(url('schema=dims'))
      expect(info.path).not.toContain('secret-pw')
      const settings = fs.readFileSync(path.join(home, 'settings.json'), 'utf8')
      expect(settings).not.toContain('secret-pw')
      const kept = (JSON.parse(settings) as { recent: { path: string; secret?: string }[] }).recent[0]
      expect(kept.secret).toBeTruthy()
      expect(box.decrypt(Buffer.from(kept.secret!, 'base64'))).toBe('secret-pw')
      expect(JSON.stringify(app.recent())).not.toContain(kept.secret!) // the renderer never gets the ciphertext
      const before = box.decrypted
      expect(app.open(app.recent()[0].path).memories).toBe(N + 1)
      expect(box.decrypted).toBe(before + 1)
    } finally {
      app.close()
    }
  })
})
