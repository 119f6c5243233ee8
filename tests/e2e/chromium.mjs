// Debian's Chromium as the e2e tests and the browser benchmark launch it (as root, headless, with
// no background traffic: this machine's network is closed).
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launch headless Chromium with the flags above. */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * The built page (`dist/`) served on 127.0.0.1 and a Chromium to open it: `{server, browser}`,
 * for a test file's `before` (close both in its `after`). Fails with what to run when the page
 * is not built.
 */
export async function servePage(dist) {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { serve } = await import('../../scripts/serve.mjs');
  if (!existsSync(join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build:wasm && npm run build:web` before the e2e tests');
  }
  const server = await serve({ dir: dist, port: 0 });
  const browser = await launchChromium();
  return { server, browser };
}
