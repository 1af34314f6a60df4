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

/**
 * Queries parsed once before the thread says it is ready: ANTLR builds its prediction caches on
 * the first parses (a first 150-character SELECT took 290 ms, the same one again 26 ms), so the
 * common constructs are paid for at start, not by the first user's query or its parse limit.
 */
const WARM_UP: readonly ['select' | 'expr', string][] = [
  [
    'select',
    "WITH x AS (SELECT person_id FROM events WHERE event IN ('a', 'b')) SELECT e.event, properties.$browser, person.properties.email, count() AS c, if(c > 1, 'y', 'n') FROM events e LEFT JOIN persons p ON e.person_id = p.id WHERE e.person_id IN (SELECT person_id FROM x) AND timestamp > now() - interval 7 day AND NOT (distinct_id = {id} OR properties['k'] ILIKE '%q%') GROUP BY 1, 2, 3 HAVING c >= 2 ORDER BY c DESC LIMIT 10 OFFSET 5",
  ],
  [
    'select',
    'SELECT arrayMap(x -> x * 2, [1, 2]), CASE WHEN 1 THEN 2 ELSE 3 END, row_number() OVER (PARTITION BY a ORDER BY b) FROM numbers(3) UNION ALL SELECT 1, 2, 3',
  ],
  ['expr', "event = '$pageview' and toFloat(properties.x) > 3.5 or person.properties.email != ''"],
];

// loaded before the first request, which then times only its parse (id -1: ready)
parser = await createHogQLParser();
for (const [kind, text] of WARM_UP)
  kind === 'select' ? parser.parseSelect(text) : parser.parseExpr(text);
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
