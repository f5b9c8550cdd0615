/**
 * Headless Debian Chromium for the browser tests (the Temporal Web UI, forkflow's web view),
 * driven by playwright-core. Installed by scripts/install-chromium.sh, which `npm test`
 * starts in the background; `installChromium` waits for it or installs (a minute or so on
 * a cold machine, more when apt is slow).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { run } from './processes';

const root = join(__dirname, '..', '..');

// Playwright's defaults already include most of these; they are spelled out because without
// the networking ones Chromium keeps dialling Google's services, which this project's
// machines refuse, and an offline test must not depend on that staying harmless.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** For `beforeAll(installChromium, INSTALL_TIMEOUT_MS)`. */
export const INSTALL_TIMEOUT_MS = 15 * 60_000;

export async function installChromium(): Promise<void> {
  const installed = await run('bash', [join(root, 'scripts', 'install-chromium.sh')], { timeoutMs: INSTALL_TIMEOUT_MS - 60_000 });
  if (installed.status !== 0) throw new Error(`scripts/install-chromium.sh failed: ${installed.stderr}`);
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless browser with a fresh profile of its own, removed on close. */
export async function launchChromium(viewport: { width: number; height: number }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'forkflow-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
