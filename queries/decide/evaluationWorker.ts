/**
 * A flag evaluation thread: /decide's pure passes and the answer's JSON, for the jobs the main
 * thread sends in batches. A first pass (the request's properties only) that needs stored data
 * answers what it needs; the main thread, which owns the database connections, loads it and sends
 * the job again with it for the complete pass.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { evaluateFlags } from '../../projections/featureFlags/evaluation/evaluateFlags.ts';
import {
  completedContext,
  mergeNeeds,
  requestContext,
  settle,
} from '../../projections/featureFlags/flagEvaluationService.ts';
import { answerJson, type FlagMeta } from './decideResponse.ts';
import type {
  Answer,
  AnswersMessage,
  DefinitionsMessage,
  EvaluateMessage,
  Job,
  WorkerData,
} from './evaluationProtocol.ts';

const CHUNK = 4;
/** longest run of jobs before new messages are read (ms) */
const SLICE_MS = 5;
const { maxProjects, withOverridesStore, runMs } = (workerData as { data: WorkerData }).data;
type Held = Omit<DefinitionsMessage, 'type' | 'meta' | 'staticCohortIds'> & {
  meta: ReadonlyMap<string, FlagMeta>;
  staticCohortIds: ReadonlySet<string>;
};
/** projectId → its definitions, least recently used first (bounded like the main cache) */
const projects = new Map<number, Held>();

function hold(m: DefinitionsMessage) {
  projects.delete(m.projectId);
  projects.set(m.projectId, {
    ...m,
    meta: new Map(m.meta),
    staticCohortIds: new Set(m.staticCohortIds),
  });
  if (projects.size > maxProjects) projects.delete(projects.keys().next().value!);
}

function answer(job: Job): Answer {
  try {
    return evaluate(job);
  } catch {
    // The main thread evaluates it again and answers (errors included) as it always does.
    return { id: job.id, fallback: 'failed' };
  }
}

function evaluate(job: Job): Answer {
  const project = projects.get(job.req.projectId);
  if (!project || project.version !== job.version) return { id: job.id, fallback: 'unknown' };
  const now = new Date(job.nowMs);
  const base = requestContext(job.req, project, withOverridesStore);
  const evaluations = evaluateFlags(
    project.flags,
    job.stored ? completedContext(base, job.req, job.stored) : base,
    {
      now: () => now,
      ...(job.req.keys ? { keys: job.req.keys } : {}),
      // The request's deadline, and a share of it once started: a job queued behind a heavy one
      // still gets its own time (jobs of several projects take turns, see drain).
      deadlineMs: Math.min(job.req.deadlineMs ?? Infinity, Date.now() + runMs),
    },
  );
  // A complete pass leaves nothing to load: settle makes anything undecided an error.
  const needs = job.stored ? undefined : mergeNeeds(evaluations);
  if (needs) return { id: job.id, needs };
  return {
    id: job.id,
    json: answerJson(job.format, { ...settle(evaluations), meta: project.meta }),
  };
}

/** projectId → its jobs not yet run; the Map's order is the round-robin's */
const queues = new Map<number, Job[]>();
let draining = false;

/**
 * Runs the queued jobs one per project in turn, and yields to the event loop every `SLICE_MS`
 * so that jobs sent meanwhile (another project's) join the round: a project's burst of heavy
 * requests then delays another project's request by about one job (itself bounded by the
 * request's deadline), not by the whole burst.
 */
function drain() {
  draining = false;
  const started = Date.now();
  let answers: Answer[] = [];
  while (queues.size > 0) {
    const [projectId, jobs] = queues.entries().next().value!;
    const job = jobs.shift()!;
    queues.delete(projectId);
    if (jobs.length > 0) queues.set(projectId, jobs);
    answers.push(answer(job));
    // Answers go back in small groups, so the main thread writes the first while later ones are
    // still being evaluated (one message per batch left both threads idle in turn).
    if (answers.length >= CHUNK) {
      parentPort!.postMessage({ type: 'answers', answers } satisfies AnswersMessage);
      answers = [];
    }
    if (Date.now() - started >= SLICE_MS) break;
  }
  if (answers.length > 0)
    parentPort!.postMessage({ type: 'answers', answers } satisfies AnswersMessage);
  if (queues.size > 0) schedule();
}

function schedule() {
  if (draining) return;
  draining = true;
  setImmediate(drain);
}

parentPort!.on('message', (m: DefinitionsMessage | EvaluateMessage) => {
  if (m.type === 'definitions') return hold(m);
  for (const job of m.jobs) {
    const queue = queues.get(job.req.projectId);
    if (queue) queue.push(job);
    else queues.set(job.req.projectId, [job]);
  }
  schedule();
});
