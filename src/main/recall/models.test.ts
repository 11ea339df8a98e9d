import { describe, expect, it } from 'vitest'
import { isUnlabelledModel } from './models'

describe('isUnlabelledModel', () => {
  it('knows the labels recallscope makes for stores that record no model', () => {
    for (const m of [
      'mem0:1536',
      'crewai:3072',
      'langgraph:768:title',
      'llamaindex:384',
      'qdrant:mem0:4',
      'qdrant:docs:text:4',
      'chroma:knowledge:384',
      'lancedb:notes:768',
      'mastra:memory_messages',
    ])
      expect(isUnlabelledModel(m), m).toBe(true)
  })
  it('leaves real model names and the hashing embedder alone', () => {
    for (const m of ['nomic-embed-text', 'nomic-embed-text:latest', 'text-embedding-3-small', 'hashing-256', 'hashing:256', 'all-minilm:l6-v2'])
      expect(isUnlabelledModel(m), m).toBe(false)
  })
})
