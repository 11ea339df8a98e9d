import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../../shared/result'
import { isPostgresUrl, parsePgUrl, passfilePasswords, redactUrl, scrubSecrets } from './url'

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

describe('every password form is a secret (issue 21)', () => {
  it('?password= is the password, never shown, and redactUrl hides it too', () => {
    const p = parsePgUrl('postgres://me@h:5432/db?password=qp-s3cret&sslmode=disable&schema=s')
    expect(p.password).toBe('qp-s3cret')
    expect(p.redacted).not.toContain('qp-s3cret')
    expect(p.redacted).toBe('postgres://me@h:5432/db?sslmode=disable&schema=s')
    expect(p.secrets).toContain('qp-s3cret')
    expect(redactUrl('postgres://me@h/db?sslmode=disable&password=qp-s3cret')).not.toContain('qp-s3cret')
    // malformed (a bad port): the fallback regex still hides both forms
    const bad = redactUrl('postgres://u:ui-pw@h:xx/db?password=qp-pw&x=1')
    expect(bad).not.toContain('ui-pw')
    expect(bad).not.toContain('qp-pw')
  })

  it('PGPASSWORD and the passfile (passfile=, PGPASSFILE) are secrets too; escapes are read as libpq does', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-pgpass-'))
    const saved = { pw: process.env.PGPASSWORD, file: process.env.PGPASSFILE }
    try {
      const pass = path.join(dir, 'pgpass')
      fs.writeFileSync(pass, '# comment\nh:5432:db:me:file-pw\n*:*:*:other:a\\:b\\\\c\nshort:line\n')
      process.env.PGPASSWORD = 'env-pw'
      process.env.PGPASSFILE = pass
      const p = parsePgUrl('postgres://me@h/db')
      expect(p.password).toBeNull()
      expect(p.secrets.sort()).toEqual(['a:b\\c', 'env-pw', 'file-pw'].sort())
      // passfile= in the URL wins over PGPASSFILE
      const other = path.join(dir, 'other')
      fs.writeFileSync(other, 'h:5432:db:me:url-file-pw\n')
      expect(parsePgUrl(`postgres://me@h/db?passfile=${encodeURIComponent(other)}`).secrets).toContain('url-file-pw')
      expect(scrubSecrets('auth failed for env-pw and file-pw', p.secrets)).toBe('auth failed for *** and ***')
      // not a regular file (a FIFO could hang a read): no secrets from it, no hang
      process.env.PGPASSFILE = dir
      expect(passfilePasswords()).toEqual([])
    } finally {
      if (saved.pw === undefined) delete process.env.PGPASSWORD
      else process.env.PGPASSWORD = saved.pw
      if (saved.file === undefined) delete process.env.PGPASSFILE
      else process.env.PGPASSFILE = saved.file
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
