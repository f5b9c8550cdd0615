/**
 * The per-run working folder of a consolidation, `<stateDir>/runs/<runKey>/`: the staged
 * session transcripts (`sessions/`, read-only while the fork runs) and the manifest of the
 * memory directory taken before the fork. Removed when the run settles; a folder left by a
 * run that died is removed by whoever clears its claim.
 */
import { chmod, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FAILURE, failure } from '../../shared/wire/failures';
import { isInside } from '../tools/paths';
import type { MemoryManifest } from './memory-diff';

export function runDirOf(stateDir: string, runKey: string): string {
  return path.join(stateDir, 'runs', runKey);
}

export function sessionsDirOf(stateDir: string, runKey: string): string {
  return path.join(runDirOf(stateDir, runKey), 'sessions');
}

/** Removes a run folder, first making its read-only sessions folder writable again. */
export async function removeRunDir(stateDir: string, runKey: string): Promise<void> {
  await chmod(sessionsDirOf(stateDir, runKey), 0o700).catch(() => undefined);
  await rm(runDirOf(stateDir, runKey), { recursive: true, force: true });
}

export async function writeManifest(stateDir: string, runKey: string, manifest: MemoryManifest): Promise<void> {
  await mkdir(runDirOf(stateDir, runKey), { recursive: true, mode: 0o700 });
  await writeFile(path.join(runDirOf(stateDir, runKey), 'memory-before.json'), JSON.stringify(manifest), { mode: 0o600 });
}

/** The manifest taken before the fork; empty if it is gone (then every file counts as created). */
export async function readManifest(stateDir: string, runKey: string): Promise<MemoryManifest> {
  const text = await readFile(path.join(runDirOf(stateDir, runKey), 'memory-before.json'), 'utf8').catch(() => '{}');
  return JSON.parse(text) as MemoryManifest;
}

/**
 * Refuses a state directory inside the memory directory: the fork may write anywhere in
 * memoryDir, and must not be able to touch its own state, lock or staged transcripts.
 */
export async function assertStateOutsideMemory(stateDir: string, memoryDir: string): Promise<void> {
  const canonical = async (p: string) => realpath(p).catch(() => path.resolve(p));
  const [state, memory] = await Promise.all([canonical(stateDir), canonical(memoryDir)]);
  if (isInside(state, memory) || isInside(path.resolve(stateDir), path.resolve(memoryDir))) {
    throw failure(FAILURE.invalidDreamConfig, `stateDir ${stateDir} lies inside memoryDir ${memoryDir}: the consolidation fork could rewrite its own state. Choose a stateDir outside the memory directory.`);
  }
}
