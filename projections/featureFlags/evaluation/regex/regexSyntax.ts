/**
 * Parser for the flag `regex` operators' patterns, in the syntax of Rust's `regex` crate (what
 * PostHog's flags service compiles, through `fancy_regex`): literals and escapes (`\n`, `\x7F`,
 * `\x{…}`, `\u…`, escaped punctuation), `.`, classes with ranges, negation, nesting, `\d\w\s`,
 * `\p{…}` and `[:alpha:]`, anchors `^ $ \A \z \b \B \< \>`, groups (capturing, `(?:…)`, named),
 * inline flags `i m s` (`(?i)` and `(?i:…)`), alternation and greedy or lazy repetition, and
 * fancy_regex's extra escapes `\h \H \e \K \G \Z \O \N \R`.
 *
 * The result is either a tree or a refusal: `invalid` (Rust rejects the pattern too: PostHog then
 * answers false for both `regex` and `not_regex`) or `unsupported` (valid for `fancy_regex` but not
 * here: look-around, back-references, subroutine calls, atomic groups, possessive repetition,
 * class set operations, verbose mode).
 */
import {
  type CharTest,
  caseless,
  classEscape,
  posixClass,
  unicodeProperty,
} from './charClasses.ts';
import {
  ASSERTIONS,
  type AssertKind,
  invalid,
  LINE_BREAK,
  type RegexNode,
  SIMPLE_ESCAPES,
  unsupported,
} from './regexTree.ts';

type Flags = { i: boolean; m: boolean; s: boolean };

type Escaped = { cp: number } | { test: CharTest } | { assert: AssertKind };

const MAX_REPEAT = 1000;

class Parser {
  private pos = 0;
  constructor(private readonly cps: number[]) {}

  private peek(offset = 0): string | undefined {
    const cp = this.cps[this.pos + offset];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }
  private next(): string {
    const c = this.peek();
    if (c === undefined) invalid('unexpected end of pattern');
    this.pos++;
    return c!;
  }
  private eat(text: string): boolean {
    for (let i = 0; i < text.length; i++) if (this.peek(i) !== text[i]) return false;
    this.pos += text.length;
    return true;
  }

  parse(): RegexNode {
    const node = this.alternation({ i: false, m: false, s: false });
    if (this.pos < this.cps.length) invalid('unopened group');
    return node;
  }

  private alternation(flags: Flags): RegexNode {
    const branches = [this.concat(flags)];
    while (this.eat('|')) branches.push(this.concat(flags));
    return branches.length === 1 ? branches[0]! : { t: 'alt', items: branches };
  }

  private concat(flags: Flags): RegexNode {
    const items: RegexNode[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      if (c === '*' || c === '+' || c === '?') invalid('repetition operator missing expression');
      if (c === '(' && this.peek(1) === '?' && this.flagGroupEndsHere(flags)) continue;
      const atom = this.atom(flags);
      items.push(this.quantified(atom));
    }
    return items.length === 1
      ? items[0]!
      : items.length === 0
        ? { t: 'empty' }
        : { t: 'cat', items };
  }

  /** `(?flags)`: changes the flags for the rest of the enclosing group. */
  private flagGroupEndsHere(flags: Flags): boolean {
    const start = this.pos;
    const ahead = String.fromCodePoint(...this.cps.slice(start + 2, start + 18));
    if (!/^[a-zA-Z-]*\)/.test(ahead)) return false;
    this.pos += 2;
    const updated = this.readFlags({ ...flags });
    if (updated && this.eat(')')) {
      Object.assign(flags, updated);
      return true;
    }
    this.pos = start;
    return false;
  }

  /** Reads `imsU…` (with `-`); undefined when the text is not a flag list. */
  private readFlags(flags: Flags): Flags | undefined {
    let negate = false;
    let any = false;
    for (let c = this.peek(); c !== undefined && /[a-zA-Z-]/.test(c); c = this.peek()) {
      this.pos++;
      if (c === '-') {
        if (negate) invalid('repeated negation in flags');
        negate = true;
      } else if (c === 'i' || c === 'm' || c === 's') {
        flags[c] = !negate;
        any = true;
      } else if (c === 'U' || c === 'u') {
        any = true; // greed swapping and Unicode mode do not change whether a match exists
      } else if (c === 'x' || c === 'R') {
        unsupported(`flag ${c}`);
      } else invalid(`unknown flag ${c}`);
    }
    const c = this.peek();
    if (c !== ')' && c !== ':') return undefined;
    if (!any) invalid('empty flag group');
    return flags;
  }

  private quantified(atom: RegexNode): RegexNode {
    let node = atom;
    for (let repeated = false; ; repeated = true) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const counted = this.counted();
        if (!counted) return node;
        [min, max] = counted;
      } else return node;
      if (c !== '{') this.pos++;
      this.eat('?'); // lazy: the same strings match
      if (this.peek() === '+') unsupported('possessive repetition');
      if (repeated) invalid('nested repetition without a group');
      node = { t: 'repeat', node, min, max };
    }
  }

  private counted(): [number, number] | undefined {
    const rest = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 24));
    const m = /^\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}/.exec(rest);
    if (!m) invalid('invalid repetition');
    const min = Number(m![1]);
    const max = m![2] === undefined ? min : m![3] === '' ? Infinity : Number(m![3]);
    if (max < min) invalid('invalid repetition range');
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT))
      unsupported(`repetition count above ${MAX_REPEAT}`);
    this.pos += m![0].length;
    return [min, max];
  }

  private atom(flags: Flags): RegexNode {
    const c = this.next();
    const lit = (test: CharTest): RegexNode => ({
      t: 'char',
      test: flags.i ? caseless(test) : test,
    });
    switch (c) {
      case '.':
        return { t: 'char', test: flags.s ? () => true : (cp) => cp !== 10 };
      case '^':
        return { t: 'assert', kind: flags.m ? 'lineStart' : 'textStart' };
      case '$':
        return { t: 'assert', kind: flags.m ? 'lineEnd' : 'textEnd' };
      case '[':
        return lit(this.charClass());
      case '(':
        return this.group(flags);
      case '\\':
        return this.escapeNode(flags);
      default: {
        const cp = c.codePointAt(0)!;
        return lit((x) => x === cp);
      }
    }
  }

  private group(outer: Flags): RegexNode {
    const flags = { ...outer };
    if (this.eat('?')) {
      if (this.eat('=') || this.eat('!') || this.eat('<=') || this.eat('<!'))
        unsupported('look-around');
      if (this.eat('>')) unsupported('atomic group');
      if (this.eat('P=') || this.eat('P>')) unsupported('back-reference or recursion');
      if (this.eat('P<') || this.eat('<')) this.groupName();
      else if (!this.eat(':')) {
        if (!this.readFlags(flags) || !this.eat(':')) invalid('unclosed flag group');
      }
    }
    const node = this.alternation(flags);
    if (!this.eat(')')) invalid('unclosed group');
    return node;
  }

  private groupName(): void {
    const start = this.pos;
    while (this.peek() !== undefined && /[\w.[\]]/.test(this.peek()!)) this.pos++;
    if (this.pos === start || /\d/.test(String.fromCodePoint(this.cps[start]!)) || !this.eat('>'))
      invalid('invalid group name');
  }

  private hexEscape(fixed: number): number {
    let digits = '';
    if (this.eat('{')) {
      while (this.peek() !== '}') digits += this.next();
      this.pos++;
    } else for (let i = 0; i < fixed; i++) digits += this.next();
    if (!/^[0-9a-fA-F]{1,8}$/.test(digits)) invalid('invalid hex escape');
    const cp = Number.parseInt(digits, 16);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) invalid('invalid code point');
    return cp;
  }

  /** After a backslash: a code point, a class escape or (outside classes) an assertion. */
  private escape(inClass: boolean): Escaped {
    const c = this.next();
    const cls = classEscape(c);
    if (cls) return { test: cls };
    if (c === 'p' || c === 'P') {
      const name = this.eat('{') ? this.until('}') : this.next();
      const test = unicodeProperty(name) ?? unsupported(`Unicode property ${name}`);
      return { test: c === 'P' ? (cp: number) => !test(cp) : test };
    }
    const kind = ASSERTIONS[c];
    if (kind && !inClass) {
      if (c === 'b' && this.peek() === '{') unsupported('\\b{…} boundaries');
      return { assert: kind };
    }
    if (c in SIMPLE_ESCAPES) return { cp: SIMPLE_ESCAPES[c]! };
    if (c === 'x') return { cp: this.hexEscape(2) };
    if (c === 'u') return { cp: this.hexEscape(4) };
    if (c === 'U') return { cp: this.hexEscape(8) };
    if (/[1-9]/.test(c) || c === 'k') return unsupported('back-reference');
    if (c === 'g') return unsupported('subroutine call');
    if (/[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e ]/.test(c)) return { cp: c.codePointAt(0)! };
    return invalid(`unrecognized escape \\${c}`);
  }

  private escapeNode(flags: Flags): RegexNode {
    // fancy_regex: \K only moves the reported start of the match; \R is any line break.
    if (this.eat('K')) return { t: 'empty' };
    if (this.eat('R')) return LINE_BREAK;
    const e = this.escape(false);
    if ('assert' in e) return { t: 'assert', kind: e.assert };
    if ('test' in e) return { t: 'char', test: flags.i ? caseless(e.test) : e.test };
    const cp = e.cp;
    return { t: 'char', test: flags.i ? caseless((x) => x === cp) : (x) => x === cp };
  }

  private until(end: string): string {
    let text = '';
    while (this.peek() !== end) text += this.next();
    this.pos++;
    return text;
  }

  /** After `[`: a set of ranges, escapes, POSIX classes and nested classes, maybe negated. */
  private charClass(): CharTest {
    const negated = this.eat('^');
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) invalid('unclosed character class');
      if (c === ']' && !first) break;
      first = false;
      if (this.eat('[:')) {
        const name = this.until(':');
        if (!this.eat(']')) invalid('invalid POSIX class');
        const test = posixClass(name.replace(/^\^/, '')) ?? invalid(`unknown POSIX class ${name}`);
        tests.push(name.startsWith('^') ? (cp) => !test(cp) : test);
        continue;
      }
      if (c === '[') {
        this.pos++;
        tests.push(this.charClass());
        continue;
      }
      if (['&&', '--', '~~'].some((op) => this.eat(op))) unsupported('class set operation');
      const lo = this.classAtom();
      if (typeof lo === 'number' && this.peek() === '-' && this.peek(1) !== ']') {
        this.pos++;
        const hi = this.classAtom();
        if (typeof hi !== 'number' || hi < lo) invalid('invalid class range');
        tests.push((cp) => cp >= lo && cp <= (hi as number));
      } else tests.push(typeof lo === 'number' ? (cp) => cp === lo : lo);
    }
    this.pos++;
    const any: CharTest = (cp) => tests.some((t) => t(cp));
    return negated ? (cp) => !any(cp) : any;
  }

  /** One class member: a code point (can start a range) or a class escape. */
  private classAtom(): number | CharTest {
    const c = this.next();
    if (c !== '\\') return c.codePointAt(0)!;
    const e = this.escape(true);
    if ('assert' in e) return invalid('assertion inside a class');
    return 'cp' in e ? e.cp : e.test;
  }
}

/** Parses `pattern`; throws RegexRefusal. */
export function parseRegex(pattern: string): RegexNode {
  return new Parser(Array.from(pattern, (c) => c.codePointAt(0)!)).parse();
}
