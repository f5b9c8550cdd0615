/**
 * Every example in README.md and docs/ is checked against the code it shows (scripts/docs/):
 * ```ts blocks typecheck against the package's public entry points, ```json blocks are valid
 * as the input they name, shell lines that run `forkflow`, `npm` scripts or `temporal` with
 * forkflow's inputs name commands, flags and inputs that exist, and every relative link,
 * anchor and repository path resolves. Each check is also shown failing on a made-up page.
 */
import { readDocs, GENERATED_API_DIRS, parseMarkdown, type MarkdownFile } from '../../../scripts/docs/markdown';
import { linkProblems } from '../../../scripts/docs/check-links';
import { jsonProblems } from '../../../scripts/docs/check-json';
import { shellProblems } from '../../../scripts/docs/check-shell';
import { staleBuild, typescriptProblems } from '../../../scripts/docs/check-typescript';

const docs = readDocs();
/** Pages written by people: the generated API pages are TypeDoc's and api-extractor's output, checked by their own tests. */
const written = docs.filter((d) => !GENERATED_API_DIRS.some((dir) => d.file.startsWith(`${dir}/`)));
const blocks = written.flatMap((d) => d.blocks);
const page = (lines: string[]): MarkdownFile => parseMarkdown('docs/made-up.md', lines.join('\n'));

/** A made-up block with two type errors, checked in the same program as the docs' (one compile, not two). */
const wrongTs = page(['Text.', '', '```ts', "import { ForkflowClient } from 'forkflow';", 'await client.fork({ prompt: 1 });', "const c: ForkflowClient = 'no';", '```']);
let tsProblems: string[] | undefined;
const typeErrors = () => (tsProblems ??= typescriptProblems([...blocks, ...wrongTs.blocks]));

describe('the docs as they are', () => {
  test('there is something to check', () => {
    expect(blocks.filter((b) => b.lang === 'ts').length).toBeGreaterThanOrEqual(8);
    expect(blocks.filter((b) => b.lang === 'json').length).toBeGreaterThanOrEqual(3);
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(4);
  });

  test('every fenced block says its language, and only languages something checks or that are prose', () => {
    const unchecked = blocks.filter((b) => !['ts', 'json', 'sh', 'text', 'python', 'promql'].includes(b.lang));
    expect(unchecked.map((b) => `${b.file}:${b.line}: \`\`\`${b.lang}`)).toEqual([]);
  });

  test('relative links, anchors and repository paths resolve', () => {
    expect(linkProblems(docs, written)).toEqual([]);
  });

  test('JSON blocks are valid as what they say they are', () => {
    expect(jsonProblems(blocks)).toEqual([]);
  });

  test('forkflow commands, npm scripts and temporal inputs exist and are valid', () => {
    expect(shellProblems(blocks, written.flatMap((d) => d.spans))).toEqual([]);
  });

  test('TypeScript blocks typecheck against the public entry points (lib/*.d.ts)', () => {
    expect(staleBuild()).toBeUndefined();
    expect(typeErrors().filter((p) => !p.startsWith('docs/made-up.md'))).toEqual([]);
  });
});

describe('each check fails on what it is for', () => {
  test('links: a missing file, a missing anchor, a path in code or prose that does not exist', () => {
    const made = page(['# Title', '', 'See [a](guides/nope.md), [b](../README.md#nope), [c](#title) and `src/shared/nope.ts`.', '', 'As src/shared/gone.ts says (and src/shared/wire/fork-input.ts).', '']);
    const problems = linkProblems([...docs, made]).filter((p) => p.startsWith('docs/made-up.md'));
    expect(problems).toEqual([
      'docs/made-up.md:3: link guides/nope.md: docs/guides/nope.md does not exist',
      expect.stringContaining('docs/made-up.md:3: link ../README.md#nope: README.md has no heading #nope'),
      'docs/made-up.md:3: `src/shared/nope.ts` names src/shared/nope.ts, which does not exist',
      'docs/made-up.md:5: names src/shared/gone.ts, which does not exist',
    ]);
  });

  test('JSON: unnamed, unknown, malformed and invalid blocks', () => {
    const made = page([
      '```json', '{}', '```',
      '```json nothing-known', '{}', '```',
      '```json fork-input', '{ "prompt": ', '```',
      '```json fork-input', '{ "prompt": "", "maxTurns": -1 }', '```',
      '```json package-overrides', '"overrides": { "@temporalio/client": "1.11.0" }', '```',
    ]);
    const problems = jsonProblems(made.blocks);
    expect(problems).toEqual([
      expect.stringMatching(/^docs\/made-up.md:1: a JSON block must say what it is/),
      expect.stringMatching(/^docs\/made-up.md:4: unknown JSON kind "nothing-known"/),
      expect.stringMatching(/^docs\/made-up.md:\d+: not JSON/),
      'docs/made-up.md:11: not a valid fork-input: prompt: prompt (the directive) must not be empty',
      'docs/made-up.md:11: not a valid fork-input: maxTurns: Too small: expected number to be >=0',
      expect.stringMatching(/^docs\/made-up.md:14: not a valid package-overrides: overrides > @temporalio\/client: pins 1.11.0, but forkflow depends on 1\./),
      expect.stringMatching(/pins no package at the SDK version/),
    ]);
  });

  test('shell: unknown commands, flags and scripts; invalid temporal inputs; in blocks and in inline code', () => {
    const made = page([
      '```sh',
      'npx forkflow worker --workspace /srv --no-such-flag',
      'forkflow dream nope',
      'npm run no-such-script',
      "temporal workflow signal -w x --name sendMessage --input '{\"text\":\"hi\"}'",
      'temporal workflow query -w x --type no-such-query',
      '```',
      'Then `forkflow tree <root> --flat`.',
      '',
      '| command | |',
      '| --- | --- |',
      '| `worker [--workspace dir] [--bogus]` · `schedule list\\|nope` | what it does |',
    ]);
    const problems = shellProblems(made.blocks, made.spans);
    expect(problems).toEqual([
      expect.stringMatching(/^docs\/made-up.md:2: forkflow worker has no option --no-such-flag/),
      expect.stringMatching(/^docs\/made-up.md:3: forkflow dream has no command "nope"/),
      'docs/made-up.md:4: package.json has no script "no-such-script"',
      expect.stringMatching(/^docs\/made-up.md:5: --input is not a valid sendMessage: message: /),
      expect.stringMatching(/^docs\/made-up.md:5: --input is not a valid sendMessage: \(input\): Unrecognized key: "text"/),
      expect.stringMatching(/^docs\/made-up.md:6: no query "no-such-query"/),
      expect.stringMatching(/^docs\/made-up.md:8: `forkflow tree <root> --flat`: forkflow tree has no option --flat/),
      expect.stringMatching(/^docs\/made-up.md:12: `worker \[--workspace dir\] \[--bogus\]`: forkflow worker has no option --bogus/),
      expect.stringMatching(/^docs\/made-up.md:12: `schedule list\\\|nope`: forkflow schedule has no command "nope"/),
    ]);
  });

  test('TypeScript: an undeclared name and a wrong call are reported at their Markdown line', () => {
    expect(typeErrors().filter((p) => p.startsWith('docs/made-up.md'))).toEqual([
      expect.stringMatching(/^docs\/made-up.md:5: TS2304 Cannot find name 'client'/),
      expect.stringMatching(/^docs\/made-up.md:6: TS2322 Type 'string' is not assignable to type 'ForkflowClient'/),
    ]);
  });
});
