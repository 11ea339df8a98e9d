import { describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../shared/result'
import { createEmbedder, EMBEDDERS, embedderFromSettings, embedderUsage, parseEmbedderSpec, registerEmbedder } from './index'
import { OllamaEmbedder } from './ollama'
import { OpenAiCompatEmbedder } from './openaiCompat'
import { hashEmbed } from './hashing'
import type { Embedder } from './types'

function badInput(fn: () => unknown): RecallscopeError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    expect((e as RecallscopeError).code).toBe('BAD_INPUT')
    return e as RecallscopeError
  }
  throw new Error('expected BAD_INPUT')
}

describe('parseEmbedderSpec', () => {
  it('reads every documented form', () => {
    expect(parseEmbedderSpec('hashing')).toEqual({ kind: 'hashing', model: null, spec: 'hashing' })
    expect(parseEmbedderSpec(' none ')).toEqual({ kind: 'none', model: null, spec: 'none' })
    expect(parseEmbedderSpec('ollama:nomic-embed-text')).toEqual({ kind: 'ollama', model: 'nomic-embed-text', spec: 'ollama:nomic-embed-text' })
    // The model keeps its own colon (tags).
    expect(parseEmbedderSpec('Ollama:qwen3-embedding:0.6b')).toEqual({ kind: 'ollama', model: 'qwen3-embedding:0.6b', spec: 'ollama:qwen3-embedding:0.6b' })
    expect(parseEmbedderSpec('openai:text-embedding-3-small').model).toBe('text-embedding-3-small')
    expect(parseEmbedderSpec('hashing-256').kind).toBe('hashing')
  })

  it('bad specs are BAD_INPUT errors that list the valid forms', () => {
    for (const bad of ['', '   ', 'bert', 'ollama', 'ollama:', 'openai: ', 'hashing:foo', 'ollama:two words']) {
      const e = badInput(() => parseEmbedderSpec(bad))
      expect(e.message, bad).toContain('hashing | none | ollama:MODEL | openai:MODEL')
    }
    expect(badInput(() => parseEmbedderSpec('ollama')).message).toMatch(/needs a model/)
    expect(badInput(() => parseEmbedderSpec(42 as unknown as string)).message).toMatch(/No embedder/)
  })
})

describe('createEmbedder', () => {
  it('builds each built-in with its options, touching no network', () => {
    const o = createEmbedder('ollama:nomic-embed-text', { ollamaHost: '0.0.0.0:9999', timeoutMs: 1234, legacy: true, env: {} })
    expect(o).toBeInstanceOf(OllamaEmbedder)
    expect(o).toMatchObject({ name: 'ollama', model: 'nomic-embed-text', host: 'http://127.0.0.1:9999', timeoutMs: 1234, legacy: true, enabled: true })
    const a = createEmbedder('openai:bge-m3', { openaiBaseUrl: 'http://127.0.0.1:8080', env: {} })
    expect(a).toBeInstanceOf(OpenAiCompatEmbedder)
    expect(a).toMatchObject({ name: 'openai', model: 'bge-m3', baseUrl: 'http://127.0.0.1:8080/v1' })
    expect(createEmbedder('none')).toMatchObject({ name: 'none', model: null, enabled: false })
    // Ollama's default timeout is Engram's 5 s (seed 002).
    expect(createEmbedder('ollama:x', { env: {} })).toMatchObject({ timeoutMs: 5000, host: 'http://127.0.0.1:11434' })
  })

  it('a bad host is BAD_INPUT at creation, not a network error later', () => {
    badInput(() => createEmbedder('ollama:x', { ollamaHost: 'ftp://h' }))
    badInput(() => createEmbedder('openai:x', { openaiBaseUrl: 'nope' }))
  })

  it('settings pick the embedder; an explicit spec wins; the default is hashing', () => {
    expect(embedderFromSettings({}).name).toBe('hashing')
    const s = { embedder: 'ollama:nomic-embed-text', ollamaHost: 'http://10.1.1.1:11434' }
    expect(embedderFromSettings(s)).toMatchObject({ name: 'ollama', host: 'http://10.1.1.1:11434' })
    expect(embedderFromSettings(s, { spec: 'none' }).name).toBe('none')
    expect(embedderFromSettings(s, { timeoutMs: 250 })).toMatchObject({ timeoutMs: 250, host: 'http://10.1.1.1:11434' })
  })
})

describe('hashing and none', () => {
  it('hashing embeds with the offline hasher and says it is lexical-level', async () => {
    const h = createEmbedder('hashing')
    const [v] = await h.embed(['deploy rollback'])
    expect([...v]).toEqual([...hashEmbed('deploy rollback')])
    expect(v.length).toBe(256)
    const health = await h.health()
    expect(health).toMatchObject({ reachable: true, modelAvailable: true, dim: 256, models: ['hashing-256'], error: null, errorCode: null })
    expect(health.note).toMatch(/lexical-level/)
    expect(h.model).toBe('hashing-256')
  })

  it('none: dense arm off; embed refuses, health is not an error', async () => {
    const n = createEmbedder('none')
    await expect(n.embed(['x'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE' })
    const h = await n.health()
    expect(h).toMatchObject({ error: null, errorCode: null, modelAvailable: false })
    expect(h.note).toMatch(/dense arm is off/)
  })
})

describe('the registry is the extension point', () => {
  it('a third-party embedder registers through the same list and is created by spec', async () => {
    const before = EMBEDDERS.length
    const made: Embedder = {
      name: 'const',
      model: 'const-3',
      enabled: true,
      embed: async (texts) => texts.map(() => new Float32Array([1, 0, 0])),
      health: async () => ({ reachable: true, modelAvailable: true, dim: 3, models: ['const-3'], error: null, errorCode: null }),
    }
    registerEmbedder({ kind: 'const', usage: 'const:MODEL', description: 'test', needsModel: true, create: () => made })
    try {
      expect(createEmbedder('const:any')).toBe(made)
      expect(embedderUsage()).toContain('const:MODEL')
      badInput(() => registerEmbedder({ kind: 'ollama', usage: 'ollama', description: 'dup', needsModel: false, create: () => made }))
    } finally {
      EMBEDDERS.splice(before)
    }
    badInput(() => parseEmbedderSpec('const:any'))
  })
})
