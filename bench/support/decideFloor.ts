/**
 * bench/decide's floor: /decide with nothing but its irreducible work behind a bare Fastify route,
 * to tell what the server's own plumbing costs from what any /decide must pay on this machine.
 * - `POST /decide/` — our pure evaluator over the same 50 flags and our v3 answer writer, with the
 *   request's person properties taken as complete (no token, hooks, threads, metrics or logs).
 * - `POST /hashes/` — only the SHA-1s PostHog's bucketing needs for those flags (one per rollout
 *   under 100 %, one per multivariate flag) and a fixed answer of the same length: below this no
 *   implementation of /decide in Node can go.
 */
import Fastify from 'fastify';
import { normalizeFlagFilters } from '../../commands/featureFlags/model/flagFilters.ts';
import {
  type EvaluableFlag,
  evaluateFlags,
} from '../../projections/featureFlags/evaluation/evaluateFlags.ts';
import { flagHash } from '../../projections/featureFlags/evaluation/hashing.ts';
import { decideV3 } from '../../queries/decide/decideResponse.ts';
import { flagSet } from './decideFixtures.ts';

const flags: EvaluableFlag[] = flagSet().map((f, i) => ({
  id: i + 1,
  key: f.key,
  active: true,
  filters: normalizeFlagFilters(f.filters as never),
}));
const hashes: { key: string; salt: string }[] = flags.flatMap((f) => [
  ...(f.filters?.groups ?? [])
    .filter((g) => g.rollout_percentage !== null && (g.rollout_percentage ?? 100) < 100)
    .map(() => ({ key: f.key, salt: '' })),
  ...(f.filters?.multivariate?.variants?.length ? [{ key: f.key, salt: 'variant' }] : []),
]);
const meta = new Map();
type Body = { distinct_id?: unknown; person_properties?: Record<string, unknown> };
const answerOf = (distinctId: string, properties: Record<string, unknown>) =>
  decideV3({
    evaluations: evaluateFlags(
      flags,
      { distinctId, person: { properties, complete: true } },
      { now: () => new Date() },
    ),
    errors: false,
    meta,
  });
// The hashes-only answer: the evaluator's for person-7 with the hashes' sum in it (~16 bytes more),
// so the work cannot be skipped.
const template = answerOf('person-7', {});

const app = Fastify();
app.post('/decide/', async (request, reply) => {
  const body = request.body as Body;
  reply.header('content-type', 'application/json; charset=utf-8');
  return answerOf(String(body.distinct_id), body.person_properties ?? {});
});
app.post('/hashes/', async (request, reply) => {
  const id = String((request.body as Body).distinct_id);
  let sum = 0;
  for (const h of hashes) sum += flagHash(h.key, id, h.salt);
  reply.header('content-type', 'application/json; charset=utf-8');
  return `{"sum":${sum.toFixed(6)},${template.slice(1)}`;
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url} (${hashes.length} hashes a request)`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
