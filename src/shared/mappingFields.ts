/**
 * The mapping format's closed lists (time units, vector encodings, the canonical fields), apart from its zod
 * schema in mapping.ts: the Library's mapping dialog needs only these, and importing them from here keeps zod
 * (and building the schema) out of the chunks the first screen loads (docs/guide/workbench.md, "First paint and
 * bundle sizes").
 */
/** How a time column is stored. Absent: guessed per value (text → ISO, numbers below 1e11 → seconds, else ms). */
export const TIME_UNITS = ['iso', 'unix_s', 'unix_ms'] as const
export type TimeUnit = (typeof TIME_UNITS)[number]

/**
 * How the vector column is stored: `f32` little-endian float32 BLOB (Postgres: bytea), `json` a JSON text
 * array, `vec0` a sqlite-vec `vec0` column, `pgvector` a Postgres `vector(d)` or `real[]` column.
 */
export const VECTOR_ENCODINGS = ['f32', 'json', 'vec0', 'pgvector'] as const
export type VectorEncoding = (typeof VECTOR_ENCODINGS)[number]

/** The canonical fields a column can be mapped to, in the order the dialog shows them. */
export const MAPPED_FIELDS = ['id', 'content', 'created', 'lastUsed', 'role', 'kind', 'tier', 'session', 'user', 'agent', 'salience'] as const
export type MappedField = (typeof MAPPED_FIELDS)[number]
