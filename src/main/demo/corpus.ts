/**
 * The demo's corpus: three agents with their topics and line templates, the
 * users, and the small text helpers that dress lines so dialogue rarely
 * repeats word for word. Data, not logic: generate.ts draws from it.
 */

export interface Topic {
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

export interface AgentDef {
  id: string
  topics: Topic[]
}

// Slot values keep generated text varied: {n} numbers, {svc} services, etc.
export const SLOTS: Record<string, string[]> = {
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
      procedures: [
        'To deploy {svc}: tag the release, run the staging check, then promote to {env}.',
        'Rollback: redeploy the last green tag and run migrations down.',
      ],
      reflections: [
        'The user seems to prefer small, frequent deploys of {svc} over big releases.',
        'Staging failures for {svc} usually come from stale {lib} config.',
      ],
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
      facts: [
        '{svc} uses {lib} as its primary store.',
        'Schema migrations must be backward compatible for one release.',
        'The tier column defaults to working.',
      ],
      procedures: [
        'Migration apply checklist: backup, dry run on staging, apply, verify row counts.',
        'Backfills run in batches of {n} rows with a pause between batches.',
      ],
      reflections: [
        'Migrations on {svc} tend to need a batched backfill; plan for it upfront.',
        'The user cares more about zero downtime than migration speed.',
      ],
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
      facts: [
        'The user likes window seats on flights.',
        'The user prefers hotels within walking distance of the centre.',
        'The user travels to {city} for work every quarter.',
      ],
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
      userLines: ['Move my {day} standup to the afternoon.', 'Block two hours of focus time every morning.', 'What meetings do I have on {day}?'],
      assistantLines: [
        'Moved the {day} standup to 2 pm and told the attendees.',
        'Blocked focus time from 9 to 11 every weekday.',
        'On {day} you have {n} meetings; the first is at 10.',
      ],
      facts: ['The user does not take meetings before 10 am.', 'Focus time is 9 to 11 every weekday.', 'The user has a standing 1:1 on {day}.'],
      procedures: ["When rescheduling: check attendees' calendars, propose two slots, then confirm."],
      reflections: ['The user protects mornings for deep work; afternoon slots are safer.'],
    },
    {
      name: 'gifts',
      question: "What gifts and budget suit the user's family birthdays?",
      summary: 'Birthdays and gifts: ideas for family birthdays and a budget of {n} dollars.',
      userLines: [
        "My sister's birthday is on the {n}th, any gift ideas?",
        'Keep the gift budget under {n} dollars.',
        "Remind me a week before my mother's birthday.",
      ],
      assistantLines: [
        'Gift ideas: a cooking class, a book set, or a plant; all under {n} dollars.',
        'Reminder set for a week before the birthday.',
        'Ordered the book set; it arrives {day}.',
      ],
      facts: ["The user's sister likes cooking.", 'Gift budget is {n} dollars per person.'],
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
      userLines: [
        'I was charged twice this month on the {plan} plan.',
        'When will I get my refund of {n} dollars?',
        'Can I switch from {plan} to annual billing?',
      ],
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
      userLines: [
        'I cannot log in, the password reset email never arrives.',
        'My two-factor code is not arriving by SMS.',
        'My account got locked after {n} attempts.',
      ],
      assistantLines: [
        'I resent the password reset email; please check the spam folder.',
        'I switched your two-factor method to the authenticator app.',
        'I unlocked the account; the lock triggers after {n} failed attempts.',
      ],
      facts: ['Accounts lock after {n} failed login attempts.', 'The customer uses an authenticator app for two-factor.'],
      procedures: ['Locked account: verify identity with two facts, unlock, force a password reset.'],
      reflections: ["SMS delivery problems are common for this customer's region."],
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
      reflections: ["This customer's engineers prefer exact error codes over explanations."],
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

export function pick<T>(rng: () => number, arr: T[]): T {
  return arr[Math.floor(rng() * arr.length)]
}

export function fill(rng: () => number, tpl: string, fixed: Record<string, string>): string {
  return tpl.replace(/\{(\w+)\}/g, (_, k: string) => {
    if (fixed[k] !== undefined) return fixed[k]
    if (k === 'n') return String(2 + Math.floor(rng() * 98))
    const vals = SLOTS[k]
    return vals ? pick(rng, vals) : k
  })
}

// Conversational openers and closers: real dialogue rarely repeats a line word for word.
export const USER_OPENERS = ['', '', '', 'Hey, ', 'Also, ', 'One more thing: ', 'Quick question: ', 'Sorry to bother you again, ', 'Following up: ', 'Okay so ']
export const USER_CLOSERS = ['', '', '', ' Thanks!', ' It is a bit urgent.', ' No rush.', ' Let me know.', ' (same as last time)', ' before {day} if possible.']
export const ASSISTANT_OPENERS = ['', '', '', 'Done: ', 'Update: ', 'Sure. ', 'Good news: ', 'Heads up: ', 'Checked it. ', 'All right, ']
export const ASSISTANT_CLOSERS = [
  '',
  '',
  '',
  ' Anything else?',
  ' I noted it for next time.',
  ' I will keep an eye on it.',
  ' Details are in the log.',
  ' Tell me if that is not what you meant.',
]

export function dress(rng: () => number, line: string, openers: string[], closers: string[]): string {
  const open = pick(rng, openers)
  // After "Hey, " or "Done: " the sentence continues in lower case; after "Sure. " it starts anew.
  const body = /[,:] $|so $/.test(open) ? line.charAt(0).toLowerCase() + line.slice(1) : line
  const close = pick(rng, closers).replace('{day}', pick(rng, SLOTS.day))
  // "before Friday" reads as part of the sentence: drop the final period first.
  return open + (close.startsWith(' before') ? body.replace(/[.?!]$/, '') : body) + close
}

export function id(prefix: string, n: number): string {
  return `${prefix}-${n.toString(36).padStart(5, '0')}`
}
