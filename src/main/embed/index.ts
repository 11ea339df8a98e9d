/**
 * Embedders by spec string — `hashing` | `none` | `ollama:MODEL` | `openai:MODEL`
 * — the form the CLI's `--embedder`, the settings file and the `embed.*`
 * channels share. Built-ins are registered in EMBEDDERS, the same list a third
 * party extends with `registerEmbedder` (docs/internals/style.md "Extension points").
 */
import { RecallscopeError } from '../../shared/result'
import { HashingEmbedder, NoneEmbedder } from './hashingEmbedder'
import { OllamaEmbedder } from './ollama'
import { OpenAiCompatEmbedder } from './openaiCompat'
import type { Embedder } from './types'

export type { Embedder } from './types'

export interface EmbedderOptions {
  /** Ollama address in any OLLAMA_HOST form. @default $OLLAMA_HOST, else http://127.0.0.1:11434 */
  ollamaHost?: string
  /** OpenAI-compatible base URL. @default $OPENAI_BASE_URL, else http://127.0.0.1:1234/v1 (LM Studio) */
  openaiBaseUrl?: string
  /** Bearer token for the OpenAI-compatible server. @default $RECALLSCOPE_OPENAI_API_KEY, else $OPENAI_API_KEY */
  openaiApiKey?: string
  /** Deadline per HTTP request, ms. @default 5000 (seed 002: Engram's) */
  timeoutMs?: number
  /** Ollama: legacy /api/embeddings, one prompt per call (the Engram preset, for parity). @default false */
  legacy?: boolean
  /** Environment for the defaults above. @default process.env */
  env?: Record<string, string | undefined>
}

/** One embedder kind. */
export interface EmbedderFactory {
  /** The part before the colon: `ollama` in `ollama:nomic-embed-text`. Lower case. */
  kind: string
  /** How it is written, for help and error messages: `ollama:MODEL`. */
  usage: string
  /** One line for pickers and `--help`. */
  description: string
  /** Whether the spec needs `:MODEL`. */
  needsModel: boolean
  /** Other spellings of the kind (e.g. the hashing model name). */
  aliases?: string[]
  create(model: string | null, opts: EmbedderOptions): Embedder
}

/** The registry. Order is the order shown to users. */
export const EMBEDDERS: EmbedderFactory[] = [
  {
    kind: 'hashing',
    usage: 'hashing',
    description: 'offline and deterministic; lexical-level similarity (what the demo DB uses)',
    needsModel: false,
    aliases: ['hashing-256'],
    create: () => new HashingEmbedder(),
  },
  {
    kind: 'none',
    usage: 'none',
    description: 'no embedder: the dense arm is off',
    needsModel: false,
    create: () => new NoneEmbedder(),
  },
  {
    kind: 'ollama',
    usage: 'ollama:MODEL',
    description: 'an Ollama server (OLLAMA_HOST), e.g. ollama:nomic-embed-text',
    needsModel: true,
    create: (model, o) => new OllamaEmbedder({ model: model!, host: o.ollamaHost, timeoutMs: o.timeoutMs, legacy: o.legacy, env: o.env }),
  },
  {
    kind: 'openai',
    usage: 'openai:MODEL',
    description: 'any OpenAI-compatible /v1/embeddings server (LM Studio, llama.cpp, vLLM, OpenAI)',
    needsModel: true,
    create: (model, o) => new OpenAiCompatEmbedder({ model: model!, baseUrl: o.openaiBaseUrl, apiKey: o.openaiApiKey, timeoutMs: o.timeoutMs, env: o.env }),
  },
]

/** Add an embedder kind (a plugin). A kind or alias that is already taken is a BAD_INPUT error. */
export function registerEmbedder(f: EmbedderFactory): void {
  const names = [f.kind, ...(f.aliases ?? [])].map((n) => n.toLowerCase())
  if (names.some((n) => !/^[a-z][a-z0-9_-]*$/.test(n)))
    throw new RecallscopeError('BAD_INPUT', `Embedder kind "${f.kind}" must be lower-case letters, digits, - or _`)
  const taken = names.find((n) => findFactory(n))
  if (taken) throw new RecallscopeError('BAD_INPUT', `An embedder named "${taken}" is already registered`)
  EMBEDDERS.push({ ...f, kind: f.kind.toLowerCase() })
}

function findFactory(kind: string): EmbedderFactory | undefined {
  return EMBEDDERS.find((f) => f.kind === kind || (f.aliases ?? []).some((a) => a.toLowerCase() === kind))
}

/** `hashing | none | ollama:MODEL | openai:MODEL` (whatever is registered). */
export function embedderUsage(): string {
  return EMBEDDERS.map((f) => f.usage).join(' | ')
}

export interface EmbedderSpec {
  kind: string
  model: string | null
  /** The spec written canonically: `ollama:nomic-embed-text`. */
  spec: string
}

/** Parse `kind[:model]`. The model is everything after the first colon, so `ollama:qwen3-embedding:0.6b` works. */
export function parseEmbedderSpec(spec: string): EmbedderSpec {
  const valid = EMBEDDERS.map((f) => f.usage)
  const fail = (why: string) =>
    new RecallscopeError('BAD_INPUT', `${why}. Valid embedders: ${valid.join(' | ')} (e.g. ollama:nomic-embed-text)`, { spec, valid })
  if (typeof spec !== 'string' || spec.trim() === '') throw fail('No embedder given')
  const s = spec.trim()
  if (s.length > 300) throw fail('Embedder spec is too long')
  const colon = s.indexOf(':')
  const kind = (colon === -1 ? s : s.slice(0, colon)).trim().toLowerCase()
  const model = colon === -1 ? null : s.slice(colon + 1).trim()
  const f = findFactory(kind)
  if (!f) throw fail(`Unknown embedder "${kind}"`)
  if (f.needsModel) {
    if (!model) throw fail(`"${f.kind}" needs a model: ${f.usage}`)
    if (/[\s\p{Cc}]/u.test(model)) throw fail(`Model name "${model}" contains whitespace or control characters`)
    return { kind: f.kind, model, spec: `${f.kind}:${model}` }
  }
  if (model !== null) throw fail(`"${f.kind}" takes no model`)
  return { kind: f.kind, model: null, spec: f.kind }
}

/** Build the embedder a spec names. Bad specs and bad hosts are BAD_INPUT errors; nothing touches the network here. */
export function createEmbedder(spec: string, opts: EmbedderOptions = {}): Embedder {
  const p = parseEmbedderSpec(spec)
  return findFactory(p.kind)!.create(p.model, opts)
}

/** What App.settings() keeps about embedding. */
export interface EmbedderSettings {
  embedder?: string
  ollamaHost?: string
  openaiBaseUrl?: string
}

/** The spec used when the settings name none. */
export const DEFAULT_EMBEDDER_SPEC = 'hashing'

/** The embedder the settings describe; `override` (e.g. `--embedder`) wins over the saved spec. */
export function embedderFromSettings(s: EmbedderSettings, override?: { spec?: string } & EmbedderOptions): Embedder {
  const { spec, ...rest } = override ?? {}
  return createEmbedder(spec ?? s.embedder ?? DEFAULT_EMBEDDER_SPEC, {
    ollamaHost: s.ollamaHost,
    openaiBaseUrl: s.openaiBaseUrl,
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
  })
}
