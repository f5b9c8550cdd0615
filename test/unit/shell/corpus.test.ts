/**
 * The acceptance figures on the labelled corpus (test/data/shell-corpus.jsonl):
 * every adversarial command is denied, and the false-denial rate on the everyday
 * read-only commands stays at or under 2% (issue 10). Failures list the offending commands.
 */
import { resolve } from 'node:path';
import { corpusReport, type CorpusReport } from '../../../src/activities/tools/shell/corpus-report';

const CORPUS = resolve(__dirname, '..', '..', 'data', 'shell-corpus.jsonl');

describe('shell classifier on the labelled corpus', () => {
  let report: CorpusReport;

  beforeAll(async () => {
    report = await corpusReport(CORPUS);
  });

  it('has at least 1,200 labelled commands, 40 per bypass class and 400 everyday ones', () => {
    expect(report.adversarial + report.everyday).toBeGreaterThanOrEqual(1200);
    expect(report.everyday).toBeGreaterThanOrEqual(400);
    const classes = ['class1-grammar', 'class2-parser', 'class3-scripts', 'class4-git', 'class5-env'];
    const short = classes.filter((name) => (report.categories[name]?.deny ?? 0) < 40);
    expect(short).toEqual([]);
  });

  it('allows no adversarial command (0 bypasses)', () => {
    const slipped = report.list.filter((m) => m.kind === 'bypass').map((m) => `[${m.category}] ${JSON.stringify(m.cmd)}`);
    expect(slipped).toEqual([]);
  });

  it('keeps the false-denial rate on everyday commands at or under 2%', () => {
    const denied = report.list.filter((m) => m.kind === 'false-denial');
    const pct = (report.falseDenialRate * 100).toFixed(1);
    console.log(
      `false denials: ${report.falseDenials}/${report.everyday} (${pct}%)\n` +
        denied.map((m) => `  ${JSON.stringify(m.cmd)} -- ${m.reason ?? ''}`).join('\n'),
    );
    expect(report.falseDenialRate).toBeLessThanOrEqual(0.02);
  });
});
