/**
 * The fork workflow's signature as a type, for the modules that start or continue a fork
 * (children, continuation) without importing the workflow module itself (no import circle).
 */
import type { ForkInputJson } from '../../shared/wire/fork-input';
import type { ForkResult } from '../../shared/wire/status';

export type ForkWorkflowFn = (input: ForkInputJson) => Promise<ForkResult>;
