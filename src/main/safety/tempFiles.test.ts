import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { registerTempsOf, removeTemps } from './tempFiles'

let dir = ''
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function touch(...names: string[]): void {
  for (const n of names) fs.writeFileSync(path.join(dir, n), 'x')
}

describe('temp files written by a worker thread for an output', () => {
  it('are removed by the main thread: this process’s temps of that output and their side files, nothing else', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-temps-'))
    const pid = process.pid
    const ours = [`out.db.tmp-${pid}-17`, `out.db.tmp-${pid}-17-journal`, `out.db.tmp-${pid}-17-wal`, `out.db.recallscope.tmp-${pid}-18`]
    const theirs = ['out.db', 'out.db.bak', `out.db.tmp-${pid + 1}-17`, `other.db.tmp-${pid}-17`, `out.db.tmp-${pid}-17-journal.txt`]
    touch(...ours, ...theirs)
    registerTempsOf(path.join(dir, 'out.db'))
    removeTemps()
    expect(fs.readdirSync(dir).sort()).toEqual([...theirs].sort())
  })

  it('once released (the import finished), nothing is removed', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-temps-'))
    touch(`out.db.tmp-${process.pid}-17`)
    registerTempsOf(path.join(dir, 'out.db'))()
    removeTemps()
    expect(fs.readdirSync(dir)).toEqual([`out.db.tmp-${process.pid}-17`])
  })
})
