import { type BrowserContext, chromium } from 'playwright-core';
import { CHROMIUM_PATH, needsChromium } from './requirements.js';

/** Debian's Chromium, driven by playwright-core (the heavy lane's browser checks; .ci/run installs it). */
export const CHROMIUM = CHROMIUM_PATH;

/** Why the browser checks cannot run here, or undefined: a `skip` option for `describe`. */
export const chromiumMissing = needsChromium || undefined;

/** Headless, with nothing that reaches the network on its own. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * One browser for a test file, with a fresh profile in `profileDir` (pass it to `after` to close); the
 * viewport is the size screenshots are taken at.
 */
export function launchChromium(
  profileDir: string,
  viewport: { width: number; height: number } = { width: 1200, height: 900 },
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, args: ARGS, viewport });
}
