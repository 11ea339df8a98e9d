/**
 * A chat model for the opt-in counterfactual (issue 20 point 5): regenerate an
 * agent's decision from its query and a context block. Two wire protocols, the
 * same servers the embedders reach (same host settings and environment):
 *
 * - `ollama:MODEL` — POST {OLLAMA_HOST}/api/chat {model, messages, stream: false,
 *   options: {temperature: 0, seed, num_predict}} → {message: {content}, prompt_eval_count, eval_count}
 * - `openai:MODEL` — POST {OPENAI_BASE_URL}/chat/completions {model, messages,
 *   temperature: 0, seed, max_tokens} → {choices: [{message: {content}}], usage}
 *
 * Temperature 0 and a fixed seed so the only thing that changes between the
 * leave-one-out calls is the context. Every call has its own deadline; failures
 * are RecallscopeError('CHAT_UNAVAILABLE') with a stable `errorCode` in details
 * (ECONNREFUSED, TIMEOUT, MODEL_NOT_FOUND, HTTP_<status>, BAD_RESPONSE…).
 */
import { RecallscopeError } from '../../shared/result'
import { checkTimeout, DeadlineError, fetchJson, innermostMessage, networkCode, withDeadline } from '../embed/net'
import { resolveOllamaHost } from '../embed/ollama'
import { errorText, resolveOpenAiBaseUrl } from '../embed/openaiCompat'

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface ChatAnswer {
  text: string
  ms: number
  promptTokens: number | null
  completionTokens: number | null
}

export interface ChatModel {
  /** `ollama:MODEL` | `openai:MODEL` */
  readonly spec: string
  readonly kind: 'ollama' | 'openai'
  readonly model: string
  /** the server: Ollama host, or the OpenAI-compatible base URL */
  readonly host: string
  complete(messages: ChatMessage[], opts?: { signal?: AbortSignal }): Promise<ChatAnswer>
}

export interface ChatOptions {
  /** @default $OLLAMA_HOST, else http://127.0.0.1:11434 */
  ollamaHost?: string
  /** @default $OPENAI_BASE_URL, else http://127.0.0.1:1234/v1 */
  openaiBaseUrl?: string
  /** @default $RECALLSCOPE_OPENAI_API_KEY, else $OPENAI_API_KEY */
  openaiApiKey?: string
  /** Deadline per call, ms. @default 60000 (a CPU-only server writes slowly) */
  timeoutMs?: number
  /** Longest answer, in tokens (num_predict / max_tokens). @default 256 */
  maxTokens?: number
  /** Sampling seed. @default 1 */
  seed?: number
  /** @default process.env */
  env?: Record<string, string | undefined>
}

/** Parse `ollama:MODEL` | `openai:MODEL` (the model is everything after the first colon). */
export function parseChatSpec(spec: string): { kind: 'ollama' | 'openai'; model: string; spec: string } {
  const s = typeof spec === 'string' ? spec.trim() : ''
  const colon = s.indexOf(':')
  const kind = (colon === -1 ? s : s.slice(0, colon)).toLowerCase()
  const model = colon === -1 ? '' : s.slice(colon + 1).trim()
  if ((kind !== 'ollama' && kind !== 'openai') || model === '' || /[\s\p{Cc}]/u.test(model) || s.length > 300)
    throw new RecallscopeError('BAD_INPUT', `Bad chat model "${s}": use ollama:MODEL (e.g. ollama:llama3.2) or openai:MODEL (any OpenAI-compatible server)`, {
      spec: s,
    })
  return { kind, model, spec: `${kind}:${model}` }
}

/** Build the chat model a spec names. Bad specs and hosts are BAD_INPUT; nothing touches the network here. */
export function createChatModel(spec: string, opts: ChatOptions = {}): ChatModel {
  const p = parseChatSpec(spec)
  const env = opts.env ?? process.env
  const timeoutMs = checkTimeout(opts.timeoutMs ?? 60_000)
  const maxTokens = Math.max(1, Math.floor(opts.maxTokens ?? 256))
  const seed = opts.seed ?? 1
  const host = p.kind === 'ollama' ? resolveOllamaHost(opts.ollamaHost, env) : resolveOpenAiBaseUrl(opts.openaiBaseUrl, env)
  const apiKey = opts.openaiApiKey ?? env.RECALLSCOPE_OPENAI_API_KEY ?? env.OPENAI_API_KEY ?? null
  const server = p.kind === 'ollama' ? `Ollama at ${host}` : `The OpenAI-compatible server at ${host}`
  const fail = (errorCode: string, message: string) => new RecallscopeError('CHAT_UNAVAILABLE', message, { errorCode, host, model: p.model })

  const describe = (e: unknown): RecallscopeError => {
    if (e instanceof RecallscopeError) return e
    if (e instanceof DeadlineError) return fail('TIMEOUT', `${server} did not answer the chat request within ${e.timeoutMs} ms (timeout).`)
    const code = networkCode(e)
    if (code === 'ECONNREFUSED') return fail('ECONNREFUSED', `${server} is not reachable (connection refused).`)
    if (code === 'ETIMEDOUT') return fail('TIMEOUT', `${server} did not answer the chat request (network timeout).`)
    if (code) return fail(code, `${server} could not be reached (${code}): ${innermostMessage(e)}`)
    return fail('UNKNOWN', `${server} failed on the chat request: ${innermostMessage(e)}`)
  }

  async function post(path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    return withDeadline(timeoutMs, signal, async (s) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' }
      if (p.kind === 'openai' && apiKey) headers.Authorization = `Bearer ${apiKey}`
      const { res, text, json } = await fetchJson(`${host}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: s })
      if (!res.ok) {
        const { said } = errorText(json, text.trim().slice(0, 300) || `HTTP ${res.status}`)
        if (res.status === 404 && /model/i.test(said)) throw fail('MODEL_NOT_FOUND', `${server} has no model "${p.model}": ${said}`)
        throw fail(`HTTP_${res.status}`, `${server} answered the chat request with HTTP ${res.status}: ${said}`)
      }
      if (json === undefined) throw fail('BAD_RESPONSE', `${server} sent a chat answer that is not JSON`)
      return json
    })
  }

  return {
    spec: p.spec,
    kind: p.kind,
    model: p.model,
    host,
    async complete(messages, o = {}) {
      const t0 = performance.now()
      let json: unknown
      try {
        json =
          p.kind === 'ollama'
            ? await post('/api/chat', { model: p.model, messages, stream: false, options: { temperature: 0, seed, num_predict: maxTokens } }, o.signal)
            : await post('/chat/completions', { model: p.model, messages, temperature: 0, seed, max_tokens: maxTokens }, o.signal)
      } catch (e) {
        if (e instanceof RecallscopeError && e.code === 'CANCELLED') throw e
        throw describe(e)
      }
      const ms = performance.now() - t0
      if (p.kind === 'ollama') {
        const j = json as { message?: { content?: unknown }; prompt_eval_count?: unknown; eval_count?: unknown }
        if (typeof j?.message?.content !== 'string') throw fail('BAD_RESPONSE', `${server} sent a chat answer without message.content`)
        return { text: j.message.content, ms, promptTokens: numOrNull(j.prompt_eval_count), completionTokens: numOrNull(j.eval_count) }
      }
      const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } }
      const content = j?.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw fail('BAD_RESPONSE', `${server} sent a chat answer without choices[0].message.content`)
      return { text: content, ms, promptTokens: numOrNull(j.usage?.prompt_tokens), completionTokens: numOrNull(j.usage?.completion_tokens) }
    },
  }
}

function numOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null
}
