/**
 * The simple commands a tree-sitter tree says bash will run, in source order, nested ones
 * (inside `$(…)`, backquotes, `<(…)`, subshells, groups, loops, conditionals) included,
 * each with its words after quote removal, its assignments and its redirects. This is the
 * readable half of the parser-agreement shape: the fuzz test runs allowed commands in
 * bash with logging stubs and checks that what bash ran is what this list says.
 */
import type { Node } from 'web-tree-sitter';
import { decodeWord, type ShapeWord } from './quote-removal';

export interface ShapeRedirect {
  op: string;
  fd: string;
  target: ShapeWord | null;
}
export interface SimpleCommand {
  /** How many substitutions, subshells or groups enclose it. */
  depth: number;
  words: ShapeWord[];
  assigns: Array<{ name: string; value: ShapeWord }>;
  redirects: ShapeRedirect[];
}

const NESTING = new Set(['command_substitution', 'process_substitution', 'subshell', 'compound_statement']);
const WORDISH = new Set(['word', 'string', 'raw_string', 'ansi_c_string', 'translated_string', 'concatenation', 'simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion', 'number']);

function redirect(node: Node): ShapeRedirect {
  let op = '';
  let fd = '';
  let target: ShapeWord | null = null;
  for (let i = 0; i < node.childCount; i++) {
    const kid = node.child(i)!;
    if (kid.type === 'file_descriptor') fd = kid.text;
    else if (!kid.isNamed && !op) op = kid.type;
    else if (kid.type === 'heredoc_start') target = kid.text;
    else if (WORDISH.has(kid.type) && target === null) target = decodeWord(kid);
  }
  return { op, fd, target };
}

/**
 * List the simple commands of a tree.
 *
 * @example
 * simpleCommands(tree.rootNode) // for `ls "a b" | wc -l`:
 * // [{ depth: 0, words: ['ls', 'a b'], ... }, { depth: 0, words: ['wc', '-l'], ... }]
 */
export function simpleCommands(root: Node): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const visit = (node: Node, depth: number, outer: ShapeRedirect[]): void => {
    if (node.type === 'command') {
      const command: SimpleCommand = { depth, words: [], assigns: [], redirects: [...outer] };
      for (let i = 0; i < node.childCount; i++) {
        const kid = node.child(i)!;
        if (kid.type === 'command_name') command.words.push(decodeWord(kid.child(0)!));
        else if (kid.type === 'variable_assignment') {
          const value = kid.childForFieldName('value');
          command.assigns.push({ name: kid.child(0)!.text, value: value ? decodeWord(value) : '' });
        } else if (kid.type.endsWith('_redirect')) command.redirects.push(redirect(kid));
        else if (WORDISH.has(kid.type)) command.words.push(decodeWord(kid));
      }
      out.push(command);
    }
    // Redirects of a redirected statement belong to the command it wraps.
    const own = node.type === 'redirected_statement' ? [] : outer;
    const wrapped: ShapeRedirect[] = [];
    if (node.type === 'redirected_statement') {
      for (let i = 0; i < node.childCount; i++) {
        if (node.fieldNameForChild(i) !== 'body') wrapped.push(redirect(node.child(i)!));
      }
    }
    for (let i = 0; i < node.childCount; i++) {
      const kid = node.child(i)!;
      const isBody = node.type === 'redirected_statement' && node.fieldNameForChild(i) === 'body';
      visit(kid, depth + (NESTING.has(kid.type) ? 1 : 0), isBody && kid.type === 'command' ? wrapped : own);
    }
  };
  visit(root, 0, []);
  return out;
}
