/**
 * Letta Code memory folder → in-memory canonical DB, read-only.
 *
 * Layout read from letta-ai/letta-code @ 1f4d3e3ea3537763f36b633e52b289bdb0667c5b:
 * src/agent/memory-filesystem.ts (`~/.letta/agents/<agent-id>/memory/`, with `system/` whose
 * files are compiled into the system prompt) and src/agent/memory-git-hooks.ts (each memory is
 * a markdown file opening with a frontmatter block: `description` (required), `read_only`,
 * legacy `limit`; skills live in `skills/<name>/SKILL.md`; the folder is a git repository and
 * every edit is a commit).
 *
 * Canonical mapping: each `.md` file is a memory — relative path → id · body (after the
 * frontmatter) → content · description → summary · files under `system/` → tier 'working' with
 * metadata.pinned = true (always in context), others 'long_term' · `skills/` → kind
 * 'procedural', others 'semantic' · the agent id from the path → agent_id · metadata =
 * { path, pinned, description, read_only, limit, timeline, updated_at }.
 * With `git` on PATH and the folder a repository: created_at = the file's first commit,
 * metadata.timeline = its commits (newest first: commit, at, author, subject), read with
 * `git log` only (GIT_OPTIONAL_LOCKS=0: nothing in .git is touched), with no system, global or
 * folder config that can run a program (gitSafetyArgs, sanitizeGitEnv; docs/guide/safety.md). Without git: created_at =
 * the file's mtime and no timeline.
 * Not shown: files that are not markdown; the content of earlier versions (the timeline lists
 * the commits, `git show` has the text).
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { MemoryDbBuilder, type Materialized, type Materializer } from '../materialize'
import { readRegularFile } from '../../safeFiles'

const isDir = (p: string) => {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The memory folder for a path: the folder itself (it has `system/`), or `<agent folder>/memory`. */
function findLettaMemoryRoot(p: string): string | null {
  if (!isDir(p)) return null
  if (isDir(path.join(p, 'system')) && !fs.existsSync(path.join(p, 'memory.db'))) return p
  if (isDir(path.join(p, 'memory', 'system'))) return path.join(p, 'memory')
  return null
}

interface Frontmatter {
  fields: Record<string, string>
  body: string
}

/** The frontmatter block Letta Code's pre-commit hook validates (`---` … `---`), flat `key: value` lines. */
function parseFrontmatter(text: string): Frontmatter {
  const lines = text.split(/\r?\n/)
  if (lines[0] !== '---') return { fields: {}, body: text }
  const end = lines.indexOf('---', 1)
  if (end < 0) return { fields: {}, body: text }
  const fields: Record<string, string> = {}
  for (const l of lines.slice(1, end)) {
    const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(l)
    if (m) fields[m[1]] = m[2].trim().replace(/^(["'])(.*)\1$/, '$2')
  }
  return { fields, body: lines.slice(end + 1).join('\n') }
}

function walkMarkdown(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && e.name.toLowerCase().endsWith('.md')) out.push(p)
    }
  }
  walk(root)
  return out.sort()
}

/** A hostile folder must not stall the open: `git log` gets this long, then is killed. */
const GIT_TIMEOUT_MS = 20_000

/**
 * `-c` overrides that beat the folder's own `.git/config` (command-line config wins over every
 * file): the folder is someone else's, and several keys make git run a program it names
 * (`gpg.program` via `log.showSignature`, `core.fsmonitor`, `diff.external`, textconv drivers,
 * `core.pager`, hooks). Each is switched off here; `safe.directory` names only this folder.
 */
function gitSafetyArgs(root: string): string[] {
  const overrides = [
    'log.showSignature=false',
    'gpg.program=false',
    'gpg.ssh.program=false',
    'gpg.x509.program=false',
    'core.fsmonitor=false',
    'core.hooksPath=/dev/null',
    'core.pager=cat',
    'core.askPass=',
    'credential.helper=',
    'diff.external=',
    'protocol.allow=never',
    `safe.directory=${path.resolve(root)}`,
  ]
  return ['--no-pager', '--no-replace-objects', ...overrides.flatMap((o) => ['-c', o])]
}

/** Flags of `git log` that keep it from calling out: no external diff, no textconv, no signatures. */
const GIT_LOG_SAFE_FLAGS = ['--no-ext-diff', '--no-textconv', '--no-show-signature']

/**
 * The environment for git: the parent's without any GIT_* variable (GIT_DIR, GIT_CONFIG_*,
 * GIT_EXTERNAL_DIFF… would redirect it), no system or global config, HOME pointed at an empty
 * place so `~/.gitconfig` is not read, and nothing in .git is locked or written.
 */
export function sanitizeGitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('GIT_') && k !== 'HOME' && k !== 'XDG_CONFIG_HOME' && k !== 'EDITOR' && k !== 'PAGER') out[k] = v
  return {
    ...out,
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
  }
}

export interface TimelineEntry {
  commit: string
  /** epoch ms */
  at: number
  author: string
  subject: string
}

/**
 * Per file (path relative to `root`, posix), its commits newest first, from one `git log`.
 * null with the reason when git is missing or the folder is not a repository.
 */
function readGitTimeline(root: string): { byPath: Map<string, TimelineEntry[]> } | { error: string } {
  const r = spawnSync(
    'git',
    [...gitSafetyArgs(root), 'log', ...GIT_LOG_SAFE_FLAGS, '--format=%x1e%H%x1f%at%x1f%an%x1f%s', '--name-only', '--relative', '--no-renames', '--', '.'],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      timeout: GIT_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      env: sanitizeGitEnv(process.env),
    },
  )
  if (r.error) return { error: `git not available (${r.error.message})` }
  if (r.status !== 0) return { error: `git log failed: ${(r.stderr || '').trim().split('\n')[0]}` }
  const byPath = new Map<string, TimelineEntry[]>()
  for (const rec of r.stdout.split('\x1e')) {
    if (!rec.trim()) continue
    const [head, ...files] = rec.split('\n')
    const [commit, at, author, subject] = head.split('\x1f')
    const entry = { commit, at: Number(at) * 1000, author, subject }
    for (const f of files) {
      const rel = f.trim()
      if (!rel) continue
      const list = byPath.get(rel) ?? []
      list.push(entry)
      byPath.set(rel, list)
    }
  }
  return { byPath }
}

export const lettaCodeMaterializer: Materializer = {
  name: 'letta-code',
  lookedFor: 'Letta Code: a memory folder of markdown files (system/ …)',
  sniff: (p) => findLettaMemoryRoot(p) !== null,
  materialize(p, opts): Materialized {
    const root = findLettaMemoryRoot(p)
    if (!root) throw new RecallscopeError('NOT_FOUND', `${p} is not a Letta Code memory folder (looked for system/ or memory/system/)`)
    const parts = path.resolve(root).split(path.sep)
    const agentId = parts.length >= 3 && parts[parts.length - 1] === 'memory' && parts[parts.length - 3] === 'agents' ? parts[parts.length - 2] : null
    const files = walkMarkdown(root)
    const git = readGitTimeline(root)
    const b = new MemoryDbBuilder(opts?.nativeBinding)
    b.batch(() => {
      for (const f of files) {
        const rel = path.relative(root, f).split(path.sep).join('/')
        const { fields, body } = parseFrontmatter(readRegularFile(f, 'memory file').toString('utf8'))
        const timeline = 'byPath' in git ? (git.byPath.get(rel) ?? []) : null
        const mtime = fs.statSync(f).mtimeMs
        const created = timeline && timeline.length ? timeline[timeline.length - 1].at : Math.round(mtime)
        const pinned = rel.startsWith('system/')
        b.memory({
          id: rel,
          agent_id: agentId,
          kind: rel.startsWith('skills/') ? 'procedural' : 'semantic',
          tier: pinned ? 'working' : 'long_term',
          content: body.trim(),
          summary: fields.description ?? null,
          created_at: created,
          source: 'letta-code',
          metadata: JSON.stringify({
            path: rel,
            pinned,
            description: fields.description ?? null,
            read_only: fields.read_only === 'true',
            ...(fields.limit !== undefined ? { limit: Number(fields.limit) } : {}),
            updated_at: timeline && timeline.length ? timeline[0].at : Math.round(mtime),
            timeline,
          }),
        })
      }
    })
    const how = 'byPath' in git ? 'git history as each file’s timeline' : `no timeline: ${git.error}`
    const ftsKey = b.fingerprint()
    return {
      db: b.done(),
      ftsKey,
      layout: 'letta-code',
      detectedBecause: `folder with system/ and ${files.length} markdown memory file(s): Letta Code memory${agentId ? ` of agent ${agentId}` : ''} (${how})`,
    }
  },
}
