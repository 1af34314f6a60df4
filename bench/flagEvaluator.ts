/**
 * bench/flagEvaluator: the pure flag evaluator alone, in this process (no HTTP, no database).
 *   npx tsx bench/flagEvaluator.ts [--ids 10000 --rounds 5]
 * The flag mix of issue #9's bench/decide: 50 flags (20 rollouts, 15 multivariate with payloads,
 * 8 `email icontains`, 7 `country exact`), each round evaluating all 50 for every id with complete
 * person properties, a different distinct id each time. Prints flag evaluations per second and
 * ids (whole /decide evaluations) per second, best and median round, after one warm-up round.
 */
import { parseArgs } from 'node:util';
import {
  type EvaluableFlag,
  type EvaluationContext,
  evaluateFlags,
} from '../projections/featureFlags/evaluation/evaluateFlags.ts';

const { values } = parseArgs({
  options: { ids: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '5' } },
});
const ids = Number(values.ids);
const rounds = Number(values.rounds);

const variants = [
  { key: 'control', rollout_percentage: 50 },
  { key: 'test', rollout_percentage: 30 },
  { key: 'other', rollout_percentage: 20 },
];
const flags: EvaluableFlag[] = [];
const add = (filters: EvaluableFlag['filters']) =>
  flags.push({ id: flags.length + 1, key: `flag-${flags.length}`, active: true, filters });
for (let i = 0; i < 20; i++) add({ groups: [{ properties: [], rollout_percentage: 5 + i * 4 }] });
for (let i = 0; i < 15; i++) {
  add({
    groups: [{ properties: [], rollout_percentage: 100 }],
    multivariate: { variants },
    payloads: { control: '{"color": "blue"}', test: '{"color": "red"}', other: '"plain"' },
  });
}
for (let i = 0; i < 8; i++) {
  const email = {
    key: 'email',
    value: `@example${i % 3}.com`,
    operator: 'icontains',
    type: 'person',
  };
  add({ groups: [{ properties: [email], rollout_percentage: 50 }] } as EvaluableFlag['filters']);
}
for (let i = 0; i < 7; i++) {
  const country = {
    key: 'country',
    value: ['US', 'FR', 'DE'][i % 3],
    operator: 'exact',
    type: 'person',
  };
  add({
    groups: [{ properties: [country], rollout_percentage: null }],
  } as EvaluableFlag['filters']);
}

const countries = ['US', 'FR', 'DE', 'GB', 'JP'];
const contexts: EvaluationContext[] = Array.from({ length: ids }, (_, i) => ({
  distinctId: `user-${i}-${(i * 2654435761) % 1e9}`,
  person: {
    properties: { email: `person${i}@example${i % 4}.com`, country: countries[i % 5] },
    complete: true,
  },
  hashKeyOverrides: {},
}));
const options = { now: () => new Date() };

let enabled = 0;
function round(): number {
  const start = process.hrtime.bigint();
  for (const context of contexts) {
    for (const r of evaluateFlags(flags, context, options))
      if (r.outcome === 'evaluated' && r.enabled) enabled++;
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

round();
const times = Array.from({ length: rounds }, round).sort((a, b) => a - b);
const rate = (seconds: number) => ({
  flagEvaluationsPerSecond: Math.round((ids * flags.length) / seconds),
  idsPerSecond: Math.round(ids / seconds),
  microsecondsPerId: Number(((seconds / ids) * 1e6).toFixed(1)),
});
console.log(
  JSON.stringify(
    {
      node: process.version,
      flags: flags.length,
      ids,
      rounds,
      best: rate(times[0]!),
      median: rate(times[Math.floor(times.length / 2)]!),
      enabledShare: Number((enabled / ((rounds + 1) * ids * flags.length)).toFixed(3)),
    },
    null,
    2,
  ),
);
