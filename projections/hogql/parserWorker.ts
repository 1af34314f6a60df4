import { parentPort } from 'node:worker_threads';
import createHogQLParser, { type HogQLParser } from '@posthog/hogql-parser';

/**
 * PostHog's parser in a thread of its own (parser.ts): its time grows steeply with nesting, and a
 * deep enough query overflows its WebAssembly stack and leaves the instance unusable. Here a slow
 * parse blocks no request but its own, and a crashed instance is replaced before the next parse.
 */
export type ParseRequest = { id: number; kind: 'select' | 'expr'; text: string };
export type ParseReply = { id: number; json?: string; crashed?: string };

let parser: HogQLParser | undefined;

// loaded before the first request, which then times only its parse (id -1: ready)
parser = await createHogQLParser();
parentPort?.postMessage({ id: -1 } satisfies ParseReply);

parentPort?.on('message', async (request: ParseRequest) => {
  try {
    parser ??= await createHogQLParser();
    const json =
      request.kind === 'select' ? parser.parseSelect(request.text) : parser.parseExpr(request.text);
    parentPort?.postMessage({ id: request.id, json } satisfies ParseReply);
  } catch (error) {
    parser = undefined;
    parentPort?.postMessage({
      id: request.id,
      crashed: error instanceof Error ? error.message : String(error),
    } satisfies ParseReply);
  }
});
