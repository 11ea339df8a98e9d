import { runFirstPage } from './firstPage'

export interface Bench {
  name: string
  title: string
  run: () => Promise<void>
}

/** Every benchmark `npm run bench` knows, in run order. */
export const BENCHES: Bench[] = [{ name: 'firstpage', title: 'open a 1M-memory DB and show the first page', run: runFirstPage }]
