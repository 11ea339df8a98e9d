/**
 * MCP knowledge-graph memory fixture: the real `@modelcontextprotocol/server-memory`, spawned
 * with MEMORY_FILE_PATH and driven over stdio JSON-RPC (newline-delimited, MCP 2025-06-18):
 * initialize → notifications/initialized → tools/call create_entities / create_relations /
 * add_observations / delete_observations. The memory.jsonl it leaves is exactly what it writes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'

const SERVER = path.resolve(__dirname, '../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js')

class StdioRpc {
  private buf = ''
  private next = 1
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  stderr = ''
  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      this.buf += chunk
      let i: number
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim()
        this.buf = this.buf.slice(i + 1)
        if (!line) continue
        const msg = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } }
        const w = msg.id !== undefined ? this.waiting.get(msg.id) : undefined
        if (!w) continue
        this.waiting.delete(msg.id!)
        if (msg.error) w.reject(new Error(msg.error.message))
        else w.resolve(msg.result)
      }
    })
    child.stderr.on('data', (c: Buffer) => (this.stderr += c.toString()))
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`memory server exited (${code}): ${this.stderr}`))
      this.waiting.clear()
    })
  }
  request(method: string, params: unknown): Promise<unknown> {
    const id = this.next++
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }
  notify(method: string, params: unknown = {}): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`)
  }
  async tool(name: string, args: unknown): Promise<unknown> {
    const r = (await this.request('tools/call', { name, arguments: args })) as { isError?: boolean; content?: { text: string }[] }
    if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`)
    return r
  }
}

export interface McpMemoryFixture {
  path: string
  /** entity → its observations after the edits, in order */
  observations: Map<string, { entityType: string; observations: string[] }>
  relations: { from: string; to: string; relationType: string }[]
  /** entities created without observations */
  bare: string[]
}

/** Run the real server on `file` and build a small graph through its tools. */
export async function createMcpMemoryFixture(file: string): Promise<McpMemoryFixture> {
  const child = spawn(process.execPath, [SERVER], { env: { ...process.env, MEMORY_FILE_PATH: file }, stdio: ['pipe', 'pipe', 'pipe'] })
  const rpc = new StdioRpc(child)
  try {
    await rpc.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'recallscope-test', version: '0' } })
    rpc.notify('notifications/initialized')
    await rpc.tool('create_entities', {
      entities: [
        { name: 'Ada', entityType: 'person', observations: ['Prefers tea over coffee', 'Works on compilers'] },
        { name: 'Compiler Club', entityType: 'organization', observations: ['Meets every Thursday evening'] },
        { name: 'Lisbon', entityType: 'city', observations: ['Ada moved here in 2024'] },
        { name: 'Thursday', entityType: 'weekday', observations: [] },
      ],
    })
    await rpc.tool('create_relations', {
      relations: [
        { from: 'Ada', to: 'Compiler Club', relationType: 'is member of' },
        { from: 'Ada', to: 'Lisbon', relationType: 'lives in' },
        { from: 'Compiler Club', to: 'Thursday', relationType: 'meets on' },
      ],
    })
    await rpc.tool('add_observations', {
      observations: [
        { entityName: 'Ada', contents: ['Allergic to peanuts', 'Works on compilers'] },
        { entityName: 'Lisbon', contents: ['Rainy in November'] },
      ],
    })
    await rpc.tool('delete_observations', { deletions: [{ entityName: 'Ada', observations: ['Prefers tea over coffee'] }] })
  } finally {
    child.stdin.end()
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      setTimeout(() => child.kill(), 2000).unref()
    })
  }
  return {
    path: file,
    observations: new Map([
      ['Ada', { entityType: 'person', observations: ['Works on compilers', 'Allergic to peanuts'] }],
      ['Compiler Club', { entityType: 'organization', observations: ['Meets every Thursday evening'] }],
      ['Lisbon', { entityType: 'city', observations: ['Ada moved here in 2024', 'Rainy in November'] }],
    ]),
    relations: [
      { from: 'Ada', to: 'Compiler Club', relationType: 'is member of' },
      { from: 'Ada', to: 'Lisbon', relationType: 'lives in' },
      { from: 'Compiler Club', to: 'Thursday', relationType: 'meets on' },
    ],
    bare: ['Thursday'],
  }
}

/**
 * Run the real server on an existing `file` and make read calls (search_nodes, open_nodes,
 * read_graph): each raw `tools/call` result ({content, structuredContent}) in order.
 */
export async function callMcpMemoryTools(file: string, calls: { name: string; args: unknown }[]): Promise<unknown[]> {
  const child = spawn(process.execPath, [SERVER], { env: { ...process.env, MEMORY_FILE_PATH: file }, stdio: ['pipe', 'pipe', 'pipe'] })
  const rpc = new StdioRpc(child)
  const out: unknown[] = []
  try {
    await rpc.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'recallscope-test', version: '0' } })
    rpc.notify('notifications/initialized')
    for (const c of calls) out.push(await rpc.tool(c.name, c.args))
  } finally {
    child.stdin.end()
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      setTimeout(() => child.kill(), 2000).unref()
    })
  }
  return out
}
