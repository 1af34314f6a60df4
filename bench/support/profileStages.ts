/**
 * Classifies the samples of V8 CPU profiles (`node --cpu-prof`, one .cpuprofile a thread) into
 * issue #27's stages of ingestion, by walking each sample's stack from the innermost frame out:
 * the innermost frame of ours (a repository file outside node_modules) that a stage rule names
 * decides; a sample with no such frame goes to the innermost library frame a rule names (the pg
 * driver, fastify, node:http…) if it lies below every frame of ours; native frames (JSON.parse,
 * chDB's query) have no rule and count for their caller. GC and idle are V8's own pseudo-frames.
 * Limits: the pg driver reading any answer counts as the durable append (its callbacks run with no
 * frame of ours above them), and GC cannot be told apart by who allocated.
 *   npx tsx bench/support/profileStages.ts [--events N] [--from-us T --to-us T] FILE.cpuprofile…
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const STAGES = [
  'receive and parse',
  'normalise and enrich',
  'durable append',
  'ClickHouse insert',
  'persons',
  'GC',
  'idle',
  'the rest',
] as const;
export type Stage = (typeof STAGES)[number];

type Frame = { functionName: string; url: string };
type Rule = { stage: Stage; url?: RegExp; fn?: RegExp };

const OUR_RULES: Rule[] = [
  { stage: 'receive and parse', fn: /^(decodeCaptureRequest|parseCaptureBatch)$/ },
  {
    stage: 'receive and parse',
    url: /\/(parseCaptureBatch|decodeCapture\w*)\.[jt]s$|\/src\/http\//,
  },
  {
    stage: 'normalise and enrich',
    fn: /normalizeCapturedEvent|enrich|geoip|personPropertiesFromEvent|elementsChain/i,
  },
  {
    stage: 'normalise and enrich',
    url: /normalizeCapturedEvent|personPropertiesFromEvent|elementsChain|enrich|geoip/i,
  },
  { stage: 'persons', url: /\/projections\/persons\/|personDistinctId/i, fn: /personDistinctId/i },
  {
    stage: 'ClickHouse insert',
    url: /\/projections\/events\/|\/src\/runtime\/(clickhouse|chdb)|\/src\/processing\/(clickhouse\w*|logInClickHouse|logTransfer)\.[jt]s$/,
  },
  { stage: 'durable append', url: /\/src\/eventStore\// },
];
const LIBRARY_RULES: Rule[] = [
  {
    stage: 'durable append',
    url: /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[\w-]+)\//,
  },
  { stage: 'ClickHouse insert', url: /\/node_modules\/(@clickhouse\/|chdb)/ },
  {
    stage: 'receive and parse',
    url: /\/node_modules\/(fastify|@fastify\/|find-my-way|secure-json-parse|avvio|fast-json-stringify|light-my-request)|^node:(_http_|http|net|internal\/(http|stream_base|streams|net))/,
  },
];

const matches = (rules: Rule[], f: Frame) =>
  rules.find(
    (r) => (r.url ? r.url.test(f.url) : false) || (r.fn ? r.fn.test(f.functionName) : false),
  )?.stage;

export function classifyStack(stack: Frame[], isOurs: (url: string) => boolean): Stage {
  const leaf = stack[0];
  if (leaf?.functionName === '(garbage collector)') return 'GC';
  if (leaf?.functionName === '(idle)') return 'idle';
  let library: Stage | undefined;
  let seenOurs = false;
  for (const frame of stack) {
    if (isOurs(frame.url)) {
      seenOurs = true;
      const stage = matches(OUR_RULES, frame);
      if (stage) return stage;
    } else if (!seenOurs && !library) library = matches(LIBRARY_RULES, frame);
  }
  return library ?? 'the rest';
}

type ProfileNode = { id: number; callFrame: Frame; children?: number[] };
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};

const root = path.resolve(import.meta.dirname, '../..');
const isOursDefault = (url: string) =>
  url.includes(root) && !url.includes('/node_modules/') && !url.includes('/bench/');

export type StageTotals = {
  /** sampled µs by stage */
  us: Map<Stage, number>;
  /** the heaviest leaf functions (self time) classified as the rest, to refine the rules */
  restTop: { frame: string; us: number }[];
  /** busy (non-idle) sampled µs of worker threads' profiles (Node names them …<pid>.<thread id ≠ 0>…) */
  workerBusyUs: number;
};

/** Sums the profiles' samples by stage; with a window, only samples inside it (µs, monotonic). */
export function classifyProfiles(
  files: string[],
  window?: { fromUs: number; toUs: number },
  isOurs = isOursDefault,
): StageTotals {
  const us = new Map<Stage, number>(STAGES.map((s) => [s, 0]));
  const rest = new Map<string, number>();
  let workerBusyUs = 0;
  for (const file of files) {
    const isWorker = !/\.\d+\.0\.\d+\.cpuprofile$/.test(file);
    const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stageOf = new Map<number, Stage>();
    const classify = (id: number) => {
      let stage = stageOf.get(id);
      if (stage) return stage;
      const stack: Frame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
        stack.push(byId.get(at)!.callFrame);
      stage = classifyStack(stack, isOurs);
      stageOf.set(id, stage);
      return stage;
    };
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i]!;
      // a sample stands for the time until the next one
      const weight = profile.timeDeltas[i + 1] ?? 0;
      if (window && (t < window.fromUs || t > window.toUs)) continue;
      const id = profile.samples[i]!;
      const stage = classify(id);
      us.set(stage, us.get(stage)! + weight);
      if (isWorker && stage !== 'idle') workerBusyUs += weight;
      if (stage === 'the rest') {
        const f = byId.get(id)!.callFrame;
        const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/node_modules\//, '').replace(root, '')}`;
        rest.set(key, (rest.get(key) ?? 0) + weight);
      }
    }
  }
  const restTop = [...rest]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([frame, n]) => ({ frame, us: n }));
  return { us, restTop, workerBusyUs };
}

/** The stage table: sampled ms, share of the busy (non-idle) time and, given events, µs each. */
export function describeStages(totals: StageTotals, events?: number): string[] {
  const busy = STAGES.filter((s) => s !== 'idle').reduce((n, s) => n + totals.us.get(s)!, 0);
  const lines = [
    '| stage (JS threads, profile) | sampled ms (wall) | share of busy | sampled µs/event (wall) |',
    '|---|---|---|---|',
  ];
  for (const s of STAGES) {
    const v = totals.us.get(s)!;
    const share = s === 'idle' ? '' : `${((100 * v) / busy).toFixed(1)} %`;
    const per = events ? (v / events).toFixed(1) : '';
    lines.push(`| ${s} | ${(v / 1000).toFixed(0)} | ${share} | ${per} |`);
  }
  lines.push(
    `| busy in all | ${(busy / 1000).toFixed(0)} | 100 % | ${events ? (busy / events).toFixed(1) : ''} |`,
  );
  lines.push(
    '',
    `heaviest leaves in "the rest": ${totals.restTop.map((r) => `${r.frame} ${(r.us / 1000).toFixed(0)} ms`).join('; ')}`,
  );
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      events: { type: 'string' },
      'from-us': { type: 'string' },
      'to-us': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) {
    console.log(`profileStages — issue #27's ingestion stages in saved V8 CPU profiles
usage: npx tsx bench/support/profileStages.ts [--events N] [--from-us T --to-us T] FILE.cpuprofile…
  FILE…      profiles of one run (node --cpu-prof writes one a thread); their samples are summed
  --events   events acknowledged in the profiled time: adds µs an event by stage
  --from-us, --to-us  only samples in this window (µs of the monotonic clock, as the profile's startTime)`);
    process.exit(values.help ? 0 : 1);
  }
  const window =
    values['from-us'] && values['to-us']
      ? { fromUs: Number(values['from-us']), toUs: Number(values['to-us']) }
      : undefined;
  const totals = classifyProfiles(positionals, window);
  console.log(describeStages(totals, values.events ? Number(values.events) : undefined).join('\n'));
}
