/**
 * The Chromium the e2e tests and the UI bench drive (framework-free: bench/ui.ts imports it too).
 * Preferred: Debian's `chromium-headless-shell`, the old headless mode as its own small binary (no browser UI
 * layer, no GPU process stand-in); measured against the full `chromium` in new-headless mode on the e2e
 * project in docs/internals/testing.md. Falls back to the full browser, which renders the same pages.
 */
import fs from 'node:fs'

/** Where each candidate is looked for, in order; $CHROMIUM_PATH first when set. */
const CANDIDATES = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']

/** The Chromium binary to launch: $CHROMIUM_PATH, else the headless shell, else a full Chromium/Chrome; null when none. */
export function findChromium(): string | null {
  for (const p of [process.env.CHROMIUM_PATH, ...CANDIDATES]) if (p && fs.existsSync(p)) return p
  return null
}

/** The args every test/bench Chromium gets: no sandbox (containers), no GPU, nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]
