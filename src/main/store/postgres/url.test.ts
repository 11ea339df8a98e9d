import { describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../../shared/result'
import { isPostgresUrl, parsePgUrl, redactUrl } from './url'

describe('Postgres URLs', () => {
  it('recognises postgres:// and postgresql:// only', () => {
    expect(isPostgresUrl('postgres://h/db')).toBe(true)
    expect(isPostgresUrl('POSTGRESQL://h/db')).toBe(true)
    expect(isPostgresUrl('/tmp/postgres.db')).toBe(false)
    expect(isPostgresUrl('mysql://h/db')).toBe(false)
  })

  it('takes our parameters off, keeps libpq ones, and hides the password', () => {
    const p = parsePgUrl('postgres://me:s3cr%40t@db.example:6543/agents?sslmode=require&schema=mem&ann=hnsw&ef_search=64&statement_timeout_ms=5000')
    expect(p.password).toBe('s3cr@t')
    expect(p.connectionString).toBe('postgres://me:s3cr%40t@db.example:6543/agents?sslmode=require')
    expect(p.redacted).toBe('postgres://me@db.example:6543/agents?sslmode=require&schema=mem&ann=hnsw&ef_search=64&statement_timeout_ms=5000')
    expect(p.options).toEqual({ schema: 'mem', ann: 'hnsw', efSearch: 64, probes: null, statementTimeoutMs: 5000 })
    expect(p.identity).toBe('db.example:6543/agents#mem')
  })

  it('rejects bad parameters with BAD_INPUT, without echoing the password', () => {
    for (const u of ['postgres://u:pw1@h/db?ann=lsh', 'postgres://u:pw1@h/db?ef_search=-3']) {
      let err: unknown = null
      try {
        parsePgUrl(u)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(RecallscopeError)
      expect((err as RecallscopeError).code).toBe('BAD_INPUT')
      expect((err as Error).message).not.toContain('pw1')
    }
  })

  it('redacts even a URL it cannot parse', () => {
    expect(redactUrl('postgres://u:hunter2@h/db')).toBe('postgres://u:***@h/db')
    expect(redactUrl('postgres://u:hun ter2@h:xx/db')).not.toContain('hun ter2')
    expect(redactUrl('/plain/file.db')).toBe('/plain/file.db')
  })
})
