/**
 * Claude Code transcript lines, in the shape Claude Code writes them
 * (oneryalcin/agent-schemas claude-code/v2.1.144/session.schema.json): every line carries
 * uuid, parentUuid, sessionId, cwd, version, timestamp; assistant lines hold
 * `message.content[]` blocks (text / tool_use), tool results come back on user lines as
 * `tool_result` blocks with the line's `toolUseResult`.
 */
import crypto from 'node:crypto'

export class TranscriptWriter {
  readonly lines: string[] = []
  private parent: string | null = null
  private t: number
  constructor(
    readonly sessionId: string,
    start: number,
    readonly cwd = '/home/ada/project',
  ) {
    this.t = start
  }

  private base(type: string) {
    const uuid = crypto.randomUUID()
    const line = {
      parentUuid: this.parent,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: '2.1.144',
      gitBranch: '',
      type,
      uuid,
      timestamp: new Date(this.t).toISOString(),
    }
    this.parent = uuid
    this.t += 1000
    return line
  }

  /** Set the time of the next line (epoch ms); later lines follow a second apart. */
  at(ms: number): this {
    this.t = ms
    return this
  }

  /** ms of the next line */
  get now(): number {
    return this.t
  }

  raw(text: string): this {
    this.lines.push(text)
    return this
  }

  summary(text: string): this {
    this.lines.push(JSON.stringify({ type: 'summary', summary: text, leafUuid: crypto.randomUUID() }))
    return this
  }

  user(text: string): this {
    this.lines.push(JSON.stringify({ ...this.base('user'), message: { role: 'user', content: text } }))
    return this
  }

  private assistant(content: unknown[]): this {
    this.lines.push(
      JSON.stringify({
        ...this.base('assistant'),
        requestId: `req_${crypto.randomBytes(6).toString('hex')}`,
        message: {
          model: 'claude-sonnet-4-5',
          id: `msg_${crypto.randomBytes(8).toString('hex')}`,
          type: 'message',
          role: 'assistant',
          content,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        },
      }),
    )
    return this
  }

  text(text: string): this {
    return this.assistant([{ type: 'text', text }])
  }

  thinking(text: string): this {
    return this.assistant([{ type: 'thinking', thinking: text, signature: 'sig' }])
  }

  /** An assistant tool_use line; returns its id. */
  toolUse(name: string, input: unknown): string {
    const id = `toolu_${crypto.randomBytes(10).toString('hex')}`
    this.assistant([{ type: 'tool_use', id, name, input }])
    return id
  }

  /** The user line carrying a tool's result. `form` says which forms to write: the block's content, and/or the line's toolUseResult. */
  toolResult(id: string, result: { content: unknown; structuredContent?: unknown }, form: { toolUseResult?: unknown; isError?: boolean } = {}): this {
    const line: Record<string, unknown> = {
      ...this.base('user'),
      message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: result.content, ...(form.isError ? { is_error: true } : {}) }] },
    }
    if (form.toolUseResult !== undefined) line.toolUseResult = form.toolUseResult
    this.lines.push(JSON.stringify(line))
    return this
  }

  toString(): string {
    return this.lines.join('\n') + '\n'
  }
}
