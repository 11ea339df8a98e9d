/**
 * Messages between the blocking bridge (bridge.ts, main side) and the worker
 * that owns the `pg.Pool`s (pgWorker.ts). Plain data only (and a bridge's own
 * port, transferred once): they cross a MessagePort by structured clone.
 */
import type { MessagePort } from 'node:worker_threads'

/** How the worker connects; the password travels here only, never in a message back. */
export interface WorkerConfig {
  /** libpq-style URL without our own query parameters (pg parses sslmode, host, port…) */
  connectionString: string | null
  /** ms; SET statement_timeout on every session */
  statementTimeoutMs: number
  /** ms; giving up on a connection attempt */
  connectTimeoutMs: number
  /** pool size */
  max: number
  /** SET default_transaction_read_only = on on every session (false only in write mode) */
  readOnly: boolean
  applicationName: string
}

/** One statement; `$1…` parameters. */
export interface Statement {
  sql: string
  params?: unknown[]
  /** this statement's rows come back (default: the last statement's) */
  result?: boolean
}

/** A bridge asks the shared worker for a pool of its own: requests come on `port`, each reply bumps `signal`'s counter. */
export interface PoolOpen {
  config: WorkerConfig
  port: MessagePort
  signal: SharedArrayBuffer
}

export interface Request {
  id: number
  /** Statements run in order on one pooled client (per-query SETs then the query); the last one's rows come back. */
  batch: Statement[]
  /** 'array' returns each row as an array (big id lists clone faster) */
  rowMode?: 'array'
  /** close the pool and its port */
  close?: boolean
}

export interface WireError {
  /** SQLSTATE (e.g. 28P01, 57014, 3D000) or a Node error code (ECONNREFUSED, ENOTFOUND…) */
  code: string | null
  message: string
}

export type Reply = { id: number; ok: true; rows: unknown[]; fields: string[] } | { id: number; ok: false; error: WireError }
