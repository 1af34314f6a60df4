import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { parse } from 'yaml';

/**
 * Docker Compose's variable interpolation (compose-spec, "Interpolation"), so a test can check
 * what `docker compose config` would say on a machine without Docker. Every string value of the
 * file is interpolated (keys are not), before profiles are applied, which is why a `${X:?…}` in a
 * service of an unused profile still stops `docker compose up`.
 *
 *   $VAR  ${VAR}        the value, or "" when unset (compose warns)
 *   ${VAR:-default}     default when VAR is unset or empty;  ${VAR-default} only when unset
 *   ${VAR:?error}       error when VAR is unset or empty;     ${VAR?error}   only when unset
 *   ${VAR:+other}       other when VAR is set and not empty;  ${VAR+other}   when set
 *   $$                  a literal $
 * Defaults, errors and replacements are interpolated themselves (`${A:-${B}}`).
 */
export type Interpolation = Readonly<{
  /** the file as compose sees it after interpolation */
  config: unknown;
  /** one line per `${VAR:?}` / `${VAR?}` that failed: compose refuses the whole file */
  errors: string[];
  /** variables read while unset (compose warns and uses "") */
  unset: string[];
}>;

type Env = Readonly<Record<string, string | undefined>>;

export function interpolateComposeFile(path: string, env: Env): Interpolation {
  const errors: string[] = [];
  const unset = new Set<string>();
  const walk = (node: unknown, at: string): unknown => {
    if (typeof node === 'string') return substitute(node, env, at, errors, unset);
    if (Array.isArray(node)) return node.map((item, i) => walk(item, `${at}[${i}]`));
    if (node !== null && typeof node === 'object')
      return Object.fromEntries(
        Object.entries(node).map(([key, value]) => [key, walk(value, at ? `${at}.${key}` : key)]),
      );
    return node;
  };
  // `merge: true`: compose files use YAML merge keys (`<<: *restart`).
  const config = walk(parse(readFileSync(path, 'utf8'), { merge: true }), '');
  return { config, errors, unset: [...unset].sort() };
}

/** An env file as compose reads it (KEY=value lines, `#` comments). */
export function readEnvFile(path: string): Record<string, string> {
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

function substitute(
  text: string,
  env: Env,
  at: string,
  errors: string[],
  unset: Set<string>,
): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0) return out + text.slice(i);
    out += text.slice(i, dollar);
    const next = text[dollar + 1];
    if (next === '$') {
      out += '$';
      i = dollar + 2;
    } else if (next === '{') {
      const close = matchingBrace(text, dollar + 1);
      if (close < 0) throw new Error(`${at}: unclosed \${ in ${JSON.stringify(text)}`);
      out += expression(text.slice(dollar + 2, close), env, at, errors, unset);
      i = close + 1;
    } else {
      const name = NAME.exec(text.slice(dollar + 1))?.[0];
      // A lone `$` (followed by no name) is kept as it is, as compose does.
      if (!name) {
        out += '$';
        i = dollar + 1;
        continue;
      }
      out += lookUp(name, env, unset);
      i = dollar + 1 + name.length;
    }
  }
  return out;
}

function expression(
  body: string,
  env: Env,
  at: string,
  errors: string[],
  unset: Set<string>,
): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new Error(`${at}: invalid interpolation format \${${body}}`);
  const rest = body.slice(name.length);
  if (rest === '') return lookUp(name, env, unset);
  const colon = rest.startsWith(':');
  const operator = rest[colon ? 1 : 0];
  const argument = () => substitute(rest.slice(colon ? 2 : 1), env, at, errors, unset);
  const value = env[name];
  const present = colon ? value !== undefined && value !== '' : value !== undefined;
  switch (operator) {
    case '-':
      return present ? (value ?? '') : argument();
    case '+':
      return present ? argument() : '';
    case '?':
      if (present) return value ?? '';
      errors.push(`${at}: required variable ${name} is missing a value: ${argument()}`);
      return '';
    default:
      throw new Error(`${at}: invalid interpolation format \${${body}}`);
  }
}

function lookUp(name: string, env: Env, unset: Set<string>): string {
  const value = env[name];
  if (value === undefined) unset.add(name);
  return value ?? '';
}

/** The index of the `}` closing the `{` at `open`, counting nested `${…}`. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}
