import type { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { ServiceUnavailable } from '../../src/core/errors.ts';
import { startWorker } from '../../src/runtime/workerThread.ts';
import { HogQLError } from './errors.ts';
import { exactIntegersJson, exactNumbers } from './numbers.ts';
import type { ParseReply, ParseRequest } from './parserWorker.ts';

/** A node of PostHog's HogQL AST as the parser's JSON gives it (posthog/hogql/ast.py). */
export type Node = Readonly<{
  node: string;
  start?: Readonly<{ offset: number }>;
  end?: Readonly<{ offset: number }>;
  // biome-ignore lint/suspicious/noExplicitAny: the AST's fields depend on `node`
  [key: string]: any;
}>;

/** Longest query text parsed: PostHog has no limit, but the parser's time grows with the text. */
export const MAX_QUERY_LENGTH = 100_000;
/**
 * Deepest nesting of (, [, {, CASE and NOT parsed (nestingDepth). The parser's time grows steeply
 * with it (measured on 2 busy cores: 18 parentheses 0.2 s, 22 up to 150 s) and 200 brackets
 * overflow its stack.
 */
export const MAX_NESTING = 20;
/**
 * Parsed queries kept, by kind and text: dashboards, the events list's `where` items and insight
 * filters send the same text again and again, and PostHog's parser costs 2–17 ms of CPU for a
 * 70–220-character query (docs/PERFORMANCE.md "bench:hogql"); a hit costs a JSON.parse. Bounded
 * by count and by the characters held (keys and ASTs' JSON, ≈ bytes); the least recently used go
 * first. Syntax errors are kept too (the same position each time); crashes and timeouts are not.
 */
export const PARSE_CACHE_MAX_ENTRIES = 5_000;
export const PARSE_CACHE_MAX_CHARS = 64 * 1024 * 1024;
const parses = new LRUCache<string, string>({
  max: PARSE_CACHE_MAX_ENTRIES,
  maxSize: PARSE_CACHE_MAX_CHARS,
  // one huge query (an IN list of 100,000 values) may not push out thousands of small ones
  maxEntrySize: PARSE_CACHE_MAX_CHARS / 16,
  sizeCalculation: (json, key) => json.length + key.length,
  // the same text asked while its parse runs waits for that parse (a dashboard's tiles at once)
  fetchMethod: (key) => parseInThread(key[0] === 's' ? 'select' : 'expr', key.slice(1)),
});
/** A parse that takes longer is abandoned (its thread ended) and answered 400. */
export const PARSE_TIMEOUT_MS = 10_000;
/** Time a new parser thread has to load (tsx and the WebAssembly; seconds on busy cores). */
const START_TIMEOUT_MS = 60_000;
/**
 * A parser thread that cannot start, or dies under a parse twice, is an outage, not the query's
 * fault: 503 with Retry-After, and the next parse starts a new thread.
 */
const unavailable = () =>
  new ServiceUnavailable('The HogQL parser is not running (it is being restarted); retry shortly.');

/** Which thread runs the parser and how long it has to start: tests start one that cannot. */
type ParserThreadSetup = Readonly<{ entry: URL; data: unknown; startTimeoutMs: number }>;
const PARSER_THREAD: ParserThreadSetup = {
  entry: new URL('./parserWorker.ts', import.meta.url),
  data: null,
  startTimeoutMs: START_TIMEOUT_MS,
};
let setup = PARSER_THREAD;

type Pending = {
  request: ParseRequest;
  resolve: (json: string) => void;
  reject: (error: Error) => void;
  /** the parse limit's timer, set once the parse is sent */
  timer: NodeJS.Timeout | undefined;
  thread: Worker;
  retried: boolean;
};

/** The one parser thread of the process, started on first use, replaced when it hangs or dies. */
let worker: Worker | undefined;
/** each thread's start: resolved once its parser is loaded */
const started = new WeakMap<Worker, Promise<void>>();
const pending = new Map<number, Pending>();
let nextId = 0;

/**
 * Replaces the parser thread's module (`entry`, given `data` as its workerData.data) and start
 * limit, ending the current thread; with no argument, the real parser again. For tests of a
 * parser that cannot start or dies.
 */
export function replaceParserThread(
  replacement: Partial<ParserThreadSetup> & Pick<ParserThreadSetup, 'entry'> = PARSER_THREAD,
): void {
  setup = { ...PARSER_THREAD, ...replacement };
  const current = worker;
  worker = undefined;
  void current?.terminate();
}

function parserThread(): Worker {
  if (worker) return worker;
  const w = startWorker(setup.entry, setup.data);
  w.unref(); // an idle parser keeps no process alive
  started.set(
    w,
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(unavailable());
        // a thread that did not start in time is ended: the next parse starts another
        if (worker === w) worker = undefined;
        void w.terminate();
      }, setup.startTimeoutMs);
      timer.unref();
      w.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      const failed = () => {
        clearTimeout(timer);
        reject(unavailable());
      };
      w.once('error', failed);
      w.once('exit', failed);
    }),
  );
  w.on('message', (reply: ParseReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    clearTimeout(p.timer);
    if (reply.crashed !== undefined)
      p.reject(new HogQLError('The query is too complex to parse (too deeply nested or too long)'));
    else p.resolve(reply.json ?? '');
  });
  // parses queued behind one that hung (or a thread that died) go to the next thread, once
  const gone = () => {
    if (worker === w) worker = undefined;
    for (const [id, p] of pending) {
      if (p.thread !== w) continue;
      if (p.retried) {
        pending.delete(id);
        clearTimeout(p.timer);
        p.reject(unavailable());
      } else {
        p.retried = true;
        clearTimeout(p.timer);
        p.thread = parserThread();
        dispatch(p);
      }
    }
  };
  w.on('error', gone);
  w.on('exit', gone);
  worker = w;
  return w;
}

/**
 * Starts the parser thread and waits until it is loaded and warmed (parserWorker.ts): called at
 * the server's start, so the first query does not pay seconds of loading on busy cores.
 */
export async function warmParser(): Promise<void> {
  await started.get(parserThread());
}

/**
 * Sends a parse to its thread once the thread is loaded and warmed: the parse limit counts the
 * parse, never a thread's start (seconds on busy cores), also for a parse moved to a new thread.
 */
function dispatch(p: Pending): void {
  const thread = p.thread;
  void started.get(thread)!.then(
    () => {
      if (p.thread !== thread || !pending.has(p.request.id)) return;
      p.timer = setTimeout(() => {
        pending.delete(p.request.id);
        p.reject(
          new HogQLError(
            `The query took longer than ${PARSE_TIMEOUT_MS / 1000} s to parse; simplify its nesting`,
          ),
        );
        // the thread is stuck in this parse: end it, the next query starts another
        if (worker === thread) worker = undefined;
        void thread.terminate();
      }, PARSE_TIMEOUT_MS);
      thread.postMessage(p.request);
    },
    (error: Error) => {
      if (p.thread !== thread || !pending.delete(p.request.id)) return;
      p.reject(error);
    },
  );
}

function parseInThread(kind: ParseRequest['kind'], text: string): Promise<string> {
  const request: ParseRequest = { id: nextId++, kind, text };
  return new Promise((resolve, reject) => {
    const p: Pending = {
      request,
      resolve,
      reject,
      timer: undefined,
      thread: parserThread(),
      retried: false,
    };
    pending.set(request.id, p);
    dispatch(p);
  });
}

/**
 * How deep (, [, { and CASE … END nest outside strings, quoted names and comments, a run of NOTs
 * counting as that many levels: the parser's time grows as steeply with `NOT NOT …` and nested
 * CASE as with parentheses (measured: 80 NOTs 2.5 s, 200 past the 10 s limit, holding the one
 * parser thread every query waits for).
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let nots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') continue;
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /\w/.test(text[j]!)) j++;
      // a field's part (`properties.end`) is a name, not a keyword
      const word = text[i - 1] === '.' ? '' : text.slice(i, j).toLowerCase();
      i = j - 1;
      if (word === 'not') {
        max = Math.max(max, depth + ++nots);
        continue;
      }
      if (word === 'case') max = Math.max(max, ++depth);
      else if (word === 'end') depth--;
    } else if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 1;
    } else if (c === '(' || c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ')' || c === ']' || c === '}') depth--;
    nots = 0;
  }
  return max;
}

const parsed = (json: string, text: string): Node => {
  let result: Node & { error?: boolean; message?: string };
  try {
    result = JSON.parse(exactIntegersJson(json));
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
  return exactNumbers(result, text);
};

const checked = (text: string) => {
  if (text.length > MAX_QUERY_LENGTH)
    throw new HogQLError(`The query is longer than ${MAX_QUERY_LENGTH} characters`);
  if (text.trim() === '') throw new HogQLError('The query is empty');
  if (nestingDepth(text) > MAX_NESTING)
    throw new HogQLError(
      `The query nests parentheses, brackets, CASE or NOT more than ${MAX_NESTING} deep`,
    );
  return text;
};

/** A SELECT (or UNION of SELECTs) as PostHog's AST; a syntax error is a HogQLError with its position. */
export async function parseSelect(text: string): Promise<Node> {
  return parsed((await parses.fetch(`s${checked(text)}`)) ?? '', text);
}

/** One expression (a `where` item, `filtersExpr`) as PostHog's AST. */
export async function parseExpr(text: string): Promise<Node> {
  return parsed((await parses.fetch(`e${checked(text)}`)) ?? '', text);
}

/** The parse cache's size, for tests and the bench. */
export const parseCacheStats = () => ({ entries: parses.size, chars: parses.calculatedSize });
