/**
 * A regex matcher that cannot hang. PostHog's flags service compiles `regex` filters with Rust's
 * `fancy_regex` (case-sensitive, `.` not matching `\n`, `$` only at the end) under a backtracking
 * limit; Python's `re`, used by the older server, backtracks without one. Here the pattern
 * (`regexSyntax.ts`) is compiled to a Thompson NFA and simulated over the value's code points one
 * step at a time, so the work is at most (pattern size × value length): `(a+)+$` against
 * "aaaa…!" is as quick as `a$`. A step budget bounds even that product; over it, the match is
 * refused (`budget`), which the flag operators read as no match, as the flags service reads
 * its backtrack limit.
 */
import { isWordChar } from './charClasses.ts';
import { parseRegex } from './regexSyntax.ts';
import { type AssertKind, type RefusalKind, type RegexNode, RegexRefusal } from './regexTree.ts';

type Inst =
  | { op: 'char'; test: (cp: number) => boolean }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'assert'; kind: AssertKind }
  | { op: 'match' };

const MAX_PROGRAM = 20_000;
/** thread steps per match: ~ a few milliseconds of work at most */
export const REGEX_STEP_BUDGET = 1_000_000;

function compile(root: RegexNode): Inst[] {
  const prog: Inst[] = [];
  const emit = (inst: Inst): number => {
    if (prog.length >= MAX_PROGRAM) throw new RegexRefusal('unsupported', 'pattern too large');
    prog.push(inst);
    return prog.length - 1;
  };
  const gen = (node: RegexNode): void => {
    switch (node.t) {
      case 'empty':
        return;
      case 'char':
        emit({ op: 'char', test: node.test });
        return;
      case 'assert':
        emit({ op: 'assert', kind: node.kind });
        return;
      case 'cat':
        for (const item of node.items) gen(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        for (const item of node.items.slice(0, -1)) {
          const split = emit({ op: 'split', x: prog.length + 1, y: -1 });
          gen(item);
          jumps.push(emit({ op: 'jmp', x: -1 }));
          (prog[split] as { y: number }).y = prog.length;
        }
        gen(node.items[node.items.length - 1]!);
        for (const j of jumps) (prog[j] as { x: number }).x = prog.length;
        return;
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) gen(node.node);
        if (node.max === Infinity) {
          const split = emit({ op: 'split', x: prog.length + 1, y: -1 });
          gen(node.node);
          emit({ op: 'jmp', x: split });
          (prog[split] as { y: number }).y = prog.length;
          return;
        }
        const splits: number[] = [];
        for (let i = node.min; i < node.max; i++) {
          splits.push(emit({ op: 'split', x: prog.length + 1, y: -1 }));
          gen(node.node);
        }
        for (const s of splits) (prog[s] as { y: number }).y = prog.length;
        return;
      }
    }
  };
  gen(root);
  emit({ op: 'match' });
  return prog;
}

function holds(kind: AssertKind, input: readonly number[], at: number): boolean {
  const prev = at > 0 ? input[at - 1]! : -1;
  const next = at < input.length ? input[at]! : -1;
  switch (kind) {
    case 'textStart':
      return prev === -1;
    case 'textEnd':
      return next === -1;
    case 'textEndBeforeNewlines':
      for (let i = at; i < input.length; i++) if (input[i] !== 10) return false;
      return true;
    case 'lineStart':
      return prev === -1 || prev === 10;
    case 'lineEnd':
      return next === -1 || next === 10;
    case 'wordBoundary':
      return isWordChar(prev) !== isWordChar(next);
    case 'notWordBoundary':
      return isWordChar(prev) === isWordChar(next);
    case 'wordStart':
      return !isWordChar(prev) && isWordChar(next);
    case 'wordEnd':
      return isWordChar(prev) && !isWordChar(next);
  }
}

/** True when the program matches somewhere in `input` (unanchored, like `find`). */
function run(prog: Inst[], input: readonly number[]): boolean {
  const seen = new Uint32Array(prog.length);
  let generation = 1;
  let budget = REGEX_STEP_BUDGET;
  const stack: number[] = [];
  // Adds pc and everything reachable without consuming; true when that reaches `match`.
  const add = (list: number[], pc: number, at: number): boolean => {
    stack.push(pc);
    while (stack.length > 0) {
      const p = stack.pop()!;
      if (seen[p] === generation) continue;
      seen[p] = generation;
      const inst = prog[p]!;
      if (inst.op === 'match') {
        stack.length = 0;
        return true;
      }
      if (inst.op === 'jmp') stack.push(inst.x);
      else if (inst.op === 'split') stack.push(inst.y, inst.x);
      else if (inst.op === 'assert') {
        if (holds(inst.kind, input, at)) stack.push(p + 1);
      } else list.push(p);
    }
    return false;
  };
  let current: number[] = [];
  for (let at = 0; ; at++) {
    if (add(current, 0, at)) return true;
    if (at === input.length) return false;
    budget -= current.length + 1;
    if (budget < 0) throw new RegexRefusal('budget', 'match exceeds the step budget');
    const cp = input[at]!;
    generation++;
    const following: number[] = [];
    for (const p of current) {
      const inst = prog[p] as { op: 'char'; test: (cp: number) => boolean };
      if (inst.test(cp) && add(following, p + 1, at + 1)) return true;
    }
    current = following;
  }
}

export type RegexResult = boolean | { refused: RefusalKind; detail: string };

type Compiled = Inst[] | { refused: RefusalKind; detail: string };
const cache = new Map<string, Compiled>();
const CACHE_LIMIT = 2000;

function compiled(pattern: string): Compiled {
  let entry = cache.get(pattern);
  if (entry === undefined) {
    try {
      entry = compile(parseRegex(pattern));
    } catch (e) {
      if (!(e instanceof RegexRefusal)) throw e;
      entry = { refused: e.kind, detail: e.message };
    }
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(pattern, entry);
  }
  return entry;
}

/** Whether `pattern` matches somewhere in `text`, or why it cannot be answered. */
export function regexMatches(pattern: string, text: string): RegexResult {
  const prog = compiled(pattern);
  if (!Array.isArray(prog)) return prog;
  try {
    return run(
      prog,
      Array.from(text, (c) => c.codePointAt(0)!),
    );
  } catch (e) {
    if (!(e instanceof RegexRefusal)) throw e;
    return { refused: e.kind, detail: e.message };
  }
}
