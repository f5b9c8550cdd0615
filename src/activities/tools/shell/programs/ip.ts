/**
 * `ip` (iproute2) in its show/list forms only. iproute2 matches objects and commands
 * by prefix in table order (`ip link s` means `set`, not `show`), so only exact,
 * known spellings are accepted. Global options are a positive list: `-b`/`-batch`
 * would run commands from a file, `-force` keeps going after errors.
 */
import { deny } from '../deny';
import { own } from '../options';
import type { ShellWord } from '../words';
import type { ProgramRule } from './types';

const OBJECTS: Readonly<Record<string, string>> = {
  a: 'address', ad: 'address', addr: 'address', address: 'address',
  l: 'link', li: 'link', link: 'link',
  r: 'route', ro: 'route', route: 'route',
  n: 'neigh', neigh: 'neigh', neighbor: 'neigh', neighbour: 'neigh',
  rule: 'rule', maddr: 'maddress', maddress: 'maddress', netconf: 'netconf',
};

const GLOBAL = /^-(4|6|0|s|stats|statistics|d|details|j|json|p|pretty|br|brief|o|oneline|h|human|human-readable|r|resolve|N|numeric|t|timestamp|ts|tshort|c|color|colou?r=(always|auto|never))$/;

function checkIp(args: readonly ShellWord[]): void {
  const words = args.map((w) => {
    if (w.kind !== 'static') deny('`ip` arguments must be literal');
    return w.value;
  });
  let i = 0;
  while (i < words.length && words[i]!.startsWith('-')) {
    const opt = words[i]!;
    if (opt === '-f' || opt === '-family') {
      i += 2;
      continue;
    }
    if (!GLOBAL.test(opt)) {
      deny(/^-(b|batch|force)$/.test(opt) ? `\`ip ${opt}\` runs commands from a file; use \`ip addr show\` and similar` : `\`ip ${opt}\` is not an option I can verify as read-only`);
    }
    i++;
  }
  const object = own(OBJECTS, words[i] ?? '');
  if (!object) deny('only `ip addr|link|route|neigh|rule show` are read-only');
  const command = words[i + 1];
  if (command === undefined || command === 'show' || command === 'list' || command === 'lst') return;
  if (object === 'route' && command === 'get') return;
  deny(`\`ip ${words[i]} ${command}\` can change the network configuration; use \`ip ${words[i]} show\``);
}

export const ipRules: Readonly<Record<string, ProgramRule>> = {
  ip: { check: checkIp },
};
