/**
 * The demo memory DB: three agents, eight users, ~120 sessions over 90 days,
 * ~6,000 memories of every kind and tier, session summaries, embeddings from the
 * offline hashing embedder, and the recall events an agent would have logged.
 * Deterministic: the same seed gives the same bytes of content on every machine.
 * `memories` scales it (1,000,000 works; sessions grow with it).
 */
import { mulberry32 } from '../../shared/random'
import { hashEmbed, HASHING_MODEL } from '../embed/hashing'
import { addDemoEvents } from './events'
import type { DemoContext, DemoSession, DemoTruth } from './types'

export type { DemoContext, DemoSession, DemoTruth } from './types'
import { writeDemoCases } from './cases'
import { CANONICAL_FTS } from '../store/sqlite/schema'
import { CanonicalWriter, type CanonicalMemoryRow } from '../store/sqlite/canonicalWriter'

export interface DemoOptions {
  out: string
  /** @default 7 */
  seed?: number
  /** @default 6000 */
  memories?: number
  force?: boolean
  /** Progress callback (done, total); return false to cancel. */
  onProgress?: (done: number, total: number) => boolean | void
  /**
   * Adds recall events once memories, embeddings and the FTS index are committed
   * (`w.db.name` is the half-written file, readable through a Store).
   * @default addDemoEvents (recall/demoEvents.ts): a few hundred events computed by the recall engine
   */
  addEvents?: (w: CanonicalWriter, ctx: DemoContext) => void
  /** Write recall events at all. @default true */
  events?: boolean
  /** Write judged eval cases into the DB's workspace (`<out>.recallscope`). @default true */
  cases?: boolean
}


/** All demo data ends here (fixed, so output is deterministic). 2026-10-31T18:00:00Z */
export const DEMO_END = Date.UTC(2026, 9, 31, 18, 0, 0)
const DAY = 86_400_000


interface Topic {
  name: string
  /** A question whose relevant memories are this topic's facts, procedures and reflections (demo eval cases). */
  question: string
  summary: string
  userLines: string[]
  assistantLines: string[]
  facts: string[]
  procedures: string[]
  reflections: string[]
}

interface AgentDef {
  id: string
  topics: Topic[]
}

// Slot values keep generated text varied: {n} numbers, {svc} services, etc.
const SLOTS: Record<string, string[]> = {
  svc: ['billing-api', 'auth-service', 'search-indexer', 'payments-worker', 'notifications', 'gateway', 'ledger', 'reports'],
  env: ['staging', 'production', 'canary', 'eu-west', 'us-east'],
  lib: ['postgres', 'redis', 'kafka', 'grpc', 'react', 'prisma', 'nginx', 'terraform'],
  city: ['Lisbon', 'Kyoto', 'Oslo', 'Montreal', 'Porto', 'Seoul', 'Vienna', 'Denver'],
  food: ['vegetarian', 'gluten-free', 'no shellfish', 'vegan', 'lactose-free', 'halal'],
  day: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'],
  plan: ['Starter', 'Team', 'Business', 'Enterprise'],
  carrier: ['DHL', 'UPS', 'FedEx', 'Royal Mail'],
}

const CODER: AgentDef = {
  id: 'agent-coder',
  topics: [
    {
      name: 'deploy',
      question: 'How do our deploys get gated, and what is the rollback plan?',
      summary: 'Deploying {svc} to {env}: pipeline gates, staging checks and a rollback plan.',
      userLines: [
        'Can you deploy {svc} to {env} today?',
        'The deploy of {svc} failed on the staging check again, error E{n}.',
        'What is our rollback plan if the {svc} release breaks {env}?',
        'Please gate the {env} deploy on the smoke tests passing.',
      ],
      assistantLines: [
        'I started the {svc} deploy to {env}; the staging check is running now.',
        'The staging check for {svc} failed with E{n}; I rolled back to the previous build.',
        'Rollback plan: redeploy tag v{n} of {svc} and replay the migration down script.',
        'Production deploys are now gated on the staging smoke suite for {svc}.',
      ],
      facts: ['Production deploys of {svc} are gated on the staging check.', '{svc} runs in {env} with {n} replicas.', 'Deploy windows are {day} mornings.'],
      procedures: ['To deploy {svc}: tag the release, run the staging check, then promote to {env}.', 'Rollback: redeploy the last green tag and run migrations down.'],
      reflections: ['The user seems to prefer small, frequent deploys of {svc} over big releases.', 'Staging failures for {svc} usually come from stale {lib} config.'],
    },
    {
      name: 'migration',
      question: 'How should schema migrations and backfills be run?',
      summary: 'Database migration for {svc} on {lib}: schema change, backfill and the tier migration.',
      userLines: [
        'We need to migrate the {svc} schema to add a tier column.',
        'The migration on {lib} is locking the table for {n} seconds, can we avoid that?',
        'Run the tier migration backfill in batches please.',
        'Did the last migration rollback in turn {n} leave anything behind?',
      ],
      assistantLines: [
        'I wrote the migration for {svc}: add the tier column with a default, then backfill.',
        'To avoid the {lib} lock I split the backfill into batches of {n} rows.',
        'The tier migration backfill finished; {n} rows updated.',
        'The last migration rollback left an orphaned index on {svc}; I dropped it.',
      ],
      facts: ['{svc} uses {lib} as its primary store.', 'Schema migrations must be backward compatible for one release.', 'The tier column defaults to working.'],
      procedures: ['Migration apply checklist: backup, dry run on staging, apply, verify row counts.', 'Backfills run in batches of {n} rows with a pause between batches.'],
      reflections: ['Migrations on {svc} tend to need a batched backfill; plan for it upfront.', 'The user cares more about zero downtime than migration speed.'],
    },
    {
      name: 'flaky-tests',
      question: 'What do we do about flaky tests in CI?',
      summary: 'Chasing flaky tests in the {svc} CI suite and quarantining the worst offenders.',
      userLines: [
        'The {svc} test suite is flaky again, test_{lib}_retry failed {n} times this week.',
        'Can you quarantine the flaky tests so CI goes green?',
        'Why does the {lib} integration test time out only on CI?',
      ],
      assistantLines: [
        'test_{lib}_retry is flaky because it depends on wall-clock time; I froze the clock.',
        'I moved {n} flaky tests to the quarantine job; CI is green again.',
        'The {lib} integration test times out on CI because the container starts slowly; I raised the wait to {n}s.',
      ],
      facts: ['CI runs the {svc} suite on every pull request.', 'Quarantined tests run nightly, not on pull requests.'],
      procedures: ['To quarantine a test: tag it flaky, open a ticket, and link it in the CI config.'],
      reflections: ['Most flaky {svc} tests share a dependency on real time or network.'],
    },
    {
      name: 'rate-limits',
      question: 'How do we handle API rate limits and caching?',
      summary: 'API rate limits and caching for {svc}: 429 errors, backoff, and a {lib} cache.',
      userLines: [
        'We keep hitting 429 rate limit errors from the {svc} API.',
        'Add caching in front of {svc} with {lib}, TTL {n} seconds.',
        'What backoff strategy should the client use?',
      ],
      assistantLines: [
        'The 429s come from bursts over {n} requests per second; I added exponential backoff.',
        'Added a {lib} cache in front of {svc} with a {n}s TTL; hit rate is 80%.',
        'Use exponential backoff with jitter, starting at 200 ms and capping at {n} s.',
      ],
      facts: ['The {svc} API allows {n} requests per second per token.', 'Responses from {svc} are cached in {lib}.'],
      procedures: ['When a 429 arrives: back off exponentially with jitter and retry at most 5 times.'],
      reflections: ['The user prefers client-side fixes over asking for higher rate limits.'],
    },
  ],
}

const CONCIERGE: AgentDef = {
  id: 'agent-concierge',
  topics: [
    {
      name: 'travel',
      question: "What are the user's travel and hotel preferences?",
      summary: 'Planning a trip to {city}: flights, hotel near the centre, and dinner reservations.',
      userLines: [
        'I am planning a trip to {city} in {n} weeks, can you find flights?',
        'Book a hotel in {city} close to the old town, under {n} euros a night.',
        'Find a dinner place in {city} that is {food}.',
      ],
      assistantLines: [
        'I found three flights to {city}; the cheapest leaves {day} morning.',
        'Booked a hotel in {city} near the old town for {n} euros a night.',
        'Reserved a {food} restaurant in {city} for {day} at 8 pm.',
      ],
      facts: ['The user likes window seats on flights.', 'The user prefers hotels within walking distance of the centre.', 'The user travels to {city} for work every quarter.'],
      procedures: ['When booking travel: confirm dates, compare three options, then book the refundable one.'],
      reflections: ['The user values refundable bookings over the lowest price.'],
    },
    {
      name: 'diet',
      question: 'What can the user eat, and how do they plan meals?',
      summary: 'Dietary preferences and meal planning: {food}, weekly groceries and recipes.',
      userLines: [
        'Remember that I am {food} now.',
        'Plan my meals for next week, nothing that takes more than {n} minutes.',
        'Can you make a grocery list for the {food} recipes?',
      ],
      assistantLines: [
        'Noted: you are {food}. I will filter recipes and restaurants accordingly.',
        'Here is a {n}-minute meal plan for the week.',
        'Grocery list ready: {n} items, grouped by aisle.',
      ],
      facts: ['The user is {food}.', 'The user cooks on weeknights and eats out on {day}.', 'The user dislikes cilantro.'],
      procedures: ['Meal plans: five dinners, each under 30 minutes, reuse ingredients across days.'],
      reflections: ['Dietary constraints matter more to the user than cuisine type.'],
    },
    {
      name: 'schedule',
      question: 'When does the user take meetings and keep focus time?',
      summary: 'Calendar and meetings: weekly planning, the {day} standup and protecting focus time.',
      userLines: [
        'Move my {day} standup to the afternoon.',
        'Block two hours of focus time every morning.',
        'What meetings do I have on {day}?',
      ],
      assistantLines: [
        'Moved the {day} standup to 2 pm and told the attendees.',
        'Blocked focus time from 9 to 11 every weekday.',
        'On {day} you have {n} meetings; the first is at 10.',
      ],
      facts: ['The user does not take meetings before 10 am.', 'Focus time is 9 to 11 every weekday.', 'The user has a standing 1:1 on {day}.'],
      procedures: ['When rescheduling: check attendees\' calendars, propose two slots, then confirm.'],
      reflections: ['The user protects mornings for deep work; afternoon slots are safer.'],
    },
    {
      name: 'gifts',
      question: "What gifts and budget suit the user's family birthdays?",
      summary: 'Birthdays and gifts: ideas for family birthdays and a budget of {n} dollars.',
      userLines: ['My sister\'s birthday is on the {n}th, any gift ideas?', 'Keep the gift budget under {n} dollars.', 'Remind me a week before my mother\'s birthday.'],
      assistantLines: ['Gift ideas: a cooking class, a book set, or a plant; all under {n} dollars.', 'Reminder set for a week before the birthday.', 'Ordered the book set; it arrives {day}.'],
      facts: ['The user\'s sister likes cooking.', 'Gift budget is {n} dollars per person.'],
      procedures: ['For birthdays: remind 7 days before, suggest three gifts, order after approval.'],
      reflections: ['The user prefers experiences over objects as gifts.'],
    },
  ],
}

const HELPDESK: AgentDef = {
  id: 'agent-helpdesk',
  topics: [
    {
      name: 'billing',
      question: 'What plan is the customer on and how are refunds handled?',
      summary: 'Billing question on the {plan} plan: a duplicate charge and a refund of {n} dollars.',
      userLines: ['I was charged twice this month on the {plan} plan.', 'When will I get my refund of {n} dollars?', 'Can I switch from {plan} to annual billing?'],
      assistantLines: [
        'I see a duplicate charge on your {plan} invoice; I issued a refund of {n} dollars.',
        'Refunds take 5 to 10 business days to appear.',
        'You can switch to annual billing from the billing page; it saves {n}%.',
      ],
      facts: ['The customer is on the {plan} plan.', 'Refunds over {n} dollars need a supervisor.', 'The customer pays by card.'],
      procedures: ['Duplicate charge: verify both charges, refund one, note the ticket.'],
      reflections: ['This customer escalates quickly when billing is wrong; respond fast.'],
    },
    {
      name: 'password',
      question: 'How do we handle locked accounts and two-factor problems?',
      summary: 'Account access: password reset, two-factor codes not arriving, locked account.',
      userLines: ['I cannot log in, the password reset email never arrives.', 'My two-factor code is not arriving by SMS.', 'My account got locked after {n} attempts.'],
      assistantLines: [
        'I resent the password reset email; please check the spam folder.',
        'I switched your two-factor method to the authenticator app.',
        'I unlocked the account; the lock triggers after {n} failed attempts.',
      ],
      facts: ['Accounts lock after {n} failed login attempts.', 'The customer uses an authenticator app for two-factor.'],
      procedures: ['Locked account: verify identity with two facts, unlock, force a password reset.'],
      reflections: ['SMS delivery problems are common for this customer\'s region.'],
    },
    {
      name: 'shipping',
      question: 'What happens when an order shipment is delayed or lost?',
      summary: 'Order shipping delay with {carrier}: tracking number, a replacement and a discount.',
      userLines: ['My order has not arrived after {n} days.', 'The {carrier} tracking shows no update.', 'Can you send a replacement?'],
      assistantLines: [
        'The {carrier} shipment is delayed at the hub; expected in {n} days.',
        'I opened a trace with {carrier} for the stuck package.',
        'A replacement is on its way with express shipping, and a {n}% discount is applied.',
      ],
      facts: ['Orders ship with {carrier}.', 'Replacements ship express at no cost.'],
      procedures: ['Lost package: open a carrier trace, wait 48 hours, then send a replacement.'],
      reflections: ['The customer is patient if kept informed with tracking updates.'],
    },
    {
      name: 'integration',
      question: 'How are webhooks and API keys set up for the customer?',
      summary: 'Integration setup: webhooks to {svc}, API keys, and a failing signature check.',
      userLines: ['Our webhook to {svc} fails the signature check.', 'How do I rotate the API key?', 'The webhook retries {n} times then stops.'],
      assistantLines: [
        'The signature check fails because the secret was rotated; update it in {svc}.',
        'Rotate the key from the developer settings; the old key works for {n} hours.',
        'Webhooks retry {n} times with backoff, then the endpoint is disabled.',
      ],
      facts: ['The customer integrates via webhooks into {svc}.', 'API keys overlap for {n} hours after rotation.'],
      procedures: ['Webhook signature failures: compare the secret, check the clock skew, resend a test event.'],
      reflections: ['This customer\'s engineers prefer exact error codes over explanations.'],
    },
  ],
}

export const DEMO_AGENTS: AgentDef[] = [CODER, CONCIERGE, HELPDESK]

export const DEMO_USERS = [
  { id: 'user-ada', tenant: 'acme', agents: ['agent-coder', 'agent-concierge'] },
  { id: 'user-ben', tenant: 'acme', agents: ['agent-coder'] },
  { id: 'user-chen', tenant: 'globex', agents: ['agent-coder', 'agent-helpdesk'] },
  { id: 'user-dana', tenant: 'globex', agents: ['agent-concierge'] },
  { id: 'user-eli', tenant: 'initech', agents: ['agent-helpdesk'] },
  { id: 'user-fay', tenant: 'initech', agents: ['agent-concierge', 'agent-helpdesk'] },
  { id: 'user-gus', tenant: 'acme', agents: ['agent-helpdesk'] },
  { id: 'user-hana', tenant: 'globex', agents: ['agent-coder', 'agent-concierge'] },
]

function pick<T>(rng: () => number, arr: T[]): T {
  return arr[Math.floor(rng() * arr.length)]
}

function fill(rng: () => number, tpl: string, fixed: Record<string, string>): string {
  return tpl.replace(/\{(\w+)\}/g, (_, k: string) => {
    if (fixed[k] !== undefined) return fixed[k]
    if (k === 'n') return String(2 + Math.floor(rng() * 98))
    const vals = SLOTS[k]
    return vals ? pick(rng, vals) : k
  })
}

// Conversational openers and closers: real dialogue rarely repeats a line word for word.
const USER_OPENERS = ['', '', '', 'Hey, ', 'Also, ', 'One more thing: ', 'Quick question: ', 'Sorry to bother you again, ', 'Following up: ', 'Okay so ']
const USER_CLOSERS = ['', '', '', ' Thanks!', ' It is a bit urgent.', ' No rush.', ' Let me know.', ' (same as last time)', ' before {day} if possible.']
const ASSISTANT_OPENERS = ['', '', '', 'Done: ', 'Update: ', 'Sure. ', 'Good news: ', 'Heads up: ', 'Checked it. ', 'All right, ']
const ASSISTANT_CLOSERS = ['', '', '', ' Anything else?', ' I noted it for next time.', ' I will keep an eye on it.', ' Details are in the log.', ' Tell me if that is not what you meant.']

function dress(rng: () => number, line: string, openers: string[], closers: string[]): string {
  const open = pick(rng, openers)
  // After "Hey, " or "Done: " the sentence continues in lower case; after "Sure. " it starts anew.
  const body = /[,:] $|so $/.test(open) ? line.charAt(0).toLowerCase() + line.slice(1) : line
  const close = pick(rng, closers).replace('{day}', pick(rng, SLOTS.day))
  // "before Friday" reads as part of the sentence: drop the final period first.
  return open + (close.startsWith(' before') ? body.replace(/[.?!]$/, '') : body) + close
}

function id(prefix: string, n: number): string {
  return `${prefix}-${n.toString(36).padStart(5, '0')}`
}

/** Generate the demo DB. Returns the path written and what it contains. */
export function generateDemo(opts: DemoOptions): { path: string; memories: number; sessions: number; events: number; cases: number } {
  const seed = opts.seed ?? 7
  const target = Math.max(50, Math.floor(opts.memories ?? 6000))
  const rng = mulberry32(seed)
  const w = new CanonicalWriter(opts.out, { force: opts.force })
  try {
    const perSession = 50
    const nSessions = Math.max(2, Math.round(target / perSession))
    // Longer histories for huge DBs would be unrealistic; keep 90 days, denser.
    const start = DEMO_END - 90 * DAY
    const pairs: { agent: AgentDef; user: (typeof DEMO_USERS)[number] }[] = []
    for (const u of DEMO_USERS) for (const a of u.agents) pairs.push({ agent: DEMO_AGENTS.find((x) => x.id === a)!, user: u })
    const sessions: DemoSession[] = []
    const truth = new Map<string, DemoTruth>()
    const addTruth = (agentId: string, userId: string, topic: Topic, id: string, kind: string) => {
      const key = `${agentId}|${userId}|${topic.name}`
      let t = truth.get(key)
      if (!t) truth.set(key, (t = { agentId, userId, topic: topic.name, question: topic.question, knowledge: [] }))
      t.knowledge.push({ id, kind })
    }
    const starts = Array.from({ length: nSessions }, () => start + Math.floor(rng() * (90 * DAY - 2 * 3600_000))).sort((a, b) => a - b)
    let memN = 0
    let written = 0
    // Cross-session user facts (Engram's user_memories): user_id set, session_id NULL.
    const userFacts = pairs.length * 4
    const sessionBudget = target - userFacts
    for (let si = 0; si < nSessions; si++) {
      const pair = pairs[Math.floor(rng() * pairs.length)]
      const topic = pick(rng, pair.agent.topics)
      const fixed: Record<string, string> = {}
      for (const k of Object.keys(SLOTS)) fixed[k] = pick(rng, SLOTS[k])
      const sid = id('s', si + 1)
      const startedAt = starts[si]
      const remainingSessions = nSessions - si
      const left = sessionBudget - written
      const count =
        remainingSessions === 1
          ? Math.max(1, left)
          : Math.max(4, Math.min(Math.round(left / remainingSessions + (rng() - 0.5) * 20), left - (remainingSessions - 1) * 4))
      const ageDays = (DEMO_END - startedAt) / DAY
      const archived = ageDays > 75 && rng() < 0.4
      const s: DemoSession = {
        id: sid,
        agentId: pair.agent.id,
        userId: pair.user.id,
        tenantId: pair.user.tenant,
        topic: topic.name,
        startedAt,
        endedAt: startedAt,
        memoryIds: [],
        userTurns: [],
      }
      let t = startedAt
      for (let turn = 1; turn <= count; turn++) {
        t += 20_000 + Math.floor(rng() * 160_000)
        const mid = id('m', ++memN)
        const r = rng()
        let role: string
        let kind: string
        let text: string
        let salience: number
        // Mostly dialogue, with the facts, procedures and reflections an agent extracts.
        if (r < 0.36) {
          role = 'user'
          kind = 'episodic'
          text = dress(rng, fill(rng, pick(rng, topic.userLines), fixed), USER_OPENERS, USER_CLOSERS)
          salience = 0.2 + rng() * 0.3
        } else if (r < 0.72) {
          role = 'assistant'
          kind = 'episodic'
          text = dress(rng, fill(rng, pick(rng, topic.assistantLines), fixed), ASSISTANT_OPENERS, ASSISTANT_CLOSERS)
          salience = 0.15 + rng() * 0.3
        } else if (r < 0.86) {
          role = 'system'
          kind = 'semantic'
          text = fill(rng, pick(rng, topic.facts), fixed)
          salience = 0.5 + rng() * 0.5
        } else if (r < 0.94) {
          role = 'system'
          kind = 'procedural'
          text = fill(rng, pick(rng, topic.procedures), fixed)
          salience = 0.4 + rng() * 0.5
        } else {
          role = 'assistant'
          kind = 'reflection'
          text = fill(rng, pick(rng, topic.reflections), fixed)
          salience = 0.3 + rng() * 0.5
        }
        // Tiers: recent sessions are working memory, older ones consolidated.
        const tier = archived ? 'archived' : ageDays < 14 ? (kind === 'episodic' ? 'working' : 'long_term') : kind === 'episodic' && rng() < 0.6 ? 'working' : 'long_term'
        const used = rng() < 0.35
        const lastUsed = used ? Math.min(DEMO_END, t + Math.floor(rng() * (DEMO_END - t))) : null
        let metadata: string | null = JSON.stringify({ topic: topic.name, channel: pair.agent.id === 'agent-helpdesk' ? 'chat' : 'app' })
        // A realistic DB has a little junk: a few rows with broken metadata JSON.
        if (memN % 1999 === 7) metadata = '{"topic": "' + topic.name + '", broken'
        const row: CanonicalMemoryRow = {
          id: mid,
          agent_id: pair.agent.id,
          user_id: pair.user.id,
          session_id: sid,
          role,
          kind,
          tier,
          content: text,
          summary: null,
          salience: Math.round(salience * 1000) / 1000,
          created_at: t,
          last_used_at: lastUsed,
          use_count: used ? 1 + Math.floor(rng() * 6) : 0,
          turn,
          source: `${pair.agent.id}/${topic.name}`,
          metadata,
        }
        w.memory(row)
        if (memN % 2503 === 11) {
          // …and a vector of the wrong dimension, which must be skipped and counted.
          w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text, 128))
        } else {
          w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text))
        }
        s.memoryIds.push(mid)
        // Archived knowledge is out of a default recall's reach: the demo's judged cases leave it out.
        if (kind !== 'episodic' && tier !== 'archived') addTruth(pair.agent.id, pair.user.id, topic, mid, kind)
        if (role === 'user') s.userTurns.push({ id: mid, at: t, turn, text })
        written++
        if (written % 20000 === 0) {
          w.checkpoint()
          if (opts.onProgress?.(written, target) === false) throw new Error('cancelled')
        }
      }
      s.endedAt = t
      const summary = fill(rng, topic.summary, fixed)
      w.session({
        id: sid,
        agent_id: pair.agent.id,
        user_id: pair.user.id,
        tenant_id: pair.user.tenant,
        started_at: startedAt,
        ended_at: t,
        summary,
        is_archived: archived ? 1 : 0,
      })
      w.embedding('session', sid, HASHING_MODEL, hashEmbed(summary))
      sessions.push(s)
    }
    for (const { agent, user } of pairs) {
      for (let i = 0; i < 4; i++) {
        const topic = pick(rng, agent.topics)
        const text = fill(rng, pick(rng, topic.facts), {})
        const mid = id('m', ++memN)
        const at = start + Math.floor(rng() * 90 * DAY)
        w.memory({
          id: mid,
          agent_id: agent.id,
          user_id: user.id,
          session_id: null,
          role: 'system',
          kind: 'semantic',
          tier: 'long_term',
          content: text,
          summary: null,
          salience: Math.round((0.6 + rng() * 0.4) * 1000) / 1000,
          created_at: at,
          last_used_at: null,
          use_count: 0,
          turn: null,
          source: 'user-profile',
          metadata: JSON.stringify({ topic: topic.name, scope: 'user' }),
        })
        w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text))
        addTruth(agent.id, user.id, topic, mid, 'semantic')
        written++
      }
    }
    const before = w.eventCount()
    const withEvents = opts.events !== false
    if (withEvents) {
      // Events are computed by the recall engine over this very file, so it needs the FTS index now.
      w.prepareForReads()
      ;(opts.addEvents ?? addDemoEvents)(w, { seed, end: DEMO_END, sessions, rng })
    }
    const events = w.eventCount() - before
    opts.onProgress?.(target, target)
    const p = w.finish({ fts: !withEvents })
    const cases = opts.cases === false ? 0 : writeDemoCases(p, [...truth.values()], DEMO_END + 60_000)
    return { path: p, memories: written, sessions: sessions.length, events, cases }
  } catch (e) {
    w.abort()
    throw e
  }
}
