/**
 * The canonical schema's column names (docs/internals/design.md "Data", a public format): the
 * one list every layout (SQLite, Postgres) and the framework importer map onto.
 */
export const MEMORY_COLUMNS = [
  'id',
  'agent_id',
  'user_id',
  'session_id',
  'role',
  'kind',
  'tier',
  'content',
  'summary',
  'salience',
  'created_at',
  'last_used_at',
  'use_count',
  'turn',
  'source',
  'metadata',
] as const
export const SESSION_COLUMNS = ['id', 'agent_id', 'user_id', 'tenant_id', 'started_at', 'ended_at', 'summary', 'is_archived'] as const
export const EVENT_COLUMNS = ['id', 'at', 'agent_id', 'user_id', 'session_id', 'turn', 'query', 'cue', 'preset', 'config', 'results'] as const
