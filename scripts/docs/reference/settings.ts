/**
 * docs/reference/settings.md: every environment variable forkflow reads, from the one table
 * the code reads them through (src/shared/wire/env-settings.ts), grouped as the table groups them.
 */
import { ENV_GROUPS, ENV_SETTINGS, type EnvSettingSpec } from '../../../src/shared/wire/env-settings';
import { code, generatedHeader, table } from './render';

const READERS: Record<string, string> = {
  worker: '`forkflow worker` / `createForkflowWorker`',
  client: '`ForkflowClient.connect`',
  cli: 'the CLI',
  dev: '`forkflow dev` / `demo`',
  'codec-server': '`forkflow codec-server`',
  serve: '`forkflow serve`',
  gateway: '`forkflow gateway`',
  compose: '`docker-compose.yml`',
  stack: '`npm run stack`',
  tests: 'the tests',
};

export function settingsPage(): string {
  const entries = Object.entries(ENV_SETTINGS) as [string, EnvSettingSpec][];
  const sections = (Object.entries(ENV_GROUPS) as [keyof typeof ENV_GROUPS, string][]).map(([group, title]) => {
    const rows = entries
      .filter(([, s]) => s.group === group)
      .map(([name, s]) => [code(name), s.default, s.flag ? code(s.flag.startsWith('-') ? s.flag : `forkflow ${s.flag}`) : '', s.readers.map((r) => READERS[r] ?? r).join(', '), s.description]);
    return `## ${title}\n\n${table(['variable', 'default', 'flag', 'read by', 'description'], rows)}\n`;
  });
  return [
    generatedHeader(
      'Settings and environment variables',
      'src/shared/wire/env-settings.ts, the table the code reads its variables through',
      'Every variable forkflow reads. A flag, where there is one, wins over its variable. The worker\'s programmatic options (`createForkflowWorker`, `ForkflowWorkerOptions`) are in the [API reference](api/forkflow/worker.md); the commands\' flags in the [CLI reference](cli.md). Deployment advice: [Production](../guides/production.md), [Performance](../guides/performance.md).',
    ),
    ...sections,
  ].join('\n');
}
