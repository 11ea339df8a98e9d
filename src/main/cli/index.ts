/**
 * `recallscope` CLI: one core, many commands. Every command takes --json for
 * machine output and exits non-zero on error:
 *   0 ok · 1 runtime error · 2 bad usage/input · 3 a quality gate failed (eval --fail-under)
 *
 * Commands are listed in COMMANDS (one file each), the same list a plugin would extend.
 */
import { parseArgs } from 'node:util'
import { toResultError } from '../../shared/result'
import { appVersion } from '../paths'
import type { CliIo, Command } from './args'
import { EXIT_CODE_HELP, exitCodeFor } from './exitCodes'
import { installTempCleanup, removeTemps } from '../safety/tempFiles'
import { demoCommand } from './demo'
import { serveCommand } from './serve'
import { infoCommand } from './info'
import { importCommand } from './import'
import { embedCommand } from './embed'
import { recallCommand } from './recall'
import { traceCommand } from './trace'
import { evalCommand } from './eval'
import { tuneCommand } from './tune'

export const COMMANDS: Command[] = [demoCommand, serveCommand, infoCommand, importCommand, embedCommand, recallCommand, evalCommand, tuneCommand, traceCommand]

const defaultIo: CliIo = {
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
}

function help(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length))
  return [
    `recallscope ${appVersion()} — inspect and tune an AI agent's memory recall`,
    '',
    'Usage: recallscope <command> [options]   (every command: --json, --help)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
    '',
    EXIT_CODE_HELP,
    'Data: $RECALLSCOPE_HOME (default ~/.recallscope). The agent DB is opened read-only and never written unless --write.',
    '',
  ].join('\n')
}

/** Run the CLI; returns the exit code (never calls process.exit, so tests can call it). */
export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  if (io === defaultIo) installProcessGuards(argv[0] === 'serve')
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(help())
    return name ? 0 : 2
  }
  if (name === '--version' || name === '-v') {
    io.out(appVersion())
    return 0
  }
  const cmd = COMMANDS.find((c) => c.name === name)
  if (!cmd) {
    io.err(`recallscope: unknown command '${name}'\n\n${help()}`)
    return 2
  }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...cmd.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: cmd.positionals ?? false,
      strict: true,
    })
  } catch (e) {
    io.err(`recallscope ${cmd.name}: ${(e as Error).message}\nUsage: ${cmd.usage}`)
    return 2
  }
  if (parsed.values.help) {
    io.out(`Usage: ${cmd.usage}\n\n${cmd.summary}`)
    return 0
  }
  const json = Boolean(parsed.values.json)
  try {
    return await cmd.run({ values: parsed.values, positionals: parsed.positionals, json, io })
  } catch (e) {
    const re = toResultError(e)
    if (json) io.out(JSON.stringify({ ok: false, error: re }))
    else io.err(`recallscope ${cmd.name}: ${re.message}${re.code === 'INTERNAL' && e instanceof Error && e.stack ? `\n${e.stack}` : ''}`)
    return exitCodeFor(re.code)
  }
}

/**
 * For the real process only (tests pass their own io): a reader that goes away
 * (`| head -c 50`) ends the run quietly instead of an unhandled EPIPE; temp files are
 * removed on exit and, except for `serve` (which stops itself), on SIGINT/SIGTERM.
 */
function installProcessGuards(serve: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') {
        removeTemps()
        process.exit(0)
      }
      throw e
    })
  }
  installTempCleanup({ signals: !serve })
}

export type { CliContext, CliIo, Command } from './args'
