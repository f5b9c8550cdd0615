/**
 * The API reports (docs/api/*.api.md, @microsoft/api-extractor over lib/*.d.ts) are the public
 * surface of the five entry points as it is: adding, removing or changing an export without
 * `npm run docs` fails here, so every change of the surface is a diff someone reviews.
 */
import { copyFileSync, mkdtempSync, readdirSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiReports, ENTRY_POINTS, REPORT_DIR } from '../../../scripts/docs/api-report';
import { staleBuild } from '../../../scripts/docs/check-typescript';
import { ROOT } from '../../../scripts/docs/markdown';

test('each entry point’s public surface matches its checked-in API report', () => {
  expect(staleBuild()).toBeUndefined();
  const outcomes = apiReports(false);
  expect(outcomes.map((o) => o.importPath)).toEqual(ENTRY_POINTS.map((e) => e.importPath));
  expect(outcomes.flatMap((o) => o.errors)).toEqual([]);
  const changed = outcomes.filter((o) => o.changed).map((o) => `${o.file}: the public surface of ${o.importPath} changed: run \`npm run docs\` and commit the report`);
  expect(changed).toEqual([]);
});

test('a report that no longer matches is reported as changed, and only that one', () => {
  const folder = mkdtempSync(join(tmpdir(), 'forkflow-api-reports-'));
  try {
    for (const name of readdirSync(join(ROOT, REPORT_DIR))) copyFileSync(join(ROOT, REPORT_DIR, name), join(folder, name));
    appendFileSync(join(folder, 'forkflow-workflows.api.md'), '\nexport function removedSinceTheReport(): void;\n');
    const changed = apiReports(false, folder).filter((o) => o.changed).map((o) => o.importPath);
    expect(changed).toEqual(['forkflow/workflows']);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
