/**
 * Trust round 3, finding "code execution": opening a Letta Code memory folder runs `git log` on the
 * folder's own `.git`. A hostile `.git/config` names programs (gpg.program behind
 * log.showSignature, core.fsmonitor, diff.external, a textconv driver, core.pager, hooks); none of
 * them may run. Each program is a script that writes a marker file; the test proves the planted
 * config is live for a plain git, then that recallscope's open writes no marker.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from '../../src/main/store/registry'
import { sanitizeGitEnv } from '../../src/main/store/frameworks/letta/code'
import { buildLettaCodeMemory, git, hasGit } from '../helpers/frameworks/letta'
import { tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

/** A script that appends its name to `markers/<name>` when run (and prints what gpg would). */
function plantScript(dir: string, name: string, markers: string): string {
  const p = path.join(dir, `${name}.sh`)
  fs.writeFileSync(p, `#!/bin/sh\necho ran >> '${path.join(markers, name)}'\ncat >/dev/null 2>&1\nexit 0\n`, { mode: 0o755 })
  return p
}

/** Rewrite HEAD as a commit that carries a (fake) gpgsig header, so log.showSignature has something to verify. */
function signHead(root: string) {
  const body = git(root, ['cat-file', 'commit', 'HEAD'])
  const [head, ...rest] = body.split('\n\n')
  const sig = 'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----'
  const signed = `${head}\n${sig}\n\n${rest.join('\n\n')}`
  const file = path.join(root, '..', 'signed-commit.txt')
  fs.writeFileSync(file, signed)
  const id = git(root, ['hash-object', '-t', 'commit', '-w', file]).trim()
  fs.rmSync(file)
  git(root, ['update-ref', 'HEAD', id])
}

describe.skipIf(!hasGit())('git runs with no config from the folder', () => {
  it('planted showSignature+gpg.program, fsmonitor, external diff, textconv, pager and hooks: no program runs', () => {
    const root = buildLettaCodeMemory(path.join(t.dir, 'home'), 'agent-hostile', [
      { at: 1_700_000_000, message: 'init', files: [{ path: 'system/persona.md', description: 'Who', body: 'I am careful.' }] },
      { at: 1_700_100_000, message: 'more', files: [{ path: 'system/persona.md', description: 'Who', body: 'I am very careful.' }] },
    ])
    signHead(root)
    const markers = path.join(t.dir, 'markers')
    const scripts = path.join(t.dir, 'scripts')
    fs.mkdirSync(markers)
    fs.mkdirSync(scripts)
    const hooks = path.join(t.dir, 'hooks')
    fs.mkdirSync(hooks)
    for (const h of ['post-checkout', 'pre-auto-gc', 'reference-transaction', 'post-index-change'])
      fs.copyFileSync(plantScript(scripts, `hook-${h}`, markers), path.join(hooks, h))
    fs.chmodSync(hooks, 0o755)
    for (const f of fs.readdirSync(hooks)) fs.chmodSync(path.join(hooks, f), 0o755)
    fs.appendFileSync(
      path.join(root, '.git', 'config'),
      [
        '[log]',
        '\tshowSignature = true',
        '[gpg]',
        `\tprogram = ${plantScript(scripts, 'gpg', markers)}`,
        '[core]',
        `\tfsmonitor = ${plantScript(scripts, 'fsmonitor', markers)}`,
        `\tpager = ${plantScript(scripts, 'pager', markers)}`,
        `\thooksPath = ${hooks}`,
        '[diff]',
        `\texternal = ${plantScript(scripts, 'extdiff', markers)}`,
        '[diff "hostile"]',
        `\ttextconv = ${plantScript(scripts, 'textconv', markers)}`,
        '',
      ].join('\n'),
    )
    fs.writeFileSync(path.join(root, '.gitattributes'), '*.md diff=hostile\n')

    // The planted config is live: a plain `git log` runs the folder's gpg program, `git log -p` its
    // textconv driver, `git diff` its external diff.
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
    spawnSync('git', ['log', '--format=%H'], { cwd: root, env })
    spawnSync('git', ['log', '-p', '-1'], { cwd: root, env })
    spawnSync('git', ['diff', 'HEAD~1', 'HEAD'], { cwd: root, env })
    const live = fs.readdirSync(markers).sort()
    expect(live).toEqual(expect.arrayContaining(['extdiff', 'gpg', 'textconv']))
    for (const m of live) fs.rmSync(path.join(markers, m))

    // Hostile git variables in recallscope's own environment are dropped as well.
    const saved = { ...process.env }
    process.env.GIT_EXTERNAL_DIFF = plantScript(scripts, 'envdiff', markers)
    process.env.GIT_CONFIG_PARAMETERS = `'log.showsignature'='true'`
    process.env.GIT_PAGER = plantScript(scripts, 'envpager', markers)
    try {
      const store = openSource({ path: root, workspacePath: path.join(t.dir, 'hostile.ws') })
      try {
        const m = store.getMemory('system/persona.md')!
        // the history is still read: two commits, newest first
        expect((m.metadata as { timeline: { subject: string }[] }).timeline.map((e) => e.subject)).toEqual(['more', 'init'])
      } finally {
        store.close()
      }
    } finally {
      for (const k of ['GIT_EXTERNAL_DIFF', 'GIT_CONFIG_PARAMETERS', 'GIT_PAGER']) delete process.env[k]
      Object.assign(process.env, saved)
    }
    expect(fs.readdirSync(markers)).toEqual([])
  })

  it('the git environment keeps no GIT_* variable of the parent and reads no system or global config', () => {
    const env = sanitizeGitEnv({ PATH: '/usr/bin', HOME: '/home/me', GIT_DIR: '/elsewhere', GIT_CONFIG_COUNT: '1', GIT_SSH_COMMAND: 'x' })
    expect(env.PATH).toBe('/usr/bin')
    expect(env.GIT_DIR).toBeUndefined()
    expect(env.GIT_CONFIG_COUNT).toBeUndefined()
    expect(env.GIT_SSH_COMMAND).toBeUndefined()
    expect(env.HOME).not.toBe('/home/me')
    expect(env).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_OPTIONAL_LOCKS: '0' })
  })
})
