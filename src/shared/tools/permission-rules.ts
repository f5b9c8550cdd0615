/**
 * The rules a fork input may give `permissionRules.allow`: a tool name or a prefix, never
 * Claude Code's `Tool(specifier)` form (refused by name).
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/**
 * One rule of `permissionRules.allow`: a tool name or `prefix*`. Claude Code's
 * `Tool(specifier)` form is refused by name (forkflow decides per tool; the sandbox contains Bash).
 */
export const permissionRuleSchema = schemaOnce('tools/permission-rules#permissionRuleSchema', () => z.string().superRefine((v, ctx) => {
  if (/^[A-Za-z0-9_.:-]{1,128}\*?$/.test(v)) return;
  const specifier = /^([A-Za-z0-9_.:-]{1,128})\(.*\)$/.exec(v);
  ctx.addIssue({
    code: 'custom',
    message: specifier
      ? `"${v.slice(0, 80)}": Claude Code's Tool(specifier) rules are not supported (forkflow allows a tool or not, and Bash runs contained in the OS sandbox): allow "${specifier[1]}" instead, or keep asking for it`
      : 'a rule is a tool name, or a prefix ending in *',
  });
}));
