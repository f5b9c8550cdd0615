/**
 * API reports of the package's five entry points (`forkflow`, `/worker`, `/workflows`,
 * `/activities`, `/testing`) by @microsoft/api-extractor, from the declarations a user gets
 * (lib/, built by `npm run build`), checked in as docs/api/<entry>.api.md: a change of the
 * public surface is then a visible diff in review. One TypeScript program serves all five.
 *
 * `npm run docs` writes them (with the reference); test/unit/docs/api-report.test.ts fails when
 * one differs from the checked-in report.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, type ExtractorMessage, type IConfigFile } from '@microsoft/api-extractor';
import { ROOT } from './markdown';

export const REPORT_DIR = 'docs/api';

/** Each entry point: its import path, its declaration file in lib/, its report's base name. */
export const ENTRY_POINTS = [
  { importPath: 'forkflow', dts: 'lib/client/index.d.ts', report: 'forkflow' },
  { importPath: 'forkflow/worker', dts: 'lib/worker/index.d.ts', report: 'forkflow-worker' },
  { importPath: 'forkflow/workflows', dts: 'lib/workflows/index.d.ts', report: 'forkflow-workflows' },
  { importPath: 'forkflow/activities', dts: 'lib/activities/index.d.ts', report: 'forkflow-activities' },
  { importPath: 'forkflow/testing', dts: 'lib/testing/index.d.ts', report: 'forkflow-testing' },
] as const;

function configOf(entry: (typeof ENTRY_POINTS)[number], reportFolder: string, tempFolder: string): ExtractorConfig {
  const configObject: IConfigFile = {
    projectFolder: ROOT,
    mainEntryPointFilePath: join(ROOT, entry.dts),
    compiler: {
      overrideTsconfig: {
        compilerOptions: { target: 'es2022', lib: ['es2022'], module: 'commonjs', moduleResolution: 'node', strict: true, esModuleInterop: true, skipLibCheck: true, types: ['node'] },
        files: ENTRY_POINTS.map((e) => join(ROOT, e.dts)),
      },
    },
    apiReport: { enabled: true, reportFileName: entry.report, reportFolder, reportTempFolder: tempFolder, includeForgottenExports: false },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // Types the public surface uses but no entry point exports are kept in the report as
      // warnings (ae-forgotten-export): they are part of the surface a user meets.
      extractorMessageReporting: { default: { logLevel: 'none' as never, addToApiReportFile: true }, 'ae-missing-release-tag': { logLevel: 'none' as never, addToApiReportFile: false } },
      // TSDoc style is not this report's business (TypeDoc reads the same comments).
      tsdocMessageReporting: { default: { logLevel: 'none' as never, addToApiReportFile: false } },
      compilerMessageReporting: { default: { logLevel: 'error' as never } },
    },
  };
  return ExtractorConfig.prepare({ configObject, configObjectFullPath: join(ROOT, 'api-extractor.json'), packageJsonFullPath: join(ROOT, 'package.json') });
}

export interface ReportOutcome {
  importPath: string;
  file: string;
  changed: boolean;
  errors: string[];
}

let compilerState: CompilerState | undefined;

/**
 * Runs api-extractor over every entry point. `write`: update the reports (npm run docs);
 * otherwise only compare, leaving them as they are. `reportFolder`: where the reports are
 * (default docs/api/). The TypeScript program is made once per process and shared.
 */
export function apiReports(write: boolean, reportFolder = join(ROOT, REPORT_DIR)): ReportOutcome[] {
  const temp = mkdtempSync(join(tmpdir(), 'forkflow-api-report-'));
  try {
    const configs = ENTRY_POINTS.map((e) => [e, configOf(e, reportFolder, temp)] as const);
    compilerState ??= CompilerState.create(configs[0]![1], { additionalEntryPoints: ENTRY_POINTS.map((e) => join(ROOT, e.dts)) });
    return configs.map(([entry, config]) => {
      const errors: string[] = [];
      const result = Extractor.invoke(config, {
        localBuild: write,
        compilerState,
        messageCallback: (m: ExtractorMessage) => {
          if (m.logLevel === ('error' as never)) errors.push(m.formatMessageWithLocation(ROOT));
          m.handled = true;
        },
      });
      return { importPath: entry.importPath, file: `${REPORT_DIR}/${entry.report}.api.md`, changed: result.apiReportChanged, errors };
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
