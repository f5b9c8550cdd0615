/**
 * The gates of autoDream as small pure predicates, cheapest first: enabled; hours since the
 * last consolidation; the scan throttle; sessions since then. Each returns the skip it
 * causes, or null to let the run through. The lock is not here: it needs Temporal.
 * Workflow-safe: times are passed in.
 */
import { toMs } from '../base/duration';
import type { DreamConfig } from './config';

const HOUR_MS = 3_600_000;

/** A gate's refusal (the `skipped` outcome's details). */
export interface GateSkip {
  gate: 'disabled' | 'time' | 'throttle' | 'sessions';
  reason: string;
  hoursSinceLast?: number;
  sessions?: number;
  nextScanAt?: string;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

export function enabledGate(cfg: DreamConfig): GateSkip | null {
  return cfg.enabled ? null : { gate: 'disabled', reason: `autoDream is disabled for scope ${cfg.memoryScope}` };
}

/** Hours since the last consolidation (Infinity when there never was one). */
export function hoursSince(now: number, lastConsolidatedAt: string | null): number {
  return lastConsolidatedAt === null ? Number.POSITIVE_INFINITY : (now - Date.parse(lastConsolidatedAt)) / HOUR_MS;
}

export function timeGate(cfg: DreamConfig, now: number, lastConsolidatedAt: string | null): GateSkip | null {
  const hours = hoursSince(now, lastConsolidatedAt);
  if (hours >= cfg.minHours) return null;
  return {
    gate: 'time',
    reason: `last consolidated ${round2(hours)} h ago (at ${lastConsolidatedAt}); the next one is due after ${cfg.minHours} h`,
    hoursSinceLast: round2(hours),
  };
}

/** The scan throttle: the session count (a visibility query) runs at most once per `scanThrottle`. */
export function throttleGate(cfg: DreamConfig, now: number, lastScanAt: string | null): GateSkip | null {
  if (lastScanAt === null) return null;
  const next = Date.parse(lastScanAt) + toMs(cfg.scanThrottle);
  if (now >= next) return null;
  return { gate: 'throttle', reason: `sessions were scanned at ${lastScanAt}; the next scan is allowed at ${iso(next)}`, nextScanAt: iso(next) };
}

export function sessionsGate(cfg: DreamConfig, sessions: number, lastConsolidatedAt: string | null): GateSkip | null {
  if (sessions >= cfg.minSessions) return null;
  const since = lastConsolidatedAt ? `since ${lastConsolidatedAt}` : 'so far';
  return { gate: 'sessions', reason: `${sessions} session(s) ${since}; ${cfg.minSessions} needed`, sessions };
}

/** How long a lock holder may run before it is stale: its own timeout plus a grace period. */
export function staleAfterMs(cfg: DreamConfig): number {
  return toMs(cfg.forkTimeout) + toMs(cfg.lockStaleGrace);
}
