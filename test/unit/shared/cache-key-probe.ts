/**
 * Run as its own process by cache-key.test.ts: reads cache-key parts as JSON on stdin and
 * prints their `cacheKeyHash`, so the test can compare hashes computed in separate processes.
 */
import { readFileSync } from 'node:fs';
import { cacheKeyHash, type CacheKeyParts } from '../../../src/shared/prefix/cache-key';

const parts = JSON.parse(readFileSync(0, 'utf8')) as CacheKeyParts;
process.stdout.write(`${cacheKeyHash(parts)}\n`);
