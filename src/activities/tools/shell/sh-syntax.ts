/**
 * The second bash parser: mvdan/sh, through the `sh-syntax` package's WebAssembly build.
 *
 * sh-syntax's own `parse()` instantiates a fresh Go runtime for every call (about 4 ms,
 * nearly all of it start-up, not parsing), and its buffer helper `wasmAlloc` hands back
 * the address of a Go slice header rather than of the bytes, so the text is written over
 * neighbouring heap memory; that only goes unnoticed because each instance is used once.
 * Re-using one instance with that helper corrupted the heap after a few hundred calls
 * (a Go panic, or a hang). So this module drives the same exported `process` function
 * itself, with buffers from the runtime's C-style `malloc`/`free`, and keeps ONE instance
 * for the process: a parse then costs a few hundredths of a millisecond. An instance whose
 * call throws is discarded, and the next call starts a new one.
 *
 * The JSON that `process` returns is validated with zod: it is the boundary to foreign code.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/** mvdan/sh's LangVariant bit for GNU bash. */
const LANG_BASH = 1;

const pos = z.object({ Offset: z.number().int().nonnegative(), Line: z.number().int(), Col: z.number().int() });
const range = z.object({ Pos: pos, End: pos });
const word = range.extend({ Parts: z.array(range).nullable(), Lit: z.string() });
const redirect = range.extend({
  Op: z.string(),
  N: z.object({ Value: z.string() }).passthrough().nullable(),
  Word: word.nullable(),
  Hdoc: word.nullable(),
});
const stmt = range.extend({
  Cmd: range.nullable(),
  Position: pos,
  Semicolon: pos,
  Negated: z.boolean(),
  Background: z.boolean(),
  Coprocess: z.boolean(),
  Redirs: z.array(redirect).nullable(),
});
const result = z.object({
  file: z.object({ Stmts: z.array(stmt).nullable() }).passthrough(),
  parseError: z.object({ Text: z.string() }).passthrough().nullable(),
  message: z.string(),
});

export type ShPos = z.infer<typeof pos>;
export type ShWord = z.infer<typeof word>;
export type ShRedirect = z.infer<typeof redirect>;
export type ShStmt = z.infer<typeof stmt>;
/** One parse: the top-level statements, or the parser's error message. */
export type ShParse = { ok: true; stmts: ShStmt[] } | { ok: false; error: string };

// The few WebAssembly API members used here (this project's TypeScript libs do not declare them).
type WasmModule = object;
interface WasmInstance {
  exports: unknown;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Instance: new (module: WasmModule, imports: object) => WasmInstance;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface GoRuntime {
  importObject: object;
  run(instance: WasmInstance): Promise<number>;
}

interface Exports {
  memory: { buffer: ArrayBuffer };
  malloc(size: number): number;
  free(ptr: number): void;
  process(...args: Array<number | boolean>): number;
}

let compiling: Promise<WasmModule> | undefined;
let current: Exports | undefined;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function compile(): Promise<WasmModule> {
  // Defines globalThis.Go, the TinyGo runtime glue that the module imports from; required
  // lazily so that merely importing the classifier defines no globals.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('sh-syntax/vendors/wasm_exec');
  return wasmApi.compile(await readFile(require.resolve('sh-syntax/main.wasm')));
}

/** Compile once (memoised, so concurrent first callers share one promise; a failure is retried). */
function wasmModule(): Promise<WasmModule> {
  compiling ??= compile().catch((err: unknown) => {
    compiling = undefined;
    throw err;
  });
  return compiling;
}

function instantiate(module: WasmModule): Exports {
  const Go = (globalThis as unknown as { Go: new () => GoRuntime }).Go;
  const go = new Go();
  const instance = new wasmApi.Instance(module, go.importObject);
  // Runs Go's main(), which returns at once; the exports stay callable. The promise only
  // settles when the Go program exits, which it never does here.
  void go.run(instance);
  return instance.exports as Exports;
}

function put(wasm: Exports, bytes: Uint8Array): number {
  const ptr = wasm.malloc(Math.max(1, bytes.byteLength));
  new Uint8Array(wasm.memory.buffer).set(bytes, ptr);
  return ptr;
}

function call(wasm: Exports, source: string): string {
  const text = encoder.encode(source);
  const empty = new Uint8Array(0);
  const name = put(wasm, empty);
  const body = put(wasm, text);
  const stopAt = put(wasm, empty);
  try {
    // process(filepath slice, text slice, print, keepComments, variant, stopAt slice,
    // recoverErrors, then printer options unused when print is false); a Go slice is
    // passed as (pointer, length, capacity).
    const out = wasm.process(name, 0, 0, body, text.byteLength, text.byteLength, false, false, LANG_BASH, stopAt, 0, 0, 0, false, 0, false, false, false, false, false, false, false);
    const memory = new Uint8Array(wasm.memory.buffer); // re-read: the call may have grown memory
    const end = memory.indexOf(0, out);
    if (end < 0) throw new Error('sh-syntax returned an unterminated result');
    return decoder.decode(memory.subarray(out, end));
  } finally {
    wasm.free(name);
    wasm.free(body);
    wasm.free(stopAt);
  }
}

/** Load the parser ahead of the first command (optional; `shParse` loads it too). */
export async function loadShSyntax(): Promise<void> {
  const module = await wasmModule();
  current ??= instantiate(module);
}

/**
 * Parse `source` as bash with mvdan/sh (comments dropped). Never throws for bad shell
 * input: a syntax error comes back as `{ ok: false }`.
 *
 * @example
 * await shParse('ls | wc -l'); // { ok: true, stmts: [ one statement spanning the pipeline ] }
 */
export async function shParse(source: string): Promise<ShParse> {
  await loadShSyntax();
  return shParseLoaded(source);
}

/** Synchronous form for callers that already awaited {@link loadShSyntax}. */
export function shParseLoaded(source: string): ShParse {
  if (!current) throw new Error('sh-syntax is not loaded');
  const wasm = current;
  let raw: string;
  try {
    raw = call(wasm, source);
  } catch (err) {
    // A trap leaves the Go runtime in an unknown state: start a fresh one next time.
    if (current === wasm) current = undefined;
    throw err;
  }
  const parsed = result.parse(JSON.parse(raw));
  if (parsed.parseError || parsed.message) return { ok: false, error: parsed.parseError?.Text ?? parsed.message };
  return { ok: true, stmts: parsed.file.Stmts ?? [] };
}
