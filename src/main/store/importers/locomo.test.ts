import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { hashEmbed, HASHING_MODEL } from '../../embed/hashing'
import { openSource } from '../registry'
import { importLocomo, normalizeDiaId, parseEvidence, parseLocomoDate, splitOf } from './locomo'

let t: ReturnType<typeof tmpDir>
beforeAll(() => (t = tmpDir()))
afterAll(() => t.cleanup())

const MIN = 60_000
const DAY = 86_400_000

describe('LoCoMo quirks: parsing pieces', () => {
  it('reads "h:mm am/pm on D Month, YYYY" as UTC', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe(Date.UTC(2023, 4, 8, 13, 56))
    expect(parseLocomoDate('10:37 am on 27 June, 2023')).toBe(Date.UTC(2023, 5, 27, 10, 37))
    expect(parseLocomoDate('12:05 am on 1 January, 2024')).toBe(Date.UTC(2024, 0, 1, 0, 5))
    expect(parseLocomoDate('12:30 pm on 3 Sept, 2023')).toBe(Date.UTC(2023, 8, 3, 12, 30))
    expect(parseLocomoDate('31 June 2023')).toBeNull()
    expect(parseLocomoDate('1:00 pm on 31 June, 2023')).toBeNull()
    expect(parseLocomoDate(20230508)).toBeNull()
  })

  it('repairs the malformed evidence ids the data README lists, and rejects "D"', () => {
    expect(parseEvidence('D8:6; D9:17')).toEqual({ ids: ['D8:6', 'D9:17'], split: true, repaired: [], bad: [] })
    expect(parseEvidence('D:11:26')).toEqual({ ids: ['D11:26'], split: false, repaired: [{ from: 'D:11:26', to: 'D11:26' }], bad: [] })
    expect(parseEvidence('D30:05')).toEqual({ ids: ['D30:5'], split: false, repaired: [{ from: 'D30:05', to: 'D30:5' }], bad: [] })
    expect(parseEvidence('D')).toEqual({ ids: [], split: false, repaired: [], bad: ['D'] })
    expect(parseEvidence(17).bad).toEqual(['17'])
    expect(normalizeDiaId('D1:3')).toBe('D1:3')
  })

  it('splits cases about half and half, the same way every time', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `conv-${i % 7}#${i}`)
    const train = ids.filter((id) => splitOf(id) === 'train').length
    expect(train).toBeGreaterThan(900)
    expect(train).toBeLessThan(1100)
    expect(ids.map(splitOf)).toEqual(ids.map(splitOf))
  })
})

/** A two-conversation LoCoMo file carrying every quirk in ../shared/data/README.md, and a few more. */
function quirkyLocomo() {
  const convA = {
    sample_id: 'conv-a',
    conversation: {
      speaker_a: 'Ann',
      speaker_b: 'Bob',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ann', dia_id: 'D1:1', text: 'I adopted a puppy yesterday.' },
        { speaker: 'Bob', dia_id: 'D1:2', text: 'Look at this!', img_url: ['http://x/y.jpg'], blip_caption: 'a photo of a red kayak', query: 'kayak' },
        { speaker: 'Ann', dia_id: 'D1:3', text: 'Lovely.' },
      ],
      session_2_date_time: '9:00 am on 20 May, 2023',
      session_2: [
        { speaker: 'Bob', dia_id: 'D2:1', text: 'How is the puppy?' },
        { speaker: 'Carl', dia_id: 'D2:2', text: 'Hi, I am a stranger.' },
        { speaker: 'Ann', dia_id: 'D2:03', text: 'Growing fast.' },
      ],
      // Quirk: a date key with no session list.
      session_3_date_time: '4:10 pm on 26 October, 2023',
      // A list whose date is missing: placed after the previous session.
      session_10: [{ speaker: 'Ann', dia_id: 'D10:1', text: 'Back after a long break.' }],
    },
    session_summary: { session_1_summary: 'Ann adopted a puppy; Bob shared a kayak photo.', session_2_summary: 'They talked about the puppy.' },
    observation: { session_1_observation: { Ann: [['Ann adopted a puppy.', 'D1:1']] } },
    qa: [
      { question: 'When did Ann adopt a puppy?', answer: '7 May 2023', evidence: ['D1:1'], category: 2 },
      // Quirk: a numeric answer.
      { question: 'How many kayaks?', answer: 1, evidence: ['D1:2'], category: 4 },
      // Quirk: empty evidence.
      { question: 'Would Ann like cats?', answer: 'Likely', evidence: [], category: 3 },
      // Quirk: adversarial_answer instead of answer.
      { question: 'What did Bob adopt?', adversarial_answer: 'A puppy', evidence: ['D1:1'], category: 5 },
      // Quirks: two ids in one string, "D:1:3", "D2:03" style zero padding, a bare "D", and an id that names no turn.
      { question: 'What happened over both sessions?', answer: 'puppy', evidence: ['D1:1; D2:1', 'D:1:3', 'D2:03', 'D', 'D9:9'], category: 1 },
      { answer: 'no question here', evidence: [] },
    ],
  }
  const convB = {
    sample_id: 'conv-b',
    conversation: {
      speaker_a: 'Cy',
      speaker_b: 'Di',
      session_1_date_time: '8:00 pm on 1 March, 2024',
      session_1: [
        { speaker: 'Cy', dia_id: 'D1:1', text: 'Hello Di.' },
        { speaker: 'Di', dia_id: 'D1:1', text: 'A duplicate dia_id.' },
        { speaker: 'Di', text: 'No dia id at all.' },
      ],
    },
    session_summary: {},
    qa: [{ question: 'Who said hello?', answer: 'Cy', evidence: ['D1:1'], category: 4 }],
  }
  return [convA, convB]
}

describe('LoCoMo quirks: import of a generated file', () => {
  it('turns, sessions, dates, roles and eval cases survive every quirk, and each is reported', async () => {
    const input = path.join(t.dir, 'quirky.json')
    fs.writeFileSync(input, JSON.stringify(quirkyLocomo()))
    const out = path.join(t.dir, 'quirky.db')
    const r = await importLocomo({ input, output: out, now: Date.UTC(2025, 0, 1) })
    // 9 turns (7 + 2) in 4 sessions; vectors for the 9 turns and the 2 sessions that have a summary.
    expect(r.written).toEqual({ memories: 7 + 2, sessions: 3 + 1, embeddings: 9 + 2, evalCases: 5 + 1 })
    expect(r.workspace).toBe(`${out}.recallscope`)
    const reasons = Object.fromEntries(r.reasons.map((x) => [`${x.action}:${x.reason}`, x.count]))
    expect(reasons).toEqual({
      'skipped:date without a session list': 1,
      'repaired:session date missing or unparseable (placed 1 h after the previous session)': 1,
      'repaired:speaker is neither speaker_a nor speaker_b (role cleared)': 1,
      'repaired:turn dia_id normalised': 1,
      'repaired:several evidence ids in one string (split)': 1,
      'repaired:malformed evidence id (normalised)': 2,
      'skipped:malformed evidence id': 1,
      'skipped:evidence id names no turn': 1,
      'skipped:QA item without a question': 1,
      'skipped:duplicate dia_id (first kept)': 1,
      'repaired:turn without a valid dia_id (numbered by position)': 1,
    })
    expect(r.issues.find((i) => i.reason === 'malformed evidence id')).toMatchObject({ qa: 'conv-a#4', evidence: 'D' })
    expect(r.issues.find((i) => i.reason === 'date without a session list')).toMatchObject({ id: 'conv-a', session: 'session_3' })

    const s = openSource({ path: out })
    try {
      const m = s.getMemories(['conv-a:D1:1', 'conv-a:D1:2', 'conv-a:D2:2', 'conv-a:D2:3', 'conv-a:D10:1', 'conv-b:D1:3'])
      const s1 = Date.UTC(2023, 4, 8, 13, 56)
      expect(m.get('conv-a:D1:1')).toMatchObject({
        agentId: 'conv-a',
        userId: 'conv-a:Ann',
        sessionId: 'conv-a:session_1',
        role: 'user',
        createdAt: s1,
        turn: 1,
        content: 'Ann: I adopted a puppy yesterday.',
        metadata: { dia_id: 'D1:1', observations: ['Ann adopted a puppy.'] },
      })
      // The image is described in the text (the paper's retrieval unit), its URL kept in metadata.
      expect(m.get('conv-a:D1:2')).toMatchObject({
        role: 'assistant',
        createdAt: s1 + MIN,
        content: 'Bob: Look at this! [shares a photo of a red kayak]',
        metadata: { img_url: ['http://x/y.jpg'], blip_caption: 'a photo of a red kayak', img_query: 'kayak' },
      })
      expect(m.get('conv-a:D2:2')).toMatchObject({ role: null, userId: 'conv-a:Carl' })
      expect(m.get('conv-a:D2:3')!.createdAt).toBe(Date.UTC(2023, 4, 20, 9, 0) + 2 * MIN)
      // session_10 has no date: one hour after the last turn of session_2.
      expect(m.get('conv-a:D10:1')!.createdAt).toBe(Date.UTC(2023, 4, 20, 9, 0) + 2 * MIN + 60 * MIN)
      expect(m.get('conv-b:D1:3')!.content).toBe('Di: No dia id at all.')
      expect(s.getSession('conv-a:session_1')).toMatchObject({
        agentId: 'conv-a',
        userId: 'conv-a:Ann',
        startedAt: s1,
        endedAt: s1 + 2 * MIN,
        summary: 'Ann adopted a puppy; Bob shared a kayak photo.',
        memoryCount: 3,
      })
      expect(s.getSession('conv-a:session_3')).toBeNull()
      const sv = s.vectors(HASHING_MODEL, 'session')
      expect(sv.count).toBe(2)
      const expected = hashEmbed('Ann adopted a puppy; Bob shared a kayak photo.')
      sv.get('conv-a:session_1')!.forEach((x, i) => expect(x).toBeCloseTo(expected[i], 6))
      expect(s.facts().counts.evalCases).toBe(6)
    } finally {
      s.close()
    }

    const ws = new Database(`${out}.recallscope`, { readonly: true })
    try {
      const cases = new Map(
        (ws.prepare(`SELECT * FROM eval_cases`).all() as Record<string, unknown>[]).map((c) => [
          c.id as string,
          { ...c, scope: JSON.parse(c.scope as string), relevant: JSON.parse(c.relevant as string), tags: JSON.parse(c.tags as string) },
        ]),
      )
      expect([...cases.keys()].sort()).toEqual(['conv-a#0', 'conv-a#1', 'conv-a#2', 'conv-a#3', 'conv-a#4', 'conv-b#0'])
      const endA = Date.UTC(2023, 4, 20, 9, 0) + 2 * MIN + 60 * MIN
      expect(cases.get('conv-a#0')).toMatchObject({
        name: 'When did Ann adopt a puppy?',
        query: 'When did Ann adopt a puppy?',
        cue: null,
        scope: { agentId: 'conv-a' },
        now: endA + DAY,
        relevant: [{ id: 'conv-a:D1:1', grade: 1 }],
        expect_empty: 0,
        tags: ['category:2', 'conv:conv-a', 'temporal'],
        split: splitOf('conv-a#0'),
      })
      expect(cases.get('conv-a#2')).toMatchObject({ relevant: [], tags: ['category:3', 'conv:conv-a', 'open-domain', 'no-evidence'] })
      expect(cases.get('conv-a#3')!.tags).toEqual(['category:5', 'conv:conv-a', 'adversarial'])
      expect(cases.get('conv-a#4')!.relevant).toEqual(['conv-a:D1:1', 'conv-a:D2:1', 'conv-a:D1:3', 'conv-a:D2:3'].map((id) => ({ id, grade: 1 })))
      const notes = new Map(
        (ws.prepare(`SELECT owner_id, text FROM notes WHERE owner_type = 'eval_case'`).all() as { owner_id: string; text: string }[]).map((n) => [
          n.owner_id,
          n.text,
        ]),
      )
      expect(notes.get('conv-a#1')).toBe('Answer: 1')
      expect(notes.get('conv-a#3')).toBe('Adversarial answer: A puppy')
    } finally {
      ws.close()
    }
  })

  it('--embed none writes no vectors; bad JSON and non-LoCoMo JSON are typed errors with no output', async () => {
    const input = path.join(t.dir, 'q2.json')
    fs.writeFileSync(input, JSON.stringify(quirkyLocomo()))
    const r = await importLocomo({ input, output: path.join(t.dir, 'q2.db'), embed: 'none' })
    expect(r.written.embeddings).toBe(0)
    const bad = path.join(t.dir, 'bad.json')
    fs.writeFileSync(bad, '[{"sample_id": ')
    await expect(importLocomo({ input: bad, output: path.join(t.dir, 'bad.db') })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    const notLocomo = path.join(t.dir, 'other.json')
    fs.writeFileSync(notLocomo, JSON.stringify({ hello: 'world' }))
    await expect(importLocomo({ input: notLocomo, output: path.join(t.dir, 'other.db') })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    const noTurns = path.join(t.dir, 'empty.json')
    fs.writeFileSync(noTurns, JSON.stringify([{ sample_id: 'x', conversation: { speaker_a: 'A', speaker_b: 'B' }, qa: [] }]))
    await expect(importLocomo({ input: noTurns, output: path.join(t.dir, 'empty.db') })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    expect(fs.readdirSync(t.dir).filter((x) => /^(bad|other|empty)\.db/.test(x))).toEqual([])
  })
})
