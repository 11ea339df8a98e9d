/**
 * The one way handlers are exposed: look up the channel, parse the input with
 * its zod schema, call the core, wrap the outcome in a Result. Nothing throws
 * across the boundary; a bad input is a BAD_INPUT error naming the fields.
 */
import { z } from 'zod'
import { contract, type Channel, type Output, type ParsedInput } from '../../shared/contract'
import { badInput, err, ok, RecallscopeError, type Result, toResultError } from '../../shared/result'
import { MAX_JSON_DEPTH, valueDepth } from '../safety/json'

export type Handler<C extends Channel> = (input: ParsedInput<C>) => Output<C> | Promise<Output<C>>
export type Handlers = { [C in Channel]: Handler<C> }

export const CHANNELS = Object.keys(contract) as Channel[]

export function isChannel(name: unknown): name is Channel {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(contract, name)
}

/** Validate one input against a channel's schema. */
export function parseInput<C extends Channel>(channel: C, raw: unknown): { ok: true; data: ParsedInput<C> } | { ok: false; error: ReturnType<typeof err> } {
  const schema = contract[channel].input as z.ZodType
  const parsed = schema.safeParse(raw === undefined ? {} : raw)
  if (parsed.success) return { ok: true, data: parsed.data as ParsedInput<C> }
  const e = badInput(`Invalid input for ${channel}`, parsed.error)
  return { ok: false, error: err('BAD_INPUT', e.message, e.details) }
}

/** A function that runs any channel by name: the same path for IPC and HTTP. */
export type Dispatch = (channel: string, raw: unknown) => Promise<Result<unknown>>

export function createDispatcher(handlers: Handlers, opts: { onError?: (channel: string, e: unknown) => void } = {}): Dispatch {
  const missing = CHANNELS.filter((c) => typeof handlers[c] !== 'function')
  if (missing.length) throw new Error(`No handler for channel(s): ${missing.join(', ')}`)
  return async (channel, raw) => {
    if (!isChannel(channel)) return err('NOT_FOUND', `Unknown channel: ${String(channel).slice(0, 100)}`)
    // IPC's structured clone carries any depth; past this, serialising a result would overflow the stack.
    if (valueDepth(raw) > MAX_JSON_DEPTH) return err('BAD_INPUT', `Invalid input for ${channel}: nested deeper than ${MAX_JSON_DEPTH} levels`)
    const input = parseInput(channel, raw)
    if (!input.ok) return input.error
    try {
      const data = await (handlers[channel] as Handler<Channel>)(input.data)
      return ok(data)
    } catch (e) {
      const re = toResultError(e)
      if (re.code === 'INTERNAL' || !(e instanceof RecallscopeError)) opts.onError?.(channel, e)
      return { ok: false, error: re }
    }
  }
}
