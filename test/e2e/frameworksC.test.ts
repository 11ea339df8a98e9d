/**
 * Stores opened since issue 23, in browser mode as a person opens them: a Qdrant local folder (mem0
 * Python's default store, real pickles written by python3) served with `--db`, browsed, recalled
 * lexically, its facts read in the Library; the folder hashed before and after.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { buildQdrantLocal, hasPython } from '../helpers/frameworks/qdrantLocal'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt() && hasPython()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium, a built renderer (npm run build) and python3 (the Qdrant fixture is real pickles)')

const unit = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]
const POINTS = [
  { id: 'a1b2c3d4-0000-4000-8000-000000000001', data: 'Alice is vegetarian and avoids mushrooms', user: 'alice', at: '2025-05-01T10:00:00-07:00', s: 0.9 },
  {
    id: 'a1b2c3d4-0000-4000-8000-000000000002',
    data: 'Alice is training for the Lisbon half marathon',
    user: 'alice',
    at: '2025-05-03T09:30:00-07:00',
    s: 0.6,
  },
  { id: 'a1b2c3d4-0000-4000-8000-000000000003', data: 'Bob prefers window seats on long flights', user: 'bob', at: '2025-05-04T18:00:00-07:00', s: 0.3 },
]

describe.skipIf(!ready)('issue-23 stores in the browser', () => {
  describe('Qdrant local folder (mem0 Python)', () => {
    let t: ReturnType<typeof tmpDir>
    let folder = ''
    let before: Record<string, string> = {}
    let srv: Served
    beforeAll(async () => {
      t = tmpDir()
      folder = path.join(t.dir, 'qdrant')
      buildQdrantLocal(
        folder,
        {
          mem0: {
            vectors: { size: 4, distance: 'Cosine' },
            points: POINTS.map((p) => ({ id: p.id, vector: unit(p.s), payload: { data: p.data, hash: p.id.slice(-4), user_id: p.user, created_at: p.at } })),
          },
        },
        path.join(t.dir, 'never'),
      )
      before = hashTree(folder)
      // the folder, as a user opens /tmp/qdrant (the workspace goes beside it, not into it)
      srv = await serve(['--db', folder])
    })
    afterAll(async () => {
      await srv?.stop()
      t?.cleanup()
    })

    it('browses the points, recalls one by a word, reads the facts; the folder is unchanged', async () => {
      const b = await openBrowser(srv.url)
      const { page } = b
      try {
        const table = page.getByRole('table', { name: 'Memories' })
        await table.locator('tbody tr[data-id]').first().waitFor()
        await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(/\b3 rows\b/)
        await expect.poll(() => table.textContent()).toMatch(/vegetarian/)
        await shot(page, 'stores-qdrant-memories')

        await page.getByRole('link', { name: 'Recall', exact: true }).click()
        await page.getByLabel('Query (the raw utterance)').fill('marathon')
        await page.getByLabel('Mode').selectOption('lexical')
        // the similarity weight moved to lexical with the mode (a lexical recall scoring nothing would drop everything)
        await expect.poll(() => page.getByRole('slider', { name: 'Lexical', exact: true }).inputValue()).toBe('0.6')
        await expect.poll(() => page.locator('.result[data-gate="kept"]').first().getAttribute('data-id'), { timeout: 20_000 }).toBe(POINTS[1].id)
        await shot(page, 'stores-qdrant-recall')

        await page.getByRole('link', { name: 'Library' }).click()
        const facts = page.getByRole('region', { name: 'Database facts' })
        await expect.poll(() => facts.textContent()).toMatch(/Qdrant local folder/)
        await expect.poll(() => facts.textContent()).toMatch(/qdrant:mem0:4/)
        await shot(page, 'stores-qdrant-library')
      } finally {
        await b.close()
      }
      expect(hashTree(folder)).toEqual(before)
    })
  })
})
