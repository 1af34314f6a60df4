import createHogQLParser, { type HogQLParser } from '@posthog/hogql-parser';
import { HogQLError } from './errors.ts';

/** A node of PostHog's HogQL AST as the parser's JSON gives it (posthog/hogql/ast.py). */
export type Node = Readonly<{
  node: string;
  start?: Readonly<{ offset: number }>;
  end?: Readonly<{ offset: number }>;
  // biome-ignore lint/suspicious/noExplicitAny: the AST's fields depend on `node`
  [key: string]: any;
}>;

/** Longest query text parsed: PostHog has no limit, but ANTLR's time grows with the text. */
export const MAX_QUERY_LENGTH = 100_000;

let loading: Promise<HogQLParser> | undefined;

/** PostHog's C++ parser as WebAssembly: one instance for the process, loaded on first use (≈ 50 ms). */
export function hogqlParser(): Promise<HogQLParser> {
  loading ??= createHogQLParser().catch((error: unknown) => {
    loading = undefined; // a failed load is retried by the next query
    throw error;
  });
  return loading;
}

const parsed = (json: string, text: string): Node => {
  let result: Node & { error?: boolean; message?: string };
  try {
    result = JSON.parse(json);
  } catch {
    throw new HogQLError('The query could not be parsed');
  }
  if (result.error) {
    const start = result.start?.offset;
    const end = result.end?.offset;
    throw new HogQLError(`${result.type ?? 'SyntaxError'}: ${result.message ?? 'invalid query'}`, {
      ...(start !== undefined ? { start: Math.min(start, text.length) } : {}),
      ...(end !== undefined ? { end: Math.min(end, text.length) } : {}),
    });
  }
  return result;
};

/** The WebAssembly parser can run out of stack on deep nesting: the query's fault, not ours. */
const guarded = (parse: () => string): string => {
  try {
    return parse();
  } catch (error) {
    if (error instanceof HogQLError) throw error;
    throw new HogQLError('The query is too deeply nested to parse');
  }
};

const checked = (text: string) => {
  if (text.length > MAX_QUERY_LENGTH)
    throw new HogQLError(`The query is longer than ${MAX_QUERY_LENGTH} characters`);
  if (text.trim() === '') throw new HogQLError('The query is empty');
  return text;
};

/** A SELECT (or UNION of SELECTs) as PostHog's AST; a syntax error is a HogQLError with its position. */
export async function parseSelect(text: string): Promise<Node> {
  const parser = await hogqlParser();
  return parsed(
    guarded(() => parser.parseSelect(checked(text))),
    text,
  );
}

/** One expression (a `where` item, `filtersExpr`) as PostHog's AST. */
export async function parseExpr(text: string): Promise<Node> {
  const parser = await hogqlParser();
  return parsed(
    guarded(() => parser.parseExpr(checked(text))),
    text,
  );
}
