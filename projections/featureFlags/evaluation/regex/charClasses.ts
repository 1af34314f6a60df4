/**
 * Character tests for the flag regex engine, with Rust `regex` semantics (Unicode mode, its
 * default): `\d` is any decimal digit (`\p{Nd}`), `\s` Unicode white space, `\w` the Unicode word
 * characters; POSIX classes (`[:alpha:]`) are ASCII-only, as in Rust.
 */
export type CharTest = (cp: number) => boolean;

const unicode = (source: string): CharTest => {
  const re = new RegExp(`^[${source}]$`, 'u');
  return (cp) => re.test(String.fromCodePoint(cp));
};

const isDigit = unicode('\\p{Nd}');
const isSpace = unicode('\\p{White_Space}');
const isWordUnicode = unicode('\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}');

const asciiWord = (cp: number) =>
  (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95;

/** `\w` (fast for ASCII); -1 (before the start / after the end) is not a word character. */
export const isWordChar: CharTest = (cp) =>
  cp < 0 ? false : cp < 128 ? asciiWord(cp) : isWordUnicode(cp);

const digit: CharTest = (cp) => (cp >= 48 && cp <= 57) || (cp >= 128 && isDigit(cp));
const space: CharTest = (cp) => cp === 32 || (cp >= 9 && cp <= 13) || (cp >= 128 && isSpace(cp));

export function classEscape(letter: string): CharTest | undefined {
  switch (letter) {
    case 'd':
      return digit;
    case 'D':
      return (cp) => !digit(cp);
    case 'w':
      return isWordChar;
    case 'W':
      return (cp) => !isWordChar(cp);
    case 's':
      return space;
    case 'S':
      return (cp) => !space(cp);
    // fancy_regex extras: hex digit, any character, any but a newline
    case 'h':
      return POSIX.xdigit;
    case 'H':
      return (cp) => !POSIX.xdigit!(cp);
    case 'O':
      return () => true;
    case 'N':
      return (cp) => cp !== 10;
    default:
      return undefined;
  }
}

const range = (lo: string, hi: string) => (cp: number) =>
  cp >= lo.codePointAt(0)! && cp <= hi.codePointAt(0)!;
const isUpper = range('A', 'Z');
const isLower = range('a', 'z');
const isAsciiDigit = range('0', '9');
const isPunct = (cp: number) =>
  (cp >= 33 && cp <= 47) ||
  (cp >= 58 && cp <= 64) ||
  (cp >= 91 && cp <= 96) ||
  (cp >= 123 && cp <= 126);

const POSIX: Record<string, CharTest> = {
  alnum: (cp) => isUpper(cp) || isLower(cp) || isAsciiDigit(cp),
  alpha: (cp) => isUpper(cp) || isLower(cp),
  ascii: (cp) => cp <= 127,
  blank: (cp) => cp === 32 || cp === 9,
  cntrl: (cp) => cp <= 31 || cp === 127,
  digit: isAsciiDigit,
  graph: (cp) => cp >= 33 && cp <= 126,
  lower: isLower,
  print: (cp) => cp >= 32 && cp <= 126,
  punct: isPunct,
  space: (cp) => cp === 32 || (cp >= 9 && cp <= 13),
  upper: isUpper,
  word: asciiWord,
  xdigit: (cp) => isAsciiDigit(cp) || range('a', 'f')(cp) || range('A', 'F')(cp),
};

export const posixClass = (name: string): CharTest | undefined => POSIX[name];

const properties = new Map<string, CharTest | undefined>();

/** `\p{…}`: a general category, script or binary property JavaScript also knows. */
export function unicodeProperty(name: string): CharTest | undefined {
  if (properties.has(name)) return properties.get(name);
  let test: CharTest | undefined;
  const trimmed = name.trim();
  const negated = trimmed.startsWith('^');
  const body = negated ? trimmed.slice(1) : trimmed;
  for (const candidate of [body, `Script=${body}`, body.replace(/[:=]/, '=')]) {
    try {
      const t = unicode(`\\p{${candidate}}`);
      test = negated ? (cp) => !t(cp) : t;
      break;
    } catch {
      // not a name JavaScript knows in this form; try the next
    }
  }
  if (properties.size < 256) properties.set(name, test);
  return test;
}

/** Case-insensitive: the code point, its lower and its upper case (simple mappings only). */
export function caseless(test: CharTest): CharTest {
  return (cp) => {
    if (test(cp)) return true;
    const s = String.fromCodePoint(cp);
    for (const other of [s.toLowerCase(), s.toUpperCase()]) {
      const o = other.codePointAt(0)!;
      if (o !== cp && other.length === String.fromCodePoint(o).length && test(o)) return true;
    }
    return false;
  };
}
