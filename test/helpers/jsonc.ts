/**
 * A config file that allows comments and trailing commas (.oxlintrc.json, .oxfmtrc.jsonc), read with
 * TypeScript's JSONC reader. Framework-free: scripts/benchTable.ts and test/lintConfig.test.ts use it.
 */
import fs from 'node:fs'
import ts from 'typescript'

/** The parsed file; throws naming the file when it is not valid JSONC. */
export function readJsonc(file: string): unknown {
  const r = ts.parseConfigFileTextToJson(file, fs.readFileSync(file, 'utf8'))
  if (r.error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(r.error.messageText, '\n')}`)
  return r.config
}
