/**
 * The operator's view in the real Temporal Web UI (the dev server's, 2.54): a fork held in a
 * model call shows its label and directive in the static summary and details, its state and
 * turn in current details, its activity as a model turn, and the list view finds it by
 * `ForkLabel`. Driven in headless Debian Chromium (scripts/install-chromium.sh) by
 * playwright-core; a full-page screenshot of each view lands in test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { ForkHandle } from '../../src/client';
import { startHarness, type Harness } from '../kit/env';
import { installChromium, INSTALL_TIMEOUT_MS, launchChromium, type Browser } from '../kit/chromium';
import { waitFor } from '../kit/wait';

const root = join(__dirname, '..', '..');
const artifacts = join(root, 'test-artifacts');

beforeAll(installChromium, INSTALL_TIMEOUT_MS);

const suffix = Math.random().toString(36).slice(2, 8);
// Unique per run: the list view must find exactly this fork by its label.
const label = `ui-probe-${suffix}`;
const agentId = `web-ui-${suffix}`;
const directive = 'Summarise the release notes for the operator.';

let h: Harness;
let fork: ForkHandle;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  h = await startHarness({ name: 'web-ui' });
  fork = await h.forkflow.start({ agentId, forkLabel: label, maxTurns: 7, prompt: `${directive}\nSecond line, kept to the details.\n@sleep 600000 @reply done` });
  // Held in its first model call: the current details the workflow published before
  // scheduling that call are committed by now.
  await h.model.log.waitFor((e) => e.outcome === 'pending');
  browser = await launchChromium({ width: 1400, height: 1000 });
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  // Below jest's 60 s so a missing element fails with the locator's name, not a bare timeout.
  page.setDefaultTimeout(20_000);
  mkdirSync(artifacts, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (fork) {
    await fork.cancel();
    await fork.result();
  }
  await h?.close();
});

/** Runs the checks, then saves a screenshot whether or not they passed (a failure's evidence). */
async function scenario(name: string, checks: () => Promise<void>): Promise<void> {
  try {
    await checks();
  } finally {
    await page.screenshot({ path: join(artifacts, `web-ui-${name}.png`), fullPage: true });
  }
}

const visible = (locator: Locator) => locator.waitFor({ state: 'visible' });

const forkPage = () => page.goto(`${h.env.uiUrl}/namespaces/default/workflows/${agentId}`);

test('the fork page shows the running fork and which model turn its activity is', async () => {
  await forkPage();
  await scenario('fork-timeline', async () => {
    await visible(page.getByRole('heading', { level: 1 }).getByText(agentId, { exact: true }));
    await visible(page.getByRole('status').getByText('Running', { exact: true }));
    // The activity summary, drawn on the timeline: "callModel • turn 1 · model <name>".
    await visible(page.getByText(/callModel • turn 1 · model \S+/));
  });
});

test('user metadata: summary is label + directive, details the directive, current details state and turn', async () => {
  await forkPage();
  // Reached the way an operator would: the tab, not its URL (which carries the run id).
  await page.getByRole('tab', { name: 'User Metadata' }).click();
  await scenario('fork-user-metadata', async () => {
    await visible(page.getByRole('heading', { name: 'Summary' }));
    // The UI renders each markdown field in its own iframe, named after the field.
    await visible(page.frameLocator('#user-metadata-summary').getByText(`${label}: ${directive}`, { exact: true }));
    const details = page.frameLocator('#user-metadata-details');
    await visible(details.getByText('Directive', { exact: true }));
    await visible(details.getByText(directive));
    const current = page.frameLocator('#user-metadata-current-details');
    await visible(current.getByText(`${label} · running · turn 0/7 · 0 tool calls`));
    await visible(current.getByText('now: model turn 1'));
  });
});

test("the workflow list finds the fork with the query ForkLabel = '<label>'", async () => {
  const query = `ForkLabel = '${label}'`;
  // Visibility is eventually consistent: open the list once the server itself counts it.
  await waitFor(async () => (await h.client.workflow.count(query)).count === 1, 'the fork to be visible to list queries');
  await page.goto(`${h.env.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
  await scenario('fork-list', async () => {
    // The UI parsed the query into a filter (it shows it with double quotes).
    await visible(page.getByRole('button', { name: `ForkLabel = "${label}"`, exact: true }));
    await visible(page.getByRole('heading', { level: 1 }).getByText('1 Workflow', { exact: true }));
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: agentId, exact: true }) });
    await visible(row.getByRole('cell', { name: 'Running', exact: true }));
    expect(await row.count()).toBe(1);
  });
});
