/**
 * Named recall configs in the workspace (`recall_configs`): the whole config as
 * JSON under a unique name, with the preset it was built over and a note.
 * Saving a taken name is a CONFLICT unless the caller says to replace it.
 */
import type Database from 'better-sqlite3'
import { recallConfigSchema } from '../../../shared/config'
import { RecallscopeError } from '../../../shared/result'
import type { SavedConfig } from '../../../shared/savedConfigs'
import type { RecallConfig } from '../../../shared/types'
import { parseJsonSafe } from '../../safety/json'
import { runWriteTransaction } from '../sqlite/connection'

interface ConfigRowDb {
  name: string
  preset: string | null
  config: string
  note: string | null
  created_at: number
  updated_at: number
}

function toSaved(r: ConfigRowDb): SavedConfig {
  const parsed = parseJsonSafe(r.config)
  const cfg = parsed.ok ? recallConfigSchema.safeParse(parsed.value) : null
  // A row written by hand (or by an older build) that no longer validates is reported, not served half-read.
  if (!cfg?.success) throw new RecallscopeError('BAD_INPUT', `Saved config '${r.name}' is not a valid recall config; delete it and save it again`)
  return { name: r.name, preset: r.preset, config: cfg.data, note: r.note ?? '', createdAt: r.created_at, updatedAt: r.updated_at }
}

/** Save a config under a name. A taken name: CONFLICT, or replaced (keeping its creation time) with `replace`. */
export function saveConfig(
  ws: Database.Database,
  entry: { name: string; preset: string | null; config: RecallConfig; note: string; replace: boolean },
  now: number,
): SavedConfig {
  return runWriteTransaction(ws, () => {
    const old = ws.prepare(`SELECT created_at FROM recall_configs WHERE name = ?`).pluck().get(entry.name) as number | undefined
    if (old !== undefined && !entry.replace)
      throw new RecallscopeError('CONFLICT', `A config named '${entry.name}' exists; choose another name or replace it`, { name: entry.name })
    const createdAt = old ?? now
    ws.prepare(`INSERT OR REPLACE INTO recall_configs (name, preset, config, note, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`).run(
      entry.name,
      entry.preset,
      JSON.stringify(entry.config),
      entry.note,
      createdAt,
      now,
    )
    return { name: entry.name, preset: entry.preset, config: entry.config, note: entry.note, createdAt, updatedAt: now }
  })
}

/** Saved configs, most recently saved first (rows that no longer validate are left out). */
export function listConfigs(ws: Database.Database, limit: number): { configs: SavedConfig[]; unreadable: string[] } {
  const rows = ws.prepare(`SELECT * FROM recall_configs ORDER BY updated_at DESC, name ASC LIMIT ?`).all(limit) as ConfigRowDb[]
  const configs: SavedConfig[] = []
  const unreadable: string[] = []
  for (const r of rows) {
    try {
      configs.push(toSaved(r))
    } catch {
      unreadable.push(r.name)
    }
  }
  return { configs, unreadable }
}

/** One saved config by name. NOT_FOUND when absent. */
export function getConfig(ws: Database.Database, name: string): SavedConfig {
  const r = ws.prepare(`SELECT * FROM recall_configs WHERE name = ?`).get(name) as ConfigRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No saved config named '${name}'`, { name })
  return toSaved(r)
}

/** Delete saved configs by name; returns how many existed. */
export function deleteConfigs(ws: Database.Database, names: readonly string[]): number {
  let n = 0
  runWriteTransaction(ws, () => {
    const del = ws.prepare(`DELETE FROM recall_configs WHERE name = ?`)
    for (const name of names) n += del.run(name).changes
  })
  return n
}
