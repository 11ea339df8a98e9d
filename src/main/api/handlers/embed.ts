/**
 * Handlers for the embedder status indicator, the model picker and the
 * embedder settings (spec, Ollama host, OpenAI-compatible base URL).
 */
import type { EmbedModels, EmbedStatus, SettingsView } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import { isUnlabelledModel } from '../../recall/models'
import type { App, Settings } from '../app'
import type { Handlers } from '../register'
import { createEmbedder, DEFAULT_EMBEDDER_SPEC, EMBEDDERS, parseEmbedderSpec, type EmbedderOptions } from '../../embed/index'
import { resolveOllamaHost } from '../../embed/ollama'
import { resolveOpenAiBaseUrl } from '../../embed/openaiCompat'
import { createChatModel, parseChatSpec, type ChatModel } from '../../chat/chat'

type EmbedChannels = 'embed.status' | 'embed.models' | 'settings.get' | 'settings.set'

/** Server options from the settings, with an explicit `host` applied to the kind that uses it. */
function serverOptions(s: Settings, kind: string, host: string | undefined, timeoutMs: number): EmbedderOptions {
  const o: EmbedderOptions = { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl, timeoutMs }
  if (host !== undefined) {
    if (kind === 'openai') o.openaiBaseUrl = host
    else o.ollamaHost = host
  }
  return o
}

function settingsView(s: Settings, env: Record<string, string | undefined> = process.env): SettingsView {
  const safe = (f: () => string, fallback: string) => {
    try {
      return f()
    } catch {
      return fallback // a bad environment variable is shown, never fatal
    }
  }
  return {
    embedder: s.embedder ?? DEFAULT_EMBEDDER_SPEC,
    ollamaHost: s.ollamaHost ?? null,
    openaiBaseUrl: s.openaiBaseUrl ?? null,
    effective: {
      ollamaHost: safe(() => resolveOllamaHost(s.ollamaHost, env), `invalid OLLAMA_HOST: ${env.OLLAMA_HOST}`),
      openaiBaseUrl: safe(() => resolveOpenAiBaseUrl(s.openaiBaseUrl, env), `invalid OPENAI_BASE_URL: ${env.OPENAI_BASE_URL}`),
    },
    env: {
      OLLAMA_HOST: env.OLLAMA_HOST ?? null,
      OPENAI_BASE_URL: env.OPENAI_BASE_URL ?? null,
      openaiApiKeySet: !!(env.RECALLSCOPE_OPENAI_API_KEY || env.OPENAI_API_KEY),
      RECALLSCOPE_CHAT_MODEL: env.RECALLSCOPE_CHAT_MODEL ?? null,
    },
    chatModel: s.chatModel ?? null,
    chat: safeChat(s, env),
  }
}

/** The chat model the counterfactual would use, and its server; null when none is configured (or it is malformed in the environment). */
function safeChat(s: Settings, env: Record<string, string | undefined>): SettingsView['chat'] {
  try {
    const c = chatFromSettings(s, {}, env)
    return c ? { spec: c.spec, host: c.host } : null
  } catch {
    return null
  }
}

/**
 * The configured chat model (saved setting, else $RECALLSCOPE_CHAT_MODEL) with the embedder's
 * server settings (Ollama host / OpenAI-compatible base URL, else the environment); null = none.
 */
export function chatFromSettings(s: Settings, opts: { timeoutMs?: number } = {}, env: Record<string, string | undefined> = process.env): ChatModel | null {
  const spec = s.chatModel ?? (env.RECALLSCOPE_CHAT_MODEL?.trim() || null)
  if (!spec) return null
  return createChatModel(spec, { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl, timeoutMs: opts.timeoutMs, env })
}

export function embedHandlers(app: App): Pick<Handlers, EmbedChannels> {
  return {
    'embed.status': async (i): Promise<EmbedStatus> => {
      const s = app.settings()
      const spec = parseEmbedderSpec(i.embedder ?? s.embedder ?? DEFAULT_EMBEDDER_SPEC)
      const e = createEmbedder(spec.spec, serverOptions(s, spec.kind, i.host, i.timeoutMs))
      const health = await e.health({ probeDim: i.probeDim })
      const state: EmbedStatus['state'] = !e.enabled
        ? 'off'
        : e.name === 'hashing'
          ? 'lexical'
          : health.reachable && health.modelAvailable && !health.errorCode
            ? 'ok'
            : 'unavailable'
      const warnings: string[] = []
      let storedVectors: number | null = null
      let storedDim: number | null = null
      const store = app.current
      if (store && e.enabled && e.model) {
        // Backfilled (workspace) vectors count: dense recall merges them with the agent's.
        const models = store.vectorModels().filter((m) => m.ownerType === 'memory')
        const mine = models.find((m) => m.model === e.model)
        storedVectors = mine ? mine.count + (mine.backfilled ?? 0) : 0
        storedDim = mine?.dim ?? null
        // Vectors whose store records no model (`<source>:<dim>`): any embedder of that length is compared with them.
        const unlabelled = mine ? [] : models.filter((m) => isUnlabelledModel(m.model))
        const fits = unlabelled.find((m) => m.dim === health.dim)
        if (fits) {
          storedVectors = fits.count + (fits.backfilled ?? 0)
          storedDim = fits.dim
        } else if (unlabelled.length)
          warnings.push(
            health.dim !== null
              ? `Query embedder gives ${health.dim}-d, stored vectors are ${unlabelled.map((m) => `${m.dim}-d (${m.model})`).join(', ')}: dense arm off.`
              : `The stored vectors record no model (${unlabelled.map((m) => `${m.model}, ${m.dim}-d`).join('; ')}): pick an embedder that gives ${unlabelled[0].dim}-d vectors, or the dense arm is off.`,
          )
        else if (!mine)
          warnings.push(
            `The open DB has no memory vectors under "${e.model}": the dense arm will find nothing.` +
              (models.length ? ` It has: ${models.map((m) => `${m.model} (${m.count})`).join(', ')}.` : ' Backfill embeddings first.'),
          )
        else if (health.dim !== null && storedDim !== null && storedDim !== health.dim)
          warnings.push(`Dimension mismatch: ${e.model} gives ${health.dim}-d vectors but the DB stores ${storedDim}-d ones.`)
      }
      return { spec: spec.spec, name: e.name, model: e.model, enabled: e.enabled, state, health, storedVectors, storedDim, warnings }
    },

    'embed.models': async (i): Promise<EmbedModels> => {
      const s = app.settings()
      const kinds = EMBEDDERS.map((f) => ({ kind: f.kind, usage: f.usage, description: f.description, needsModel: f.needsModel }))
      let kind = i.kind?.toLowerCase()
      if (!kind) {
        const saved = s.embedder ? parseEmbedderSpec(s.embedder).kind : null
        kind = saved && EMBEDDERS.find((f) => f.kind === saved)?.needsModel ? saved : 'ollama'
      }
      const factory = EMBEDDERS.find((f) => f.kind === kind)
      if (!factory) throw new RecallscopeError('BAD_INPUT', `Unknown embedder kind "${kind}". Kinds: ${kinds.map((k) => k.kind).join(', ')}`)
      // The model name does not matter for listing; any placeholder builds the client.
      const e = factory.create(factory.needsModel ? '-' : null, serverOptions(s, kind, i.host, i.timeoutMs))
      const host = (e as { host?: string; baseUrl?: string }).host ?? (e as { baseUrl?: string }).baseUrl ?? null
      if (!e.listModels) {
        const h = await e.health()
        return {
          kinds,
          kind,
          host,
          reachable: h.reachable,
          models: h.models.map((name) => ({ name, dim: h.dim, embedding: true, family: null, sizeBytes: null })),
          error: null,
          errorCode: null,
        }
      }
      try {
        const models = await e.listModels()
        return {
          kinds,
          kind,
          host,
          reachable: true,
          models: models.map(({ name, dim, embedding, family, sizeBytes }) => ({ name, dim, embedding, family, sizeBytes })),
          error: null,
          errorCode: null,
        }
      } catch (err) {
        if (!(err instanceof RecallscopeError) || err.code !== 'EMBEDDER_UNAVAILABLE') throw err
        const code = (err.details as { errorCode?: string } | undefined)?.errorCode ?? 'UNKNOWN'
        return { kinds, kind, host, reachable: code.startsWith('HTTP_'), models: [], error: err.message, errorCode: code }
      }
    },

    'settings.get': () => settingsView(app.settings()),

    'settings.set': (i): SettingsView => {
      const patch: Partial<Settings> = {}
      // Checked against the registry here (the contract cannot see it) and saved canonically.
      if (i.embedder !== undefined) patch.embedder = parseEmbedderSpec(i.embedder).spec
      if (i.ollamaHost !== undefined) patch.ollamaHost = i.ollamaHost === null ? undefined : resolveOllamaHost(i.ollamaHost, {})
      if (i.openaiBaseUrl !== undefined) patch.openaiBaseUrl = i.openaiBaseUrl === null ? undefined : resolveOpenAiBaseUrl(i.openaiBaseUrl, {})
      if (i.chatModel !== undefined) patch.chatModel = i.chatModel === null ? undefined : parseChatSpec(i.chatModel).spec
      return settingsView(app.saveSettings(patch))
    },
  }
}
